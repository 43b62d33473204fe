/// A command the server knows, by the family whose handler runs it (`Session+<Family>.swift`).
/// Decoding (`SessionInput`, `init?(_:)`, `splitByTarget`) picks the family; handling is the
/// family's.
enum SessionCommand: Equatable {
    /// Allowed before registration.
    case registration(RegistrationCommand)
    /// Allowed before registration.
    case connection(ConnectionCommand)
    case channel(ChannelCommand)
    case messaging(MessagingCommand)
    case query(QueryCommand)
    case modes(ModeCommand)
    case administration(AdministrationCommand)

    /// The command named `name` (uppercase, as `IRCMessage` parses it), or `nil` if unknown.
    init?(_ name: String) {
        guard let command = Self.byName[name] else { return nil }
        self = command
    }

    /// Before registration, a known command of another family is answered with 451.
    var needsRegistration: Bool {
        switch self {
        case .registration, .connection: false
        case .channel, .messaging, .query, .modes, .administration: true
        }
    }

    /// PRIVMSG or NOTICE: it need not wait for earlier PRIVMSGs' answers.
    var isMessage: Bool {
        if case .messaging = self { return true }
        return false
    }

    private static let byName: [String: SessionCommand] = {
        var table: [String: SessionCommand] = [:]
        func add<Family: RawRepresentable & CaseIterable>(_ family: Family.Type, _ make: (Family) -> SessionCommand)
            where Family.RawValue == String {
            for command in Family.allCases { table[command.rawValue] = make(command) }
        }
        add(RegistrationCommand.self, SessionCommand.registration)
        add(ConnectionCommand.self, SessionCommand.connection)
        add(ChannelCommand.self, SessionCommand.channel)
        add(MessagingCommand.self, SessionCommand.messaging)
        add(QueryCommand.self, SessionCommand.query)
        add(ModeCommand.self, SessionCommand.modes)
        add(AdministrationCommand.self, SessionCommand.administration)
        return table
    }()
}

/// Registration: `Session+Registration.swift`.
enum RegistrationCommand: String, CaseIterable {
    case cap = "CAP", pass = "PASS", nick = "NICK", user = "USER"
}

/// The connection itself: `Session+Connection.swift`.
enum ConnectionCommand: String, CaseIterable {
    case ping = "PING", pong = "PONG", quit = "QUIT"
}

/// Channels, answered by the channel's actor or the directory: `Session+Channels.swift`.
enum ChannelCommand: String, CaseIterable {
    case join = "JOIN", part = "PART", topic = "TOPIC", names = "NAMES", list = "LIST", kick = "KICK", invite = "INVITE"
}

/// PRIVMSG and NOTICE, to a channel or a nick: `Session+Messaging.swift`.
enum MessagingCommand: String, CaseIterable {
    case privmsg = "PRIVMSG", notice = "NOTICE"
}

/// Look-ups about users and the server: `Session+Queries.swift`.
enum QueryCommand: String, CaseIterable {
    case who = "WHO", whois = "WHOIS", whowas = "WHOWAS", ison = "ISON", userhost = "USERHOST"
    case version = "VERSION", time = "TIME", info = "INFO", motd = "MOTD", lusers = "LUSERS"
}

/// Modes (a channel's go to the channel) and away: `Session+Modes.swift`.
enum ModeCommand: String, CaseIterable {
    case mode = "MODE", away = "AWAY"
}

/// IRC operators: `Session+Administration.swift`.
enum AdministrationCommand: String, CaseIterable {
    case oper = "OPER", kill = "KILL"
}

extension SessionCommand {
    /// A registered client's command with a list of targets, as one command per target, to be
    /// run in order, so that each target's replies (from different actors) come before the next
    /// target's: `JOIN #a,#b k` becomes `JOIN #a k` then `JOIN #b`. `nil` when `message` is run
    /// as it is (one target, or a list it refuses as a whole).
    func splitByTarget(_ message: IRCMessage, maxTargets: Int) -> [IRCMessage]? {
        let command = message.command
        let params = message.params
        switch self {
        case .channel(.join), .channel(.part), .channel(.names), .channel(.kick), .messaging:
            guard let first = params.first, first.contains(Character(",")), first != "0" else { return nil }
            let targets = first.split(separator: ",").map(String.init)
            switch self {
            case .channel(.join):
                let keys = params.count > 1 ? params[1].split(separator: ",", omittingEmptySubsequences: false).map(String.init) : []
                return targets.enumerated().map { position, name in
                    let key = position < keys.count && !keys[position].isEmpty ? [keys[position]] : []
                    return IRCMessage(command: command, params: [name] + key)
                }
            case .messaging:
                // Too many: refused as a whole (407).
                guard targets.count <= maxTargets else { return nil }
                return targets.map { IRCMessage(command: command, params: [$0] + params.dropFirst()) }
            case .channel(.kick):
                // Channels and nicks pair up: one channel with several nicks, or as many of each.
                let nicks = params.count > 1 ? params[1].split(separator: ",").map(String.init) : []
                guard nicks.count == targets.count else { return nil }
                return zip(targets, nicks).map { IRCMessage(command: command, params: [$0, $1] + params.dropFirst(2)) }
            default:
                return targets.map { IRCMessage(command: command, params: [$0] + params.dropFirst()) }
            }
        case .query(.whois):
            // `WHOIS [server] nick,nick…`: the nicks are the last parameter.
            guard let nicks = params.last, nicks.contains(Character(",")) else { return nil }
            return nicks.split(separator: ",").prefix(maxTargets).map { IRCMessage(command: "WHOIS", params: [String($0)]) }
        default:
            return nil
        }
    }
}
