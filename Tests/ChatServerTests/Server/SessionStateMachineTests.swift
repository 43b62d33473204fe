import Foundation
import Testing
@testable import ChatServerCore

/// The session's state machine alone, without actors: every event in every state, the legal ones
/// checked for the action and the next state, the illegal ones proven to crash (exit tests).
@Suite("Session state machine")
struct SessionStateMachineTests {
    /// The clock the fixtures are built at.
    static let start = Date(timeIntervalSince1970: 1_000_000)

    /// A state reached by real events. Every machine asks for the password "sesame", pings after
    /// 60 s of silence and cuts after 30 s more.
    enum Fixture: String, CaseIterable, Codable, Sendable {
        case registering
        /// USER and the right password given.
        case registeringWithUser
        /// CAP LS, a wrong password, USER and an accepted nick: only CAP END is missing.
        case registeringNegotiating
        /// A claim of "bob" on its way, nothing else given.
        case registeringClaimingNick
        /// USER and the right password given, a claim of "bob" on its way: its acceptance completes registration.
        case registeringWithUserClaimingNick
        case registered
        /// A PING is out.
        case registeredAwaitingPong
        /// One command's answer awaited.
        case registeredAwaitingAnswer
        /// Two PRIVMSGs' answers awaited.
        case registeredAwaitingMessageAnswers
        /// Registered as "alice", a claim of "bob" on its way.
        case registeredClaimingNick
        /// Registered, then QUIT.
        case closing
        /// Registered, QUIT, then `postStop`.
        case closed

        func make() -> SessionStateMachine {
            var machine = SessionStateMachine(at: SessionStateMachineTests.start, password: "sesame",
                                              pingInterval: .seconds(60), pingTimeout: .seconds(30))
            func register() {
                _ = machine.passwordGiven("sesame")
                _ = machine.userGiven()
                _ = machine.nickClaimSent("alice")
                _ = machine.nickClaimAnswered("alice", accepted: true)
            }
            switch self {
            case .registering:
                break
            case .registeringWithUser:
                _ = machine.passwordGiven("sesame")
                _ = machine.userGiven()
            case .registeringNegotiating:
                _ = machine.capabilitiesRequested()
                _ = machine.passwordGiven("nope")
                _ = machine.userGiven()
                _ = machine.nickClaimSent("alice")
                _ = machine.nickClaimAnswered("alice", accepted: true)
            case .registeringClaimingNick:
                _ = machine.nickClaimSent("bob")
            case .registeringWithUserClaimingNick:
                _ = machine.passwordGiven("sesame")
                _ = machine.userGiven()
                _ = machine.nickClaimSent("bob")
            case .registered:
                register()
            case .registeredAwaitingPong:
                register()
                _ = machine.keepAliveTimerFired(at: SessionStateMachineTests.start.addingTimeInterval(60))
            case .registeredAwaitingAnswer:
                register()
                _ = machine.answerExpected(.command)
            case .registeredAwaitingMessageAnswers:
                register()
                _ = machine.answerExpected(.message)
                _ = machine.answerExpected(.message)
            case .registeredClaimingNick:
                register()
                _ = machine.nickClaimSent("bob")
            case .closing:
                register()
                _ = machine.ended(.quit("bye"), connectionGone: false)
            case .closed:
                register()
                _ = machine.ended(.quit("bye"), connectionGone: false)
                _ = machine.stopped()
            }
            return machine
        }

        /// The description of the fixture's own state, for events that leave it unchanged.
        var unchangedState: String {
            switch self {
            case .registering: "registering() / none"
            case .registeringWithUser: "registering(user, pass sesame) / none"
            case .registeringNegotiating: "registering(nick, user, pass nope, cap) / none"
            case .registeringClaimingNick: "registering() / nickClaim(bob)"
            case .registeringWithUserClaimingNick: "registering(user, pass sesame) / nickClaim(bob)"
            case .registered: "registered(listening) / none"
            case .registeredAwaitingPong: "registered(awaitingPong) / none"
            case .registeredAwaitingAnswer: "registered(listening) / answers(1)"
            case .registeredAwaitingMessageAnswers: "registered(listening) / messageAnswers(2)"
            case .registeredClaimingNick: "registered(listening) / nickClaim(bob)"
            case .closing: "closing(Quit: bye, registered, connection open) / none"
            case .closed: "closed / none"
            }
        }

