import Foundation
import Mailbox

/// One actor per connection: the client's session. It frames and parses what the client sends,
/// runs its commands one at a time (registration, flood control), keeps the client's identity,
/// nick and channel memberships, and answers on the client's connection.
///
/// Requests that concern others go to the actor that owns the answer: nick claims, private
/// messages and look-ups to the nick registry, everything about a channel to the channel's actor
/// (directly when the client is a member, through the directory otherwise). Those actors answer
/// the client on its connection themselves, so a session never waits for them — except for a nick
/// claim, during which the session holds the client's further commands, in order.
///
/// A session that fails (a bug in a command) is stopped by supervision; its `postStop` still
/// runs: the client gets `ERROR`, its channels see its `QUIT` once, its nick is freed.
final class Session: AbstractBehavior<SessionMessage> {
    private enum Input {
        case message(IRCMessage)
        /// A line longer than 512 bytes (answered with 417).
        case tooLong
        /// A line that does not parse; answered with 421 when it names a command.
        case malformed([UInt8])

        /// A PRIVMSG or NOTICE: it need not wait for earlier PRIVMSGs' answers.
        var isMessage: Bool {
            if case let .message(message) = self { return message.command == "PRIVMSG" || message.command == "NOTICE" }
            return false
        }
    }

    /// Why the session is ending, and what the client and its channels are told.
    private struct Closing {
        var reason: String
        var errorText: String?
        var broadcast = true
    }

    private let server: ServerContext
    private let connection: any ClientConnection
    private let gate: InputGate
    private let registry: ActorRef<RegistryMessage>
    private let directory: ActorRef<DirectoryMessage>
    private var configuration: ChatServerConfiguration { server.configuration }
    private var replies: Replies { server.replies }

    private var framer = LineFramer()
    private var pending: [Input] = []
    private var pendingHead = 0
    /// A nick claim is on its way to the registry: further commands wait for its answer.
    private var claimingNick: String?
    /// Answers to the client's commands still to come from other actors (see
    /// `ChannelMessage.expectsAnswer`): further commands wait for them, so that replies keep
    /// the order of the commands.
    private var answersPending = 0
    /// Answers to PRIVMSGs still to come. Further PRIVMSGs and NOTICEs do not wait for them (a
    /// burst of messages flows), any other command does (its replies must come after theirs).
    private var messageAnswersPending = 0
    /// Flood control: the virtual time up to which the client's commands have been paid for.
    private var paidUntil: Date
    private var floodTimerArmed = false

    private var identity: ClientIdentity
    private var hasNick = false
    private var userGiven = false
    private var passwordGiven: String?
    private var negotiatingCapabilities = false
    private var registered = false
    /// Folded name → the channel's display name and actor.
    private var channels: [String: (name: String, ref: ActorRef<ChannelMessage>)] = [:]

    private var lastActivity: Date
    private var awaitingPong = false
    private var closing: Closing?
    private var connectionClosed = false
    private var finished = false
    /// True while a message is being handled: a `postStop` that finds it true follows a failure.
    private var handling = false

    init(context: ActorContext<SessionMessage>, server: ServerContext, connection: any ClientConnection, gate: InputGate,
         registry: ActorRef<RegistryMessage>, directory: ActorRef<DirectoryMessage>) {
        self.server = server
        self.connection = connection
        self.gate = gate
        self.registry = registry
        self.directory = directory
        let now = context.scheduler.currentDate
        paidUntil = now
        lastActivity = now
        var host = connection.peerHost
        if host.hasPrefix(":") { host = "0" + host }       // "::1" would read as a trailing parameter
        identity = ClientIdentity(id: connection.id, nick: "*", user: "", host: host, realName: "",
                                  session: context.myself, connection: connection)
        super.init(context: context)
        context.timers.startSingleTimer(key: "registration", message: .registrationTimedOut, delay: configuration.registrationTimeout)
    }

    static func behavior(server: ServerContext, connection: any ClientConnection, gate: InputGate,
                         registry: ActorRef<RegistryMessage>, directory: ActorRef<DirectoryMessage>) -> Behavior<SessionMessage> {
        Behavior<SessionMessage>.supervise(.object { context in
            Session(context: context, server: server, connection: connection, gate: gate, registry: registry, directory: directory)
        }).onFailure(.stop)
    }

