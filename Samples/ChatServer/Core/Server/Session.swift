import Foundation
import Mailbox

/// One actor per connection: the client's session. It decodes what the client sends
/// (`SessionInput`), runs its commands one at a time, each by its family's handler
/// (`Session+<Family>.swift`), keeps the client's identity, nick and channel memberships, and
/// answers on the client's connection.
///
/// Its life is a `SessionStateMachine`: every message becomes an event of the machine, and the
/// action the machine returns is performed here (`perform(_:)`). Flood control is a
/// `FloodControl` value it asks before each command.
///
/// Requests that concern others go to the actor that owns the answer: nick claims, private
/// messages and look-ups to the nick registry, everything about a channel to the channel's actor
/// (directly when the client is a member, through the directory otherwise). Those actors answer
/// the client on its connection themselves, then its session through the request's `ReplyTo`;
/// the session holds the client's further commands, in order, until they have (see
/// `SessionStateMachine.Wait`), and while a nick claim is on its way.
///
/// A session that fails (a bug in a command) is stopped by supervision; its `postStop` still
/// runs: the client gets `ERROR`, its channels see its `QUIT` once, its nick is freed.
final class Session: AbstractBehavior<SessionMessage> {
    // Internal, not private: the command families' handlers are extensions in their own files.
    // Everything here is touched only by the session's actor.
    let server: ServerContext
    let connection: any ClientConnection
    let gate: InputGate
    let registry: ActorRef<RegistryMessage>
    let directory: ActorRef<DirectoryMessage>
    var configuration: ChatServerConfiguration { server.configuration }
    var replies: Replies { server.replies }

    /// Where the session is in its life, and what holds the client's next command.
    var machine: SessionStateMachine
    /// The client's lines, decoded, until they run.
    private var input = SessionInput()
    private var flood: FloodControl
    /// The client's record as the other actors see it; its nick is `*` until one is accepted.
    var identity: ClientIdentity
    /// Folded name → the channel's display name and actor.
    var channels: [String: (name: String, ref: ActorRef<ChannelMessage>)] = [:]

    /// The keys of the session's timers.
    enum Timers {
        static let registration: TimerKey = "registration"
        static let keepAlive: TimerKey = "keepAlive"
        static let pingTimeout: TimerKey = "pingTimeout"
        static let flood: TimerKey = "flood"
        static let answer: TimerKey = "answer"
    }

    /// How long an answer (or a nick claim) may take: an actor that stops while answering must
    /// not wedge the client.
    static let answerTimeout: Duration = .seconds(5)

    init(context: ActorContext<SessionMessage>, server: ServerContext, connection: any ClientConnection, gate: InputGate,
         registry: ActorRef<RegistryMessage>, directory: ActorRef<DirectoryMessage>) {
        self.server = server
        self.connection = connection
        self.gate = gate
        self.registry = registry
        self.directory = directory
        let configuration = server.configuration
        let now = context.scheduler.currentDate
        machine = SessionStateMachine(at: now, password: configuration.password,
                                      pingInterval: configuration.pingInterval, pingTimeout: configuration.pingTimeout)
        flood = FloodControl(cost: configuration.floodCost, burst: configuration.floodBurst, at: now)
        var host = connection.peerHost
        if host.hasPrefix(":") { host = "0" + host }       // "::1" would read as a trailing parameter
        identity = ClientIdentity(id: connection.id, nick: "*", user: "", host: host, realName: "",
                                  session: context.myself, connection: connection)
        super.init(context: context)
        context.timers.startSingleTimer(key: Timers.registration, message: .registrationTimedOut, delay: configuration.registrationTimeout)
    }

    static func behavior(server: ServerContext, connection: any ClientConnection, gate: InputGate,
                         registry: ActorRef<RegistryMessage>, directory: ActorRef<DirectoryMessage>) -> Behavior<SessionMessage> {
        Behavior<SessionMessage>.supervise(.object { context in
            Session(context: context, server: server, connection: connection, gate: gate, registry: registry, directory: directory)
        }).onFailure(.stop)
    }

    // MARK: Messages

    override func receive(_ message: SessionMessage) throws -> Behavior<SessionMessage> {
        do {
            try handle(message)
        } catch {
            // A command failed: supervision stops the session, and `postStop` tells why.
            perform(machine.ended(.internalError, connectionGone: false))
            throw error
        }
        return machine.isRunning ? .same : .stopped
    }

    override func receiveLifecycle(_ event: LifecycleEvent) throws -> Behavior<SessionMessage> {
        guard case .postStop = event else { return .unhandled }
        perform(machine.stopped())
        return .same
    }