        var isRegistering: Bool { rawValue.hasPrefix("registering") }
        var isRegistered: Bool { rawValue.hasPrefix("registered") }
        var isRunning: Bool { isRegistering || isRegistered }
        /// The wait part of the fixture's state.
        var wait: String { String(unchangedState.split(separator: " / ").last!) }
    }

    /// Every event the machine takes, with the facts the session passes along.
    enum Event: String, CaseIterable, Codable, Sendable {
        case clientSpoke
        /// The keep-alive timer, 120 s after the client last spoke.
        case keepAliveTimerFiredAfterSilence
        /// The keep-alive timer, 30 s after the client last spoke.
        case keepAliveTimerFiredEarly
        case pingTimerFired
        case registrationTimerFired
        case connectionClosed
        case killed
        case stopped
        case capabilitiesRequested
        case capabilitiesEnded
        case passwordGiven
        case userGiven
        case nickClaimSent
        case nickClaimAccepted
        case nickClaimRefused
        /// The answer to a claim no longer awaited (its wait timed out).
        case staleNickClaimAnswered
        case commandAnswerExpected
        case messageAnswerExpected
        case commandAnswered
        case messageAnswered
        case answerTimerFired

        func apply(to machine: inout SessionStateMachine) -> SessionStateMachine.Action {
            let start = SessionStateMachineTests.start
            switch self {
            case .clientSpoke: return machine.clientSpoke(at: start.addingTimeInterval(1))
            case .keepAliveTimerFiredAfterSilence: return machine.keepAliveTimerFired(at: start.addingTimeInterval(120))
            case .keepAliveTimerFiredEarly: return machine.keepAliveTimerFired(at: start.addingTimeInterval(30))
            case .pingTimerFired: return machine.pingTimerFired()
            case .registrationTimerFired: return machine.registrationTimerFired()
            case .connectionClosed: return machine.ended(.connectionClosed, connectionGone: true)
            case .killed: return machine.ended(.killed(by: "oper", reason: "spam"), connectionGone: false)
            case .stopped: return machine.stopped()
            case .capabilitiesRequested: return machine.capabilitiesRequested()
            case .capabilitiesEnded: return machine.capabilitiesEnded()
            case .passwordGiven: return machine.passwordGiven("sesame")
            case .userGiven: return machine.userGiven()
            case .nickClaimSent: return machine.nickClaimSent("bob")
            case .nickClaimAccepted: return machine.nickClaimAnswered("bob", accepted: true)
            case .nickClaimRefused: return machine.nickClaimAnswered("bob", accepted: false)
            case .staleNickClaimAnswered: return machine.nickClaimAnswered("zed", accepted: true)
            case .commandAnswerExpected: return machine.answerExpected(.command)
            case .messageAnswerExpected: return machine.answerExpected(.message)
            case .commandAnswered: return machine.answerArrived(.command)
            case .messageAnswered: return machine.answerArrived(.message)
            case .answerTimerFired: return machine.answerTimerFired()
            }
        }
    }

    // MARK: The table