    // MARK: Messages

    override func receive(_ message: SessionMessage) throws -> Behavior<SessionMessage> {
        handling = true
        switch message {
        case let .received(bytes):
            lastActivity = now
            if awaitingPong {
                awaitingPong = false
                context.timers.cancel(key: "pingTimeout")
            }
            frame(bytes)
            gate.handled(bytes.count)
            try drain()
        case let .connectionClosed(reason):
            connectionClosed = true
            switch reason {
            case .peerClosed: close(reason: "Connection closed")
            case let .failed(error): close(reason: "Read error: \(error)")
            case .sendQueueExceeded:
                server.publish(.sendQueueExceeded(id: identity.id, nick: registered ? identity.nick : nil))
                close(reason: "SendQ exceeded")
            case .closedLocally: close(reason: closing?.reason ?? "Connection closed")
            }
        case .registrationTimedOut:
            if !registered { close(reason: "Registration timed out") }
        case .keepAlive:
            let silence = now.timeIntervalSince(lastActivity)
            if !awaitingPong && silence >= configuration.pingInterval.timeInterval * 0.999 {
                awaitingPong = true
                connection.send(IRCMessage(command: "PING", params: [configuration.serverName]).serialized(alwaysTrailing: true))
                context.timers.startSingleTimer(key: "pingTimeout", message: .pingTimedOut, delay: configuration.pingTimeout)
            }
        case .pingTimedOut:
            if awaitingPong { close(reason: "Ping timeout: \(Int(configuration.pingTimeout.timeInterval)) seconds") }
        case .floodRelease:
            floodTimerArmed = false
            try drain()
        case let .nickResult(nick, accepted):
            guard claimingNick == nick else { break }
            claimingNick = nil
            stopAnswerTimerIfIdle()
            nickClaimAnswered(nick, accepted: accepted)
            try drain()
        case let .joinedChannel(key, name, channel):
            channels[key] = (name, channel)
        case let .leftChannel(key):
            channels.removeValue(forKey: key)
        case .answered(.command):
            answersPending = max(0, answersPending - 1)
            stopAnswerTimerIfIdle()
            try drain()
        case .answered(.message):
            messageAnswersPending = max(0, messageAnswersPending - 1)
            stopAnswerTimerIfIdle()
            if messageAnswersPending == 0 { try drain() }
        case .answerTimedOut:
            answersPending = 0
            messageAnswersPending = 0
            if let nick = claimingNick {
                claimingNick = nil
                send(Numeric.nicknameInUse, nick, "Nickname is unavailable, try again")
            }
            try drain()
        case let .killed(by, reason):
            close(reason: "Killed (\(by) (\(reason)))")
        case .serverShutdown:
            close(reason: "Server shutting down", errorText: "Server shutting down", broadcast: false)
        }
        handling = false
        return closing == nil ? .same : .stopped
    }

    override func receiveLifecycle(_ event: LifecycleEvent) throws -> Behavior<SessionMessage> {
        guard case .postStop = event else { return .unhandled }
        if handling && closing == nil {
            close(reason: "Internal error")
        }
        finish()
        return .same
    }

    // MARK: Input

    private func frame(_ bytes: [UInt8]) {
        var overflow = false
        framer.append(bytes) { output in
            switch output {
            case let .line(line):
                switch IRCMessage.parse(line) {
                case let .success(message): pending.append(.message(message))
                case .failure: pending.append(.malformed(line))
                }
            case .tooLong:
                pending.append(.tooLong)
            case .overflow:
                overflow = true
            }
        }
        if overflow { close(reason: "Input line too long") }
    }