    private func handle(_ message: SessionMessage) throws {
        switch message {
        case let .received(bytes):
            perform(machine.clientSpoke(at: now))
            if !input.append(bytes) {
                perform(machine.ended(.inputLineTooLong, connectionGone: false))
            }
            gate.handled(bytes.count)
            try runHeldCommands()
        case let .connectionClosed(reason):
            let ending: SessionStateMachine.Ending
            switch reason {
            case .peerClosed, .closedLocally:
                ending = .connectionClosed
            case let .failed(error):
                ending = .readFailed("\(error)")
            case .sendQueueExceeded:
                server.publish(.sendQueueExceeded(id: identity.id, nick: machine.isRegistered ? identity.nick : nil))
                ending = .sendQueueExceeded
            }
            perform(machine.ended(ending, connectionGone: true))
        case .registrationTimedOut:
            perform(machine.registrationTimerFired())
        case .keepAlive:
            perform(machine.keepAliveTimerFired(at: now))
        case .pingTimedOut:
            perform(machine.pingTimerFired())
        case .floodRelease:
            flood.released()
            try runHeldCommands()
        case let .nickResult(nick, accepted):
            try performAndResume(machine.nickClaimAnswered(nick, accepted: accepted))
        case let .joinedChannel(key, name, channel):
            channels[key] = (name, channel)
        case let .leftChannel(key):
            channels.removeValue(forKey: key)
        case let .answered(kind):
            try performAndResume(machine.answerArrived(kind))
        case .answerTimedOut:
            try performAndResume(machine.answerTimerFired())
        case let .killed(by, reason):
            perform(machine.ended(.killed(by: by, reason: reason), connectionGone: false))
        case .serverShutdown:
            perform(machine.ended(.serverShutdown, connectionGone: false))
        }
    }

    // MARK: Actions

    /// Performs what the state machine decided, except running the held commands
    /// (`performAndResume(_:)` does that too).
    func perform(_ action: SessionStateMachine.Action) {
        switch action {
        case .none, .stop:
            // `.stop`: `receive` returns `.stopped` once the message is handled.
            break
        case .cancelPingTimeout:
            context.timers.cancel(key: Timers.pingTimeout)
        case .sendPing:
            connection.send(IRCMessage(command: "PING", params: [configuration.serverName]).serialized(alwaysTrailing: true))
            context.timers.startSingleTimer(key: Timers.pingTimeout, message: .pingTimedOut, delay: configuration.pingTimeout)
        case let .finish(closing):
            finish(closing)
        case .startAnswerTimer:
            context.timers.startSingleTimer(key: Timers.answer, message: .answerTimedOut, delay: Self.answerTimeout)
        case let .registration(step):
            registrationStepped(step)
        case let .nickSettled(settlement):
            context.timers.cancel(key: Timers.answer)
            nickClaimSettled(settlement)
        case let .runHeldCommands(cancellingAnswerTimer):
            if cancellingAnswerTimer { context.timers.cancel(key: Timers.answer) }
        }
    }

    /// Performs `action`, then runs the commands it releases, if any.
    private func performAndResume(_ action: SessionStateMachine.Action) throws {
        perform(action)
        switch action {
        case .nickSettled, .runHeldCommands: try runHeldCommands()
        default: break
        }
    }

    // MARK: Running commands

    /// Runs the commands waiting, in order, while nothing holds them (the state machine's wait,
    /// flood control).
    private func runHeldCommands() throws {
        commands: while let item = input.first {
            switch machine.admission {
            case .all: break
            case .messagesOnly: if !item.isMessage { break commands }
            case .nothing: break commands
            }
            if configuration.floodControl, case let .hold(releaseAfter) = flood.admit(at: now) {
                if let releaseAfter {
                    context.timers.startSingleTimer(key: Timers.flood, message: .floodRelease, delay: releaseAfter)
                }
                break commands
            }
            input.removeFirst()
            switch item {
            case let .message(message, command):
                try server.checkFault(message.command)
                run(message, command)
            case .tooLong:
                send(Numeric.inputTooLong, "Input line was too long")
            case let .malformed(line):
                // A line with only a prefix, or NUL bytes, is dropped; a malformed command is unknown.
                let words = line.split(separator: UInt8(ascii: " ")).drop { $0.first == UInt8(ascii: ":") || $0.first == UInt8(ascii: "@") }
                if let command = words.first, !command.contains(0) {
                    send(Numeric.unknownCommand, String(decoding: command.prefix(32), as: UTF8.self), "Unknown command")
                }
            }
        }
        input.compact()
        gate.hold(input.backlog > 32)
    }