    /// The specification: for every state and every event, what must happen, as
    /// "action → next state" (described), or `crash` (`nil`).
    static func expected(_ fixture: Fixture, _ event: Event) -> String? {
        let crash: String? = nil
        func go(_ action: String, _ state: String) -> String? { "\(action) → \(state)" }
        func unchanged(_ action: String = "none") -> String? { go(action, fixture.unchangedState) }
        /// The fixture's state with another wait.
        func waiting(_ wait: String) -> String {
            String(fixture.unchangedState.split(separator: " / ").first!) + " / " + wait
        }
        let registered = fixture.isRegistered ? "registered" : "unregistered"
        let claiming: Set<Fixture> = [.registeringClaimingNick, .registeringWithUserClaimingNick, .registeredClaimingNick]

        // Nothing comes after `postStop`; while closing, only another ending and `postStop`.
        if fixture == .closed { return crash }
        if fixture == .closing && ![.connectionClosed, .killed, .stopped].contains(event) { return crash }

        switch event {
        // The connection and the timers.
        case .clientSpoke:
            return fixture == .registeredAwaitingPong ? go("cancelPingTimeout", "registered(listening) / none") : unchanged()
        case .keepAliveTimerFiredAfterSilence:
            // The keep-alive runs only once registered.
            guard fixture.isRegistered else { return crash }
            return fixture == .registeredAwaitingPong ? unchanged() : go("sendPing", "registered(awaitingPong) / \(fixture.wait)")
        case .keepAliveTimerFiredEarly:
            return fixture.isRegistered ? unchanged() : crash
        case .pingTimerFired:
            guard fixture.isRegistered else { return crash }
            return fixture == .registeredAwaitingPong
                ? go("stop", "closing(Ping timeout: 30 seconds, registered, connection open) / none") : unchanged()
        case .registrationTimerFired:
            return fixture.isRegistering ? go("stop", "closing(Registration timed out, unregistered, connection open) / none") : unchanged()
        case .connectionClosed:
            if fixture == .closing { return go("none", "closing(Quit: bye, registered, connection gone) / none") }
            return go("stop", "closing(Connection closed, \(registered), connection gone) / none")
        case .killed:
            if fixture == .closing { return unchanged() }
            return go("stop", "closing(Killed (oper (spam)), \(registered), connection open) / none")
        case .stopped:
            if fixture == .closing { return go("finish(Quit: bye, registered, connection open)", "closed / none") }
            return go("finish(Connection closed, \(registered), connection open)", "closed / none")

        // Registration.
        case .capabilitiesRequested:
            switch fixture {
            case .registering: return go("none", "registering(cap) / none")
            case .registeringWithUser: return go("none", "registering(user, pass sesame, cap) / none")
            case .registeringClaimingNick: return go("none", "registering(cap) / nickClaim(bob)")
            case .registeringWithUserClaimingNick: return go("none", "registering(user, pass sesame, cap) / nickClaim(bob)")
            default: return unchanged()
            }
        case .capabilitiesEnded:
            if fixture == .registeringNegotiating {
                return go("registration(refusePassword)", "closing(Bad password, unregistered, connection open) / none")
            }
            return fixture.isRegistering ? unchanged("registration(waitForMore)") : unchanged()
        case .passwordGiven:
            // Answered with 462 before the machine hears of it once registered.
            switch fixture {
            case .registering: return go("none", "registering(pass sesame) / none")
            case .registeringNegotiating: return go("none", "registering(nick, user, pass sesame, cap) / none")
            case .registeringClaimingNick: return go("none", "registering(pass sesame) / nickClaim(bob)")
            case .registeringWithUser, .registeringWithUserClaimingNick: return unchanged()
            default: return crash
            }
        case .userGiven:
            switch fixture {
            case .registering: return go("registration(waitForMore)", "registering(user) / none")
            case .registeringClaimingNick: return go("registration(waitForMore)", "registering(user) / nickClaim(bob)")
            case .registeringWithUser, .registeringNegotiating, .registeringWithUserClaimingNick: return unchanged("registration(waitForMore)")
            default: return crash
            }
        case .nickClaimSent:
            // Nothing runs while a claim or a command's answers are awaited; a NICK is no PRIVMSG.
            return fixture.wait == "none" ? go("startAnswerTimer", waiting("nickClaim(bob)")) : crash
        case .nickClaimAccepted:
            switch fixture {
            case .registeringClaimingNick: return go("nickSettled(taken(bob, then: waitForMore))", "registering(nick) / none")
            case .registeringWithUserClaimingNick: return go("nickSettled(taken(bob, then: welcome))", "registered(listening) / none")
            case .registeredClaimingNick: return go("nickSettled(changed(bob))", "registered(listening) / none")
            default: return unchanged()
            }
        case .nickClaimRefused:
            return claiming.contains(fixture) ? go("nickSettled(inUse(bob))", waiting("none")) : unchanged()
        case .staleNickClaimAnswered:
            return unchanged()

        // Answers.
        case .commandAnswerExpected:
            switch fixture.wait {
            case "none": return go("startAnswerTimer", waiting("answers(1)"))
            case "answers(1)": return go("none", waiting("answers(2)"))
            default: return crash
            }
        case .messageAnswerExpected:
            switch fixture.wait {
            case "none": return go("startAnswerTimer", waiting("messageAnswers(1)"))
            case "messageAnswers(2)": return go("none", waiting("messageAnswers(3)"))
            default: return crash
            }
        case .commandAnswered:
            // Any other is late: its wait timed out.
            return fixture == .registeredAwaitingAnswer ? go("runHeldCommands(cancellingAnswerTimer: true)", waiting("none")) : unchanged()
        case .messageAnswered:
            return fixture == .registeredAwaitingMessageAnswers ? go("none", waiting("messageAnswers(1)")) : unchanged()
        case .answerTimerFired:
            if claiming.contains(fixture) { return go("nickSettled(unavailable(bob))", waiting("none")) }
            return go("runHeldCommands(cancellingAnswerTimer: false)", waiting("none"))
        }
    }

