import Foundation

/// A client session's life, as a pure state machine: events in (named after what happened), an
/// action out for the session's actor to perform. It holds no reference to the actor, the
/// connection or the timers and performs nothing itself, so it is tested alone, every event in
/// every state (`SessionStateMachineTests`).
///
/// ```
///              userGiven / capabilitiesEnded / nickClaimAnswered(accepted), all given
///  registering ───────────────────────────────────────────────────────────► registered
///   │  (what was given so far)              │ …with a wrong password        (keep-alive)
///   │                                       ▼                                    │
///   └── ended (quit, timed out, …) ───► closing ◄─── ended (quit, ping timeout, killed, …)
///                                          │
///  registering / registered / closing ──stopped (postStop)──► closed
/// ```
///
/// Beside the state, `wait` says what holds the client's next command: the registry's answer to
/// a nick claim, or answers to requests (`ReplyTo`). At most one kind at a time: while a claim
/// or a command's answers are awaited nothing runs, so nothing adds another kind; while PRIVMSG
/// answers are awaited only PRIVMSGs and NOTICEs run, and they add only PRIVMSG answers.
///
/// The session stops after the message during which it began closing, so in `closing` only a
/// second ending (the first one stands; that the connection is gone is recorded) and `stopped`
/// can come, and in `closed` nothing.
/// Events that cannot come in a state are runtime bugs, caught by `preconditionFailure` naming
/// the state and the event. Events that can legitimately come late (a timer that fired after it
/// was cancelled, an answer after its wait timed out) do nothing.
///
/// Touched only by the session's actor.
struct SessionStateMachine {
    /// Where the session is in its life.
    enum State: Equatable {
        /// The client has not completed registration: what it has given so far.
        case registering(Registration)
        /// The client is registered.
        case registered(Registered)
        /// The session ends after the message being handled; its `postStop` says goodbye.
        case closing(Closing)
        /// `postStop` has run: the client was told, its channels and its nick were let go.
        case closed
    }

    /// What a registering client has given so far. Any combination is legal; registration
    /// completes as soon as a nick is accepted, USER was given and no capability negotiation is
    /// under way (nor a nick claim, see `wait`).
    struct Registration: Equatable {
        /// The registry accepted a nick (the session's identity carries it).
        var hasNick = false
        /// USER was given (the session's identity carries the user name and the real name).
        var hasUser = false
        /// The last PASS given.
        var password: String?
        /// CAP LS or REQ came, and no CAP END yet.
        var negotiatingCapabilities = false
    }

    /// A registered client.
    struct Registered: Equatable {
        var keepAlive = KeepAlive.listening
    }

    /// The keep-alive of a registered client.
    enum KeepAlive: Equatable {
        /// Nothing is awaited; the keep-alive timer checks how long the client has been silent.
        case listening
        /// A PING was sent for the client's silence; the ping time-out runs until it says anything.
        case awaitingPong
    }

    /// Why a session ends, and what the client and its channels are told.
    enum Ending: Equatable {
        /// QUIT, with the client's message if it gave one.
        case quit(String?)
        /// The client closed its connection (or the session was stopped from outside).
        case connectionClosed
        case readFailed(String)
        case sendQueueExceeded
        case inputLineTooLong
        case registrationTimedOut
        case pingTimedOut(seconds: Int)
        case killed(by: String, reason: String)
        case badPassword
        case serverShutdown
        /// A command failed (threw): supervision stops the session.
        case internalError

        /// The QUIT message the channels see and the reason in the client's `ERROR`.
        var reason: String {
            switch self {
            case let .quit(message): message.map { "Quit: \($0)" } ?? "Client Quit"
            case .connectionClosed: "Connection closed"
            case let .readFailed(error): "Read error: \(error)"
            case .sendQueueExceeded: "SendQ exceeded"
            case .inputLineTooLong: "Input line too long"
            case .registrationTimedOut: "Registration timed out"
            case let .pingTimedOut(seconds): "Ping timeout: \(seconds) seconds"
            case let .killed(by, reason): "Killed (\(by) (\(reason)))"
            case .badPassword: "Bad password"
            case .serverShutdown: "Server shutting down"
            case .internalError: "Internal error"
            }
        }