    /// Runs one command by its family's handler.
    private func run(_ message: IRCMessage, _ command: SessionCommand?) {
        guard let command else { return send(Numeric.unknownCommand, message.command, "Unknown command") }
        if command.needsRegistration {
            guard machine.isRegistered else { return send(Numeric.notRegistered, "You have not registered") }
            if let split = command.splitByTarget(message, maxTargets: configuration.maxTargets) {
                return input.prepend(split)
            }
        }
        let params = message.params
        switch command {
        case let .registration(command): runRegistration(command, params)
        case let .connection(command): runConnection(command, params)
        case let .channel(command): runChannel(command, params)
        case let .messaging(command): runMessaging(command, params)
        case let .query(command): runQuery(command, params)
        case let .modes(command): runModes(command, params)
        case let .administration(command): runAdministration(command, params)
        }
    }

    // MARK: Requests

    /// The reply-to of a request about to be sent: the session waits for its answer before it
    /// runs the client's next command (for a PRIVMSG's, only before commands other than PRIVMSG
    /// and NOTICE).
    func expectAnswer(_ kind: ReplyTo.Kind) -> ReplyTo {
        perform(machine.answerExpected(kind))
        return ReplyTo(session: context.myself, kind: kind)
    }

    /// Sends a request to the registry.
    func ask(registry request: RegistryRequest, _ kind: ReplyTo.Kind = .command) {
        registry.tell(.request(request, from: identity, replyTo: expectAnswer(kind)))
    }

    /// Sends a request to a channel: straight to its actor when the client is a member, through
    /// the directory otherwise (which sends `ifMissing` when there is no such channel).
    func ask(channel name: String, _ request: ChannelRequest, ifMissing: [UInt8]) {
        let replyTo = expectAnswer(request.answerKind)
        if let channel = channels[IRCCaseMapping.fold(name)] {
            channel.ref.tell(.request(request, from: identity, replyTo: replyTo))
        } else {
            directory.tell(.request(.channel(name: name, request, ifMissing: ifMissing), from: identity, replyTo: replyTo))
        }
    }

    /// The client's record changed (away, modes): the registry and its channels get the new one.
    func identityChanged() {
        registry.tell(.update(identity))
        for (_, channel) in channels { channel.ref.tell(.memberUpdated(identity)) }
    }

    // MARK: Ending

    /// Runs once, in `postStop`: the channels see the QUIT (each peer once), the nick is freed, the
    /// client gets `ERROR` and its connection is closed.
    private func finish(_ closing: SessionStateMachine.Closing) {
        let reason = closing.ending.reason
        if closing.wasRegistered && closing.ending.broadcastsQuit && !channels.isEmpty {
            let line = IRCMessage(prefix: identity.prefix, command: "QUIT", params: [reason]).serialized(alwaysTrailing: true)
            let once = DeliverOnce(excluding: [identity.id])
            for (_, channel) in channels { channel.ref.tell(.quit(id: identity.id, line: line, once: once)) }
        }
        channels.removeAll()
        if closing.wasRegistered {
            // The other nodes (cluster) show the QUIT in the channels they share with the client.
            server.cluster?.broadcast(.quit(id: identity.id, reason: reason))
        }
        registry.tell(.release(id: identity.id))
        if closing.wasRegistered {
            server.counters.users.add(-1, ordering: .relaxed)
            if identity.isInvisible { server.counters.invisibleUsers.add(-1, ordering: .relaxed) }
            if identity.isOperator { server.counters.operators.add(-1, ordering: .relaxed) }
        }
        if !closing.connectionGone {
            let text = closing.ending.errorText ?? "Closing Link: \(identity.host) (\(reason))"
            connection.closeGracefully(final: Replies.error(text))
        }
        server.publish(.disconnected(id: identity.id, nick: closing.wasRegistered ? identity.nick : nil, reason: reason))
    }

    // MARK: Helpers

    var now: Date { context.scheduler.currentDate }

    func send(_ code: String, _ params: String...) {
        connection.send(replies.numeric(code, identity.nick, params: params))
    }

    func send(_ code: String, params: [String]) {
        connection.send(replies.numeric(code, identity.nick, params: params))
    }

    func needMoreParams(_ command: String) {
        send(Numeric.needMoreParams, command, "Not enough parameters")
    }

    func noSuchChannel(_ name: String) -> [UInt8] {
        replies.numeric(Numeric.noSuchChannel, identity.nick, name, "No such channel")
    }
}