    @Test(arguments: Fixture.allCases, Event.allCases)
    func everyEventInEveryState(_ fixture: Fixture, _ event: Event) async {
        guard let expected = Self.expected(fixture, event) else {
            await #expect(processExitsWith: .failure, "\(event) in \(fixture)") { [fixture, event] in
                var machine = fixture.make()
                _ = event.apply(to: &machine)
            }
            return
        }
        var machine = fixture.make()
        let action = event.apply(to: &machine)
        #expect("\(Self.describe(action)) → \(Self.describe(machine))" == expected, "\(event) in \(fixture)")
    }

    @Test(arguments: Fixture.allCases)
    func fixturesAreTheStatesTheyName(_ fixture: Fixture) {
        #expect(Self.describe(fixture.make()) == fixture.unchangedState)
    }

    // MARK: Properties the session relies on

    @Test func admission_followsTheWait() {
        var machine = Fixture.registered.make()
        #expect(machine.admission == .all)
        _ = machine.answerExpected(.message)
        #expect(machine.admission == .messagesOnly)
        _ = machine.answerArrived(.message)
        _ = machine.answerExpected(.command)
        #expect(machine.admission == .nothing)
        _ = machine.answerTimerFired()
        _ = machine.nickClaimSent("bob")
        #expect(machine.admission == .nothing)
        _ = machine.nickClaimAnswered("bob", accepted: false)
        #expect(machine.admission == .all)
        _ = machine.ended(.quit(nil), connectionGone: false)
        #expect(machine.admission == .nothing)
    }

    @Test func answers_areCountedDownToTheLast() {
        var machine = Fixture.registered.make()
        for _ in 0..<3 { _ = machine.answerExpected(.command) }
        #expect(Self.describe(machine.answerArrived(.command)) == "none")
        #expect(Self.describe(machine.answerArrived(.command)) == "none")
        #expect(Self.describe(machine.answerArrived(.command)) == "runHeldCommands(cancellingAnswerTimer: true)")
        #expect(machine.wait == .none)
        for _ in 0..<2 { _ = machine.answerExpected(.message) }
        #expect(Self.describe(machine.answerArrived(.message)) == "none")
        #expect(Self.describe(machine.answerArrived(.message)) == "runHeldCommands(cancellingAnswerTimer: true)")
    }

    @Test func registration_completesWhicheverComesLast_andChecksThePassword() {
        // NICK, then USER.
        var machine = SessionStateMachine(at: Self.start, password: nil, pingInterval: .seconds(60), pingTimeout: .seconds(30))
        _ = machine.nickClaimSent("alice")
        _ = machine.nickClaimAnswered("alice", accepted: true)
        #expect(Self.describe(machine.userGiven()) == "registration(welcome)")
        #expect(machine.isRegistered && machine.hasNick)
        // CAP END last, with a wrong password.
        machine = SessionStateMachine(at: Self.start, password: "sesame", pingInterval: .seconds(60), pingTimeout: .seconds(30))
        _ = machine.capabilitiesRequested()
        _ = machine.userGiven()
        _ = machine.nickClaimSent("alice")
        #expect(Self.describe(machine.nickClaimAnswered("alice", accepted: true)) == "nickSettled(taken(alice, then: waitForMore))")
        #expect(Self.describe(machine.capabilitiesEnded()) == "registration(refusePassword)")
        #expect(Self.describe(machine.stopped()) == "finish(Bad password, unregistered, connection open)")
    }

    @Test func endings_sayWhatTheClientAndItsChannelsAreTold() {
        typealias Ending = SessionStateMachine.Ending
        #expect(Ending.quit(nil).reason == "Client Quit")
        #expect(Ending.quit("bye").reason == "Quit: bye")
        #expect(Ending.readFailed("reset").reason == "Read error: reset")
        #expect(Ending.serverShutdown.errorText == "Server shutting down" && !Ending.serverShutdown.broadcastsQuit)
        #expect(!Ending.badPassword.broadcastsQuit && Ending.badPassword.errorText == nil)
        #expect(Ending.internalError.broadcastsQuit && Ending.internalError.reason == "Internal error")
    }

    // MARK: Describing

    static func describe(_ action: SessionStateMachine.Action) -> String {
        switch action {
        case .none: "none"
        case .cancelPingTimeout: "cancelPingTimeout"
        case .sendPing: "sendPing"
        case .stop: "stop"
        case let .finish(closing): "finish(\(describe(closing)))"
        case .startAnswerTimer: "startAnswerTimer"
        case let .registration(step): "registration(\(step))"
        case let .nickSettled(.inUse(nick)): "nickSettled(inUse(\(nick)))"
        case let .nickSettled(.unavailable(nick)): "nickSettled(unavailable(\(nick)))"
        case let .nickSettled(.changed(nick)): "nickSettled(changed(\(nick)))"
        case let .nickSettled(.taken(nick, step)): "nickSettled(taken(\(nick), then: \(step)))"
        case let .runHeldCommands(cancelling): "runHeldCommands(cancellingAnswerTimer: \(cancelling))"
        }
    }

    static func describe(_ closing: SessionStateMachine.Closing) -> String {
        "\(closing.ending.reason), \(closing.wasRegistered ? "registered" : "unregistered"), connection \(closing.connectionGone ? "gone" : "open")"
    }

    static func describe(_ machine: SessionStateMachine) -> String {
        let state: String
        switch machine.state {
        case let .registering(registration):
            var given: [String] = []
            if registration.hasNick { given.append("nick") }
            if registration.hasUser { given.append("user") }
            if let password = registration.password { given.append("pass \(password)") }
            if registration.negotiatingCapabilities { given.append("cap") }
            state = "registering(\(given.joined(separator: ", ")))"
        case let .registered(registered):
            state = "registered(\(registered.keepAlive))"
        case let .closing(closing):
            state = "closing(\(describe(closing)))"
        case .closed:
            state = "closed"
        }
        let wait: String
        switch machine.wait {
        case .none: wait = "none"
        case let .nickClaim(nick): wait = "nickClaim(\(nick))"
        case let .answers(count): wait = "answers(\(count))"
        case let .messageAnswers(count): wait = "messageAnswers(\(count))"
        }
        return "\(state) / \(wait)"
    }
}