        /// The text of the client's `ERROR` line when it is not `Closing Link: <host> (<reason>)`.
        var errorText: String? {
            self == .serverShutdown ? "Server shutting down" : nil
        }

        /// Whether the client's channels see its QUIT (a server shutdown tells every client
        /// itself; a client refused for its password has no channels).
        var broadcastsQuit: Bool {
            self != .serverShutdown && self != .badPassword
        }
    }

    /// How the session ends.
    struct Closing: Equatable {
        var ending: Ending
        /// The client had completed registration: its channels see its QUIT, the counters of
        /// users drop, the disconnection names its nick.
        var wasRegistered: Bool
        /// The connection is already gone: no `ERROR`, nothing to close.
        var connectionGone: Bool
    }

    /// What holds the client's next command, besides flood control.
    enum Wait: Equatable {
        /// Nothing: commands run.
        case none
        /// The registry's answer to a claim of this nick: nothing runs.
        case nickClaim(String)
        /// Answers to this many requests of commands other than PRIVMSG: nothing runs.
        case answers(Int)
        /// Answers to this many PRIVMSGs: only PRIVMSGs and NOTICEs run.
        case messageAnswers(Int)
    }

    /// Which commands may run now.
    enum Admission: Equatable {
        case all
        case messagesOnly
        case nothing
    }

    /// How a nick claim ended.
    enum NickSettlement: Equatable {
        /// Refused: another client holds it (433).
        case inUse(String)
        /// The registry did not answer in time (433, "try again").
        case unavailable(String)
        /// A registered client's new nick: tell it, its channels and the registry.
        case changed(String)
        /// A registering client's nick; registration then takes `step`.
        case taken(String, then: RegistrationStep)
    }

    /// What registration does after an event that gave it something.
    enum RegistrationStep: Equatable {
        /// Something is still missing.
        case waitForMore
        /// Complete: welcome the client (state `registered`).
        case welcome
        /// Complete, but the password does not match: 464, then the session ends (state
        /// `closing(badPassword)`).
        case refusePassword
    }

    /// What the session's actor must do after an event.
    enum Action: Equatable {
        /// Nothing.
        case none
        /// The client spoke while a PING was out: cancel the ping time-out.
        case cancelPingTimeout
        /// Send PING and start the ping time-out.
        case sendPing
        /// The session ends: stop after the message being handled (state `closing`).
        case stop
        /// `postStop`: tell the channels, free the nick, say goodbye to the client (state `closed`).
        case finish(Closing)
        /// Start the answer timer (a request or a nick claim is now awaited).
        case startAnswerTimer
        /// Registration took a step (USER, CAP END).
        case registration(RegistrationStep)
        /// A nick claim ended: cancel the answer timer, do what `settlement` says, then run the
        /// commands held meanwhile.
        case nickSettled(NickSettlement)
        /// Run the commands held meanwhile (a wait ended or was abandoned), after cancelling the
        /// answer timer when `cancellingAnswerTimer`.
        case runHeldCommands(cancellingAnswerTimer: Bool)
    }

    private(set) var state: State = .registering(Registration())
    private(set) var wait: Wait = .none
    /// When the client last sent anything.
    private(set) var lastHeard: Date
    /// The server's password (`nil`: none is asked).
    private let password: String?
    /// A client silent this long is pinged (give or take a thousandth, for timer rounding).
    private let pingInterval: TimeInterval
    /// A pinged client silent this long is cut, and told so in whole seconds.
    private let pingTimeoutSeconds: Int

    init(at now: Date, password: String?, pingInterval: Duration, pingTimeout: Duration) {
        lastHeard = now
        self.password = password
        self.pingInterval = pingInterval.timeInterval
        pingTimeoutSeconds = Int(pingTimeout.timeInterval)
    }

    // MARK: Queries

    /// Registration is complete (and the session is not ending).
    var isRegistered: Bool {
        if case .registered = state { return true }
        return false
    }