    /// Runs the commands waiting, in order, while nothing holds them.
    private func drain() throws {
        while pendingHead < pending.count && closing == nil && claimingNick == nil && answersPending == 0 {
            if messageAnswersPending > 0 && !pending[pendingHead].isMessage { break }
            if configuration.floodControl {
                // Fake lag: each command costs `floodCost`; a client more than `floodBurst` ahead
                // of the clock waits (a millisecond of slack absorbs rounding of dates).
                let current = now
                if paidUntil < current { paidUntil = current }
                let wait = paidUntil.timeIntervalSince(current) - configuration.floodBurst.timeInterval
                if wait > 0.001 {
                    if !floodTimerArmed {
                        floodTimerArmed = true
                        context.timers.startSingleTimer(key: "flood", message: .floodRelease, delay: .milliseconds(Int64((wait * 1000).rounded(.up))))
                    }
                    break
                }
                paidUntil.addTimeInterval(configuration.floodCost.timeInterval)
            }
            let input = pending[pendingHead]
            pendingHead += 1
            switch input {
            case let .message(message):
                try server.checkFault(message.command)
                try run(message)
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
        if pendingHead == pending.count {
            pending.removeAll(keepingCapacity: pending.count <= 64)
            pendingHead = 0
        } else if pendingHead > 256 {
            pending.removeFirst(pendingHead)
            pendingHead = 0
        }
        gate.hold(pending.count - pendingHead > 32)
    }

    // MARK: Commands

    private func run(_ message: IRCMessage) throws {
        let params = message.params
        switch message.command {
        case "CAP": capability(params)
        case "PASS":
            if registered { return send(Numeric.alreadyRegistered, "You may not reregister") }
            guard let password = params.first else { return needMoreParams("PASS") }
            passwordGiven = password
        case "NICK": nick(params)
        case "USER": user(params)
        case "PING":
            guard let token = params.first, !token.isEmpty else { return send(Numeric.noOrigin, "No origin specified") }
            connection.send(IRCMessage(prefix: configuration.serverName, command: "PONG", params: [configuration.serverName, token]).serialized(alwaysTrailing: true))
        case "PONG":
            break
        case "QUIT":
            close(reason: params.first.map { "Quit: \($0)" } ?? "Client Quit")
        default:
            guard registered else {
                guard Self.knownCommands.contains(message.command) else {
                    return send(Numeric.unknownCommand, message.command, "Unknown command")
                }
                return send(Numeric.notRegistered, "You have not registered")
            }
            try runRegistered(message.command, params)
        }
    }

    private static let knownCommands: Set<String> = [
        "JOIN", "PART", "PRIVMSG", "NOTICE", "TOPIC", "NAMES", "LIST", "WHO", "WHOIS", "AWAY", "MODE", "KICK",
        "INVITE", "OPER", "KILL", "ISON", "USERHOST", "VERSION", "TIME", "MOTD", "LUSERS", "INFO", "WHOWAS",
    ]

    /// Runs a command with a list of targets as one command per target, in order, so that each
    /// target's replies (from different actors) come before the next target's: `JOIN #a,#b k`
    /// becomes `JOIN #a k` then `JOIN #b`. Returns false when there is only one target.
    private func expandTargets(_ command: String, _ params: [String]) -> Bool {
        guard let first = params.first, first.contains(Character(",")), first != "0" else { return false }
        let targets = first.split(separator: ",").map(String.init)
        var expanded: [IRCMessage]
        switch command {
        case "JOIN":
            let keys = params.count > 1 ? params[1].split(separator: ",", omittingEmptySubsequences: false).map(String.init) : []
            expanded = targets.enumerated().map { position, name in
                let key = position < keys.count && !keys[position].isEmpty ? [keys[position]] : []
                return IRCMessage(command: command, params: [name] + key)
            }
        case "PRIVMSG", "NOTICE":
            guard targets.count <= configuration.maxTargets else { return false }
            expanded = targets.map { IRCMessage(command: command, params: [$0] + params.dropFirst()) }
        case "KICK":
            // Channels and nicks pair up: one channel with several nicks, or as many of each.
            let nicks = params.count > 1 ? params[1].split(separator: ",").map(String.init) : []
            guard nicks.count == targets.count else { return false }
            expanded = zip(targets, nicks).map { IRCMessage(command: command, params: [$0, $1] + params.dropFirst(2)) }
        default:
            expanded = targets.map { IRCMessage(command: command, params: [$0] + params.dropFirst()) }
        }
        pending.insert(contentsOf: expanded.map(Input.message), at: pendingHead)
        return true
    }

    private static let listCommands: Set<String> = ["JOIN", "PART", "PRIVMSG", "NOTICE", "NAMES", "KICK"]

    private func runRegistered(_ command: String, _ params: [String]) throws {
        if Self.listCommands.contains(command) && expandTargets(command, params) { return }
        if command == "WHOIS", let nicks = params.last, nicks.contains(Character(",")) {
            let expanded = nicks.split(separator: ",").prefix(configuration.maxTargets).map { IRCMessage(command: "WHOIS", params: [String($0)]) }
            pending.insert(contentsOf: expanded.map(Input.message), at: pendingHead)
            return
        }
        switch command {
        case "JOIN": join(params)
        case "PART": part(params)
        case "PRIVMSG": privmsg(params, isNotice: false)
        case "NOTICE": privmsg(params, isNotice: true)
        case "TOPIC":
            guard let name = params.first else { return needMoreParams("TOPIC") }
            toChannel(name, .topic(params.count > 1 ? params[1] : nil), ifMissing: noSuchChannel(name))
        case "NAMES":
            guard let names = params.first else {
                return send(Numeric.endOfNames, "*", "End of /NAMES list")
            }
            for name in names.split(separator: ",").map(String.init) {
                toChannel(name, .names, ifMissing: replies.numeric(Numeric.endOfNames, identity.nick, name, "End of /NAMES list"))
            }
        case "LIST":
            directory.tell(.request(.list(names: params.first.map { $0.split(separator: ",").map(String.init) }, memberOf: Set(channels.keys)),
                                    from: identity, replyTo: expectAnswer(.command)))
        case "WHO":
            let mask = params.first ?? "*"
            let operatorsOnly = params.count > 1 && params[1].contains(Character("o"))
            if mask.hasPrefix("#") {
                toChannel(mask, .who(operatorsOnly: operatorsOnly),
                          ifMissing: replies.numeric(Numeric.endOfWho, identity.nick, mask, "End of /WHO list"))
            } else {
                ask(registry: .who(mask: mask == "0" ? "*" : mask, operatorsOnly: operatorsOnly))
            }
        case "WHOWAS":
            guard let nicks = params.first, !nicks.isEmpty else { return send(Numeric.noNicknameGiven, "No nickname given") }
            let count = params.count > 1 ? Int(params[1]) ?? 0 : 0
            ask(registry: .whowas(nick: String(nicks.split(separator: ",").first ?? ""), count: count))
        case "WHOIS":
            guard let first = params.first, !first.isEmpty else { return send(Numeric.noNicknameGiven, "No nickname given") }
            let nicks = params.count > 1 ? params[1] : first
            for nick in nicks.split(separator: ",").prefix(configuration.maxTargets) {
                ask(registry: .whois(nick: String(nick)))
            }
        case "AWAY":
            if let text = params.first, !text.isEmpty {
                identity.away = text.truncated(toBytes: configuration.awayLength)
                send(Numeric.nowAway, "You have been marked as being away")
            } else {
                identity.away = nil
                send(Numeric.unaway, "You are no longer marked as being away")
            }
            identityChanged()
        case "MODE": mode(params)
        case "KICK":
            guard params.count >= 2 else { return needMoreParams("KICK") }
            let nicks = params[1].split(separator: ",").map(String.init)
            toChannel(params[0], .kick(nicks: nicks, reason: params.count > 2 ? params[2] : nil),
                      ifMissing: noSuchChannel(params[0]))
        case "INVITE":
            guard params.count >= 2 else { return needMoreParams("INVITE") }
            toChannel(params[1], .invite(nick: params[0]), ifMissing: noSuchChannel(params[1]))
        case "OPER":
            guard params.count >= 2 else { return needMoreParams("OPER") }
            guard let password = configuration.operators[params[0]], password == params[1] else {
                return send(Numeric.passwordMismatch, "Password incorrect")
            }
            if !identity.isOperator {
                identity.isOperator = true
                server.counters.operators.add(1, ordering: .relaxed)
                identityChanged()
            }
            send(Numeric.youreOper, "You are now an IRC operator")
            connection.send(IRCMessage(prefix: identity.prefix, command: "MODE", params: [identity.nick, "+o"]).serialized())
        case "KILL":
            guard params.count >= 1 else { return needMoreParams("KILL") }
            guard identity.isOperator else { return send(Numeric.noPrivileges, "Permission Denied- You're not an IRC operator") }
            ask(registry: .kill(nick: params[0], reason: params.count > 1 ? params[1] : identity.nick))
        case "ISON":
            guard !params.isEmpty else { return needMoreParams("ISON") }
            ask(registry: .ison(nicks: params.flatMap { $0.split(separator: " ").map(String.init) }))
        case "USERHOST":
            guard !params.isEmpty else { return needMoreParams("USERHOST") }
            ask(registry: .userhost(nicks: params.flatMap { $0.split(separator: " ").map(String.init) }))
        case "VERSION":
            send(Numeric.version, "\(configuration.version).", configuration.serverName, "Mailbox IRC chat server sample")
            sendISupport()
        case "TIME":
            send(Numeric.time, configuration.serverName, ServerContext.format(now))
        case "INFO":
            for line in ["\(configuration.version): an IRC server on Mailbox actors", "One actor per connection and per channel, supervised."] {
                send(Numeric.info, line)
            }
            send(Numeric.endOfInfo, "End of /INFO list")
        case "MOTD": motd()
        case "LUSERS": lusers()
        default:
            send(Numeric.unknownCommand, command, "Unknown command")
        }
    }

    // MARK: Registration

    private func capability(_ params: [String]) {
        guard let subcommand = params.first?.uppercased() else { return needMoreParams("CAP") }
        switch subcommand {
        case "LS":
            if !registered { negotiatingCapabilities = true }
            connection.send(replies.fromServer("CAP", identity.nick, "LS", ""))
        case "LIST":
            connection.send(replies.fromServer("CAP", identity.nick, "LIST", ""))
        case "REQ":
            if !registered { negotiatingCapabilities = true }
            connection.send(replies.fromServer("CAP", identity.nick, "NAK", params.count > 1 ? params[1] : ""))
        case "END":
            negotiatingCapabilities = false
            completeRegistration()
        default:
            send(Numeric.invalidCapCommand, subcommand, "Invalid CAP command")
        }
    }

    private func nick(_ params: [String]) {
        guard let nick = params.first, !nick.isEmpty else { return send(Numeric.noNicknameGiven, "No nickname given") }
        guard IRCNames.isValidNick(nick, maxLength: configuration.nickLength) else {
            return send(Numeric.erroneousNickname, nick, "Erroneous nickname")
        }
        if hasNick && nick == identity.nick { return }
        claimingNick = nick
        registry.tell(.claim(nick: nick, id: identity.id, replyTo: context.myself))
        // A registry that cannot answer (it failed) must not wedge the client.
        context.timers.startSingleTimer(key: "answer", message: .answerTimedOut, delay: .seconds(5))
    }

    private func nickClaimAnswered(_ nick: String, accepted: Bool) {
        guard accepted else { return send(Numeric.nicknameInUse, nick, "Nickname is already in use") }
        if registered {
            let line = IRCMessage(prefix: identity.prefix, command: "NICK", params: [nick]).serialized(alwaysTrailing: true)
            let old = identity.nick
            identity.nick = nick
            connection.send(line)
            let once = DeliverOnce(excluding: [identity.id])
            for (_, channel) in channels {
                channel.ref.tell(.nickChanged(identity, line: line, once: once))
            }
            registry.tell(.update(identity))
            server.publish(.nickChanged(from: old, to: nick))
        } else {
            identity.nick = nick
            hasNick = true
            completeRegistration()
        }
    }

    private func user(_ params: [String]) {
        if registered { return send(Numeric.alreadyRegistered, "You may not reregister") }
        guard params.count >= 4, !params[0].isEmpty, !params[3].isEmpty else { return needMoreParams("USER") }
        let name = params[0].filter { !" @!\r\n\0".contains($0) }.truncated(toBytes: 10)
        identity = ClientIdentity(id: identity.id, nick: identity.nick, user: "~" + (name.isEmpty ? "user" : name), host: identity.host,
                                  realName: params[3].truncated(toBytes: 100), session: identity.session, connection: connection)
        userGiven = true
        completeRegistration()
    }

    private func completeRegistration() {
        guard !registered, hasNick, userGiven, !negotiatingCapabilities, claimingNick == nil else { return }
        if let password = configuration.password, passwordGiven != password {
            send(Numeric.passwordMismatch, "Password incorrect")
            return close(reason: "Bad password", broadcast: false)
        }
        registered = true
        context.timers.cancel(key: "registration")
        registry.tell(.update(identity))
        server.counters.userRegistered()
        server.publish(.registered(nick: identity.nick, host: identity.host))

        send(Numeric.welcome, "Welcome to the \(configuration.networkName) Internet Relay Chat Network \(identity.prefix)")
        send(Numeric.yourHost, "Your host is \(configuration.serverName), running version \(configuration.version)")
        send(Numeric.created, "This server was created \(server.createdText)")
        send(Numeric.myInfo, configuration.serverName, configuration.version, "io", "biklmnostv", "bklov")
        sendISupport()
        lusers()
        motd()
        context.timers.startTimerWithFixedDelay(key: "keepAlive", message: .keepAlive, delay: configuration.pingInterval)
    }

    private func sendISupport() {
        let tokens = [
            "AWAYLEN=\(configuration.awayLength)", "CASEMAPPING=rfc1459", "CHANLIMIT=#:\(configuration.channelsPerUser)",
            "CHANMODES=b,k,l,imnst", "CHANNELLEN=\(configuration.channelLength)", "CHANTYPES=#", "KICKLEN=\(configuration.kickLength)",
            "MAXLIST=b:\(configuration.maxBans)", "MAXTARGETS=\(configuration.maxTargets)", "MODES=4",
            "NETWORK=\(configuration.networkName)", "NICKLEN=\(configuration.nickLength)", "PREFIX=(ov)@+",
            "TARGMAX=PRIVMSG:\(configuration.maxTargets),NOTICE:\(configuration.maxTargets),JOIN:,PART:,KICK:\(configuration.maxTargets)",
            "TOPICLEN=\(configuration.topicLength)",
        ]
        // At most 13 tokens a line: with the nick and the text, 15 parameters.
        for start in stride(from: 0, to: tokens.count, by: 13) {
            send(Numeric.isupport, params: Array(tokens[start..<min(start + 13, tokens.count)]) + ["are supported by this server"])
        }
    }

    private func lusers() {
        let statistics = server.counters.snapshot
        let visible = statistics.users - statistics.invisibleUsers
        send(Numeric.luserClient, "There are \(visible) users and \(statistics.invisibleUsers) invisible on 1 servers")
        send(Numeric.luserOp, String(statistics.operators), "operator(s) online")
        send(Numeric.luserUnknown, String(max(0, statistics.connections - statistics.users)), "unknown connection(s)")
        send(Numeric.luserChannels, String(statistics.channels), "channels formed")
        send(Numeric.luserMe, "I have \(statistics.users) clients and 0 servers")
        send(Numeric.localUsers, String(statistics.users), String(statistics.maxUsers),
             "Current local users \(statistics.users), max \(statistics.maxUsers)")
        send(Numeric.globalUsers, String(statistics.users), String(statistics.maxUsers),
             "Current global users \(statistics.users), max \(statistics.maxUsers)")
    }

    private func motd() {
        guard let lines = configuration.motd else { return send(Numeric.noMotd, "MOTD File is missing") }
        send(Numeric.motdStart, "- \(configuration.serverName) Message of the day - ")
        for line in lines { send(Numeric.motd, "- \(line)") }
        send(Numeric.endOfMotd, "End of /MOTD command.")
    }

    // MARK: Channels

    private func join(_ params: [String]) {
        guard let list = params.first else { return needMoreParams("JOIN") }
        if list == "0" {
            for (_, channel) in channels {
                let line = IRCMessage(prefix: identity.prefix, command: "PART", params: [channel.name, identity.nick]).serialized(alwaysTrailing: true)
                channel.ref.tell(.request(.part(line: line), from: identity, replyTo: expectAnswer(.command)))
            }
            channels.removeAll()
            return
        }
        let names = list.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        let keys = params.count > 1 ? params[1].split(separator: ",", omittingEmptySubsequences: false).map(String.init) : []
        for (position, name) in names.enumerated() {
            guard IRCNames.isValidChannel(name, maxLength: configuration.channelLength) else {
                send(Numeric.noSuchChannel, name, "No such channel")
                continue
            }
            if channels[IRCCaseMapping.fold(name)] != nil { continue }
            guard channels.count < configuration.channelsPerUser else {
                send(Numeric.tooManyChannels, name, "You have joined too many channels")
                continue
            }
            let key = position < keys.count && !keys[position].isEmpty ? keys[position] : nil
            directory.tell(.request(.join(name: name, key: key), from: identity, replyTo: expectAnswer(.command)))
        }
    }

    private func part(_ params: [String]) {
        guard let list = params.first else { return needMoreParams("PART") }
        for name in list.split(separator: ",").map(String.init) {
            var partParams = [name]
            if params.count > 1 { partParams.append(params[1]) }
            let key = IRCCaseMapping.fold(name)
            if let channel = channels.removeValue(forKey: key) {
                partParams[0] = channel.name
                let line = IRCMessage(prefix: identity.prefix, command: "PART", params: partParams).serialized(alwaysTrailing: true)
                channel.ref.tell(.request(.part(line: line), from: identity, replyTo: expectAnswer(.command)))
            } else {
                toChannel(name, .part(line: []), ifMissing: noSuchChannel(name))
            }
        }
    }

    private func privmsg(_ params: [String], isNotice: Bool) {
        let command = isNotice ? "NOTICE" : "PRIVMSG"
        guard let targets = params.first, !targets.isEmpty else {
            if !isNotice { send(Numeric.noRecipient, "No recipient given (\(command))") }
            return
        }
        guard params.count > 1, !params[1].isEmpty else {
            if !isNotice { send(Numeric.noTextToSend, "No text to send") }
            return
        }
        // A list of targets was expanded into one command per target (`expandTargets`).
        guard !targets.contains(Character(",")) else {
            if !isNotice { send(Numeric.tooManyTargets, targets, "Too many recipients") }
            return
        }
        let target = targets
        let line = IRCMessage(prefix: identity.prefix, command: command, params: [target, params[1]]).serialized(alwaysTrailing: true)
        switch (target.hasPrefix("#"), isNotice) {
        case (true, false):
            toChannel(target, .privmsg(line: line), ifMissing: replies.numeric(Numeric.noSuchNick, identity.nick, target, "No such nick/channel"))
        case (true, true):
            if let channel = channels[IRCCaseMapping.fold(target)] {
                channel.ref.tell(.notice(line: line, from: identity))
            } else {
                directory.tell(.notice(name: target, line: line, from: identity))
            }
        case (false, false):
            // A PRIVMSG waits for the registry's answer (401, 301), as for a channel's (404).
            ask(registry: .privmsg(target: target, line: line), .message)
        case (false, true):
            registry.tell(.notice(target: target, line: line))
        }
    }

    /// Sends a request to the registry.
    private func ask(registry request: RegistryRequest, _ kind: ReplyTo.Kind = .command) {
        registry.tell(.request(request, from: identity, replyTo: expectAnswer(kind)))
    }

    /// Sends a request to a channel: straight to its actor when the client is a member, through
    /// the directory otherwise (which answers `ifMissing` when there is no such channel).
    private func toChannel(_ name: String, _ request: ChannelRequest, ifMissing: [UInt8]) {
        let replyTo = expectAnswer(request.answerKind)
        if let channel = channels[IRCCaseMapping.fold(name)] {
            channel.ref.tell(.request(request, from: identity, replyTo: replyTo))
        } else {
            directory.tell(.request(.channel(name: name, request, ifMissing: ifMissing), from: identity, replyTo: replyTo))
        }
    }

    private func mode(_ params: [String]) {
        guard let target = params.first else { return needMoreParams("MODE") }
        if target.hasPrefix("#") {
            return toChannel(target, .mode(Array(params.dropFirst())), ifMissing: noSuchChannel(target))
        }
        guard IRCCaseMapping.equal(target, identity.nick) else {
            return send(Numeric.usersDontMatch, "Can't change mode for other users")
        }
        guard params.count > 1 else { return send(Numeric.umodeIs, currentUserModes) }
        var adding = true
        var applied = ""
        var sign: Bool?
        var unknown = false
        for flag in params[1] {
            switch flag {
            case "+": adding = true
            case "-": adding = false
            case "i":
                guard identity.isInvisible != adding else { continue }
                identity.isInvisible = adding
                server.counters.invisibleUsers.add(adding ? 1 : -1, ordering: .relaxed)
                if sign != adding { applied += adding ? "+" : "-"; sign = adding }
                applied += "i"
            case "o":
                // +o comes only from OPER; a client may drop it.
                guard !adding, identity.isOperator else { continue }
                identity.isOperator = false
                server.counters.operators.add(-1, ordering: .relaxed)
                if sign != false { applied += "-"; sign = false }
                applied += "o"
            default:
                unknown = true
            }
        }
        if unknown { send(Numeric.umodeUnknownFlag, "Unknown MODE flag") }
        if !applied.isEmpty {
            connection.send(IRCMessage(prefix: identity.prefix, command: "MODE", params: [identity.nick, applied]).serialized())
            identityChanged()
        }
    }

    private var currentUserModes: String {
        "+" + (identity.isInvisible ? "i" : "") + (identity.isOperator ? "o" : "")
    }

    /// The reply-to of a request about to be sent: one more answer to wait for before the next
    /// command runs (for a PRIVMSG's, before a command other than PRIVMSG/NOTICE); at most 5 s:
    /// an actor that stops while answering must not wedge the client.
    private func expectAnswer(_ kind: ReplyTo.Kind) -> ReplyTo {
        switch kind {
        case .command: answersPending += 1
        case .message: messageAnswersPending += 1
        }
        startAnswerTimer()
        return ReplyTo(session: context.myself, kind: kind)
    }

    private func stopAnswerTimerIfIdle() {
        if answersPending == 0 && messageAnswersPending == 0 && claimingNick == nil {
            context.timers.cancel(key: "answer")
        }
    }

    private func startAnswerTimer() {
        if answersPending + messageAnswersPending == 1 {
            context.timers.startSingleTimer(key: "answer", message: .answerTimedOut, delay: .seconds(5))
        }
    }

    /// The client's record changed (away, modes): the registry and its channels get the new one.
    private func identityChanged() {
        registry.tell(.update(identity))
        for (_, channel) in channels { channel.ref.tell(.memberUpdated(identity)) }
    }

    // MARK: Ending

    private func close(reason: String, errorText: String? = nil, broadcast: Bool = true) {
        guard closing == nil else { return }
        closing = Closing(reason: reason, errorText: errorText, broadcast: broadcast)
    }

    /// Runs once, in `postStop`: the channels see the QUIT (each peer once), the nick is freed, the
    /// client gets `ERROR` and its connection is closed.
    private func finish() {
        guard !finished else { return }
        finished = true
        let closing = closing ?? Closing(reason: "Connection closed")
        if registered && closing.broadcast && !channels.isEmpty {
            let line = IRCMessage(prefix: identity.prefix, command: "QUIT", params: [closing.reason]).serialized(alwaysTrailing: true)
            let once = DeliverOnce(excluding: [identity.id])
            for (_, channel) in channels { channel.ref.tell(.quit(id: identity.id, line: line, once: once)) }
        }
        channels.removeAll()
        registry.tell(.release(id: identity.id))
        if registered {
            server.counters.users.add(-1, ordering: .relaxed)
            if identity.isInvisible { server.counters.invisibleUsers.add(-1, ordering: .relaxed) }
            if identity.isOperator { server.counters.operators.add(-1, ordering: .relaxed) }
        }
        if !connectionClosed {
            let text = closing.errorText ?? "Closing Link: \(identity.host) (\(closing.reason))"
            connection.closeGracefully(final: Replies.error(text))
        }
        server.publish(.disconnected(id: identity.id, nick: registered ? identity.nick : nil, reason: closing.reason))
    }

    // MARK: Helpers

    private var now: Date { context.scheduler.currentDate }

    private func send(_ code: String, _ params: String...) {
        connection.send(replies.numeric(code, identity.nick, params: params))
    }

    private func send(_ code: String, params: [String]) {
        connection.send(replies.numeric(code, identity.nick, params: params))
    }

    private func needMoreParams(_ command: String) {
        send(Numeric.needMoreParams, command, "Not enough parameters")
    }

    private func noSuchChannel(_ name: String) -> [UInt8] {
        replies.numeric(Numeric.noSuchChannel, identity.nick, name, "No such channel")
    }
}