    /// A registered client, or a registering one whose nick was accepted.
    var hasNick: Bool {
        switch state {
        case let .registering(registration): registration.hasNick
        case .registered: true
        case .closing, .closed: false
        }
    }

    /// The session is registering or registered: not ending.
    var isRunning: Bool {
        switch state {
        case .registering, .registered: true
        case .closing, .closed: false
        }
    }

    /// Which of the client's commands may run now (flood control aside).
    var admission: Admission {
        guard isRunning else { return .nothing }
        switch wait {
        case .none: return .all
        case .messageAnswers: return .messagesOnly
        case .nickClaim, .answers: return .nothing
        }
    }

    // MARK: Events: the connection and the timers

    /// The client sent bytes.
    mutating func clientSpoke(at now: Date) -> Action {
        switch state {
        case .registering:
            lastHeard = now
            return .none
        case var .registered(registered):
            lastHeard = now
            guard registered.keepAlive == .awaitingPong else { return .none }
            registered.keepAlive = .listening
            state = .registered(registered)
            return .cancelPingTimeout
        case .closing, .closed:
            illegal("clientSpoke")
        }
    }

    /// The keep-alive timer fired (it runs only once registered).
    mutating func keepAliveTimerFired(at now: Date) -> Action {
        guard case var .registered(registered) = state else { illegal("keepAliveTimerFired") }
        guard registered.keepAlive == .listening, now.timeIntervalSince(lastHeard) >= pingInterval * 0.999 else { return .none }
        registered.keepAlive = .awaitingPong
        state = .registered(registered)
        return .sendPing
    }

    /// The ping time-out fired (it runs only once registered).
    mutating func pingTimerFired() -> Action {
        guard case let .registered(registered) = state else { illegal("pingTimerFired") }
        // Listening: the client spoke as the timer fired.
        guard registered.keepAlive == .awaitingPong else { return .none }
        return end(.pingTimedOut(seconds: pingTimeoutSeconds), connectionGone: false)
    }

    /// The registration time-out fired.
    mutating func registrationTimerFired() -> Action {
        switch state {
        case .registering: end(.registrationTimedOut, connectionGone: false)
        case .registered: .none
        case .closing, .closed: illegal("registrationTimerFired")
        }
    }

    /// The session must end (`connectionGone`: the connection ended first). The first ending
    /// stands; a later one only records that the connection is gone.
    mutating func ended(_ ending: Ending, connectionGone: Bool) -> Action {
        switch state {
        case .registering, .registered:
            return end(ending, connectionGone: connectionGone)
        case var .closing(closing):
            if connectionGone && !closing.connectionGone {
                closing.connectionGone = true
                state = .closing(closing)
            }
            return .none
        case .closed:
            illegal("ended(\(ending))")
        }
    }

    /// `postStop`: the actor has stopped (after closing, after a failure, or stopped from outside).
    mutating func stopped() -> Action {
        let closing: Closing
        switch state {
        case .registering: closing = Closing(ending: .connectionClosed, wasRegistered: false, connectionGone: false)
        case .registered: closing = Closing(ending: .connectionClosed, wasRegistered: true, connectionGone: false)
        case let .closing(ending): closing = ending
        case .closed: illegal("stopped")
        }
        state = .closed
        wait = .none
        return .finish(closing)
    }

    // MARK: Events: registration

    /// CAP LS or CAP REQ: a registering client's registration waits for CAP END.
    mutating func capabilitiesRequested() -> Action {
        switch state {
        case var .registering(registration):
            registration.negotiatingCapabilities = true
            state = .registering(registration)
            return .none
        case .registered:
            return .none
        case .closing, .closed:
            illegal("capabilitiesRequested")
        }
    }

    /// CAP END.
    mutating func capabilitiesEnded() -> Action {
        switch state {
        case var .registering(registration):
            registration.negotiatingCapabilities = false
            return .registration(step(registration))
        case .registered:
            return .none
        case .closing, .closed:
            illegal("capabilitiesEnded")
        }
    }

    /// PASS (answered with 462 without coming here once registered).
    mutating func passwordGiven(_ password: String) -> Action {
        guard case var .registering(registration) = state else { illegal("passwordGiven") }
        registration.password = password
        state = .registering(registration)
        return .none
    }

    /// A valid USER (answered with 462 without coming here once registered).
    mutating func userGiven() -> Action {
        guard case var .registering(registration) = state else { illegal("userGiven") }
        registration.hasUser = true
        return .registration(step(registration))
    }

    /// The session asked the registry for `nick`.
    mutating func nickClaimSent(_ nick: String) -> Action {
        guard isRunning, wait == .none else { illegal("nickClaimSent") }
        wait = .nickClaim(nick)
        return .startAnswerTimer
    }

    /// The registry answered a claim of `nick`.
    mutating func nickClaimAnswered(_ nick: String, accepted: Bool) -> Action {
        guard isRunning else { illegal("nickClaimAnswered") }
        // Not the claim awaited: its wait timed out.
        guard wait == .nickClaim(nick) else { return .none }
        wait = .none
        guard accepted else { return .nickSettled(.inUse(nick)) }
        switch state {
        case var .registering(registration):
            registration.hasNick = true
            return .nickSettled(.taken(nick, then: step(registration)))
        default:
            return .nickSettled(.changed(nick))
        }
    }

    // MARK: Events: answers

    /// The session sent a request whose answer (`ReplyTo`) of `kind` it waits for.
    mutating func answerExpected(_ kind: ReplyTo.Kind) -> Action {
        guard isRunning else { illegal("answerExpected(\(kind))") }
        switch (wait, kind) {
        case (.none, .command):
            wait = .answers(1)
            return .startAnswerTimer
        case (.none, .message):
            wait = .messageAnswers(1)
            return .startAnswerTimer
        case let (.answers(count), .command):
            wait = .answers(count + 1)
            return .none
        case let (.messageAnswers(count), .message):
            wait = .messageAnswers(count + 1)
            return .none
        default:
            // Only commands that may run send requests, and they send only their own kind.
            illegal("answerExpected(\(kind))")
        }
    }

    /// An answer of `kind` came.
    mutating func answerArrived(_ kind: ReplyTo.Kind) -> Action {
        guard isRunning else { illegal("answerArrived(\(kind))") }
        switch (wait, kind) {
        case let (.answers(count), .command):
            wait = count > 1 ? .answers(count - 1) : .none
        case let (.messageAnswers(count), .message):
            wait = count > 1 ? .messageAnswers(count - 1) : .none
        default:
            // Late: its wait timed out.
            return .none
        }
        return wait == .none ? .runHeldCommands(cancellingAnswerTimer: true) : .none
    }

    /// The answer timer fired: the actor that should have answered failed or stopped; go on.
    mutating func answerTimerFired() -> Action {
        guard isRunning else { illegal("answerTimerFired") }
        let abandoned = wait
        wait = .none
        if case let .nickClaim(nick) = abandoned { return .nickSettled(.unavailable(nick)) }
        return .runHeldCommands(cancellingAnswerTimer: false)
    }

    // MARK: Transitions

    private mutating func end(_ ending: Ending, connectionGone: Bool) -> Action {
        state = .closing(Closing(ending: ending, wasRegistered: isRegistered, connectionGone: connectionGone))
        wait = .none
        return .stop
    }

    /// Stores `registration` and completes it if nothing is missing.
    private mutating func step(_ registration: Registration) -> RegistrationStep {
        var claimingNick: Bool {
            if case .nickClaim = wait { return true }
            return false
        }
        guard registration.hasNick, registration.hasUser, !registration.negotiatingCapabilities, !claimingNick else {
            state = .registering(registration)
            return .waitForMore
        }
        if let password, registration.password != password {
            state = .closing(Closing(ending: .badPassword, wasRegistered: false, connectionGone: false))
            return .refusePassword
        }
        state = .registered(Registered())
        return .welcome
    }

    private func illegal(_ event: String) -> Never {
        preconditionFailure("session state machine: \(event) in state \(state), wait \(wait)")
    }
}
