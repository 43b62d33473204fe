import Foundation

extension ChatServerConfiguration {
    /// The command line of `chat-server`.
    public static let usage = """
    usage: chat-server [options]
      --host HOST                     address to listen on (default 127.0.0.1)
      --port PORT                     TCP port, 0 for an ephemeral one (default 6667)
      --server-name NAME              the server's name (default irc.mailbox.local)
      --network NAME                  the network's name (default Mailbox)
      --oper NAME:PASSWORD            an operator account for OPER (repeatable)
      --motd-file PATH                the message of the day (default: a built-in line)
      --password PASSWORD             require PASS before registration
      --sendq BYTES                   per-client send queue; a client over it is cut (default 524288)
      --max-clients N                 connections at once (default 10000)
      --no-flood-control              run every command at once (for benchmarks)
      --ping-interval SECONDS         ping clients silent this long (default 90)
      --ping-timeout SECONDS          drop clients that do not answer within this (default 120)
      --registration-timeout SECONDS  drop connections not registered within this (default 60)
      --cluster nats://HOST:PORT      run as one node of a chat cluster on this NATS server
                                      (JetStream on: nats-server -js); nicks, channels and
                                      private messages span every node started so
      --node-name NAME                the node's name in the cluster (default: the server
                                      name, with every character but letters, digits, '-'
                                      and '_' made '-'); unique among the live nodes
      --cluster-name NAME             the cluster's name, the NATS subject prefix (default chat)
      --verbose                       print the server's events to standard error
      --help                          print this and exit
    """

    /// What the command line asked for besides the configuration.
    public struct CommandLineOptions: Sendable {
        /// `--verbose`: print the server's events.
        public var verbose = false
        /// `--help`: print the usage and exit.
        public var help = false
        /// `--cluster URL`: the NATS server of the chat cluster to join (`nil`: run alone).
        public var cluster: String?
        /// `--node-name NAME`: the node's name in the cluster (`nil`: from the server name).
        public var nodeName: String?
        /// `--cluster-name NAME`: the cluster's subject prefix.
        public var clusterName = "chat"

        public init() {}
    }

    /// A bad command line: the message says which option and why.
    public struct ArgumentError: Error, CustomStringConvertible, Equatable {
        public let description: String
    }

    /// Reads `chat-server`'s options (without the program name).
    ///
    /// - Throws: `ArgumentError` naming the option for an unknown option, a missing or bad value,
    ///   or an unreadable MOTD file.
    public init(arguments: [String], options: inout CommandLineOptions) throws(ArgumentError) {
        self.init()
        var iterator = arguments.makeIterator()
        func value(_ option: String) throws(ArgumentError) -> String {
            guard let value = iterator.next() else { throw ArgumentError(description: "\(option) needs a value") }
            return value
        }
        func seconds(_ option: String) throws(ArgumentError) -> Duration {
            guard let seconds = Double(try value(option)), seconds > 0, seconds < 1e9 else {
                throw ArgumentError(description: "\(option) needs a positive number of seconds")
            }
            return .milliseconds(Int64(seconds * 1000))
        }
        func positive(_ option: String) throws(ArgumentError) -> Int {
            guard let number = Int(try value(option)), number > 0 else {
                throw ArgumentError(description: "\(option) needs a positive whole number")
            }
            return number
        }
        while let argument = iterator.next() {
            switch argument {
            case "--host": host = try value(argument)
            case "--port":
                guard let port = UInt16(try value(argument)) else { throw ArgumentError(description: "--port needs a number from 0 to 65535") }
                self.port = port
            case "--server-name": serverName = try value(argument)
            case "--network": networkName = try value(argument)
            case "--oper":
                let account = try value(argument)
                guard let colon = account.firstIndex(of: ":"), colon != account.startIndex else {
                    throw ArgumentError(description: "--oper needs NAME:PASSWORD")
                }
                operators[String(account[..<colon])] = String(account[account.index(after: colon)...])
            case "--motd-file":
                let path = try value(argument)
                guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
                    throw ArgumentError(description: "cannot read the MOTD file \(path)")
                }
                var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map { String($0.trimmingSuffix("\r")) }
                if lines.last == "" { lines.removeLast() }
                motd = lines
            case "--password": password = try value(argument)
            case "--sendq": sendQueueBytes = try positive(argument)
            case "--max-clients": maxClients = try positive(argument)
            case "--no-flood-control": floodControl = false
            case "--ping-interval": pingInterval = try seconds(argument)
            case "--ping-timeout": pingTimeout = try seconds(argument)
            case "--registration-timeout": registrationTimeout = try seconds(argument)
            case "--cluster":
                let url = try value(argument)
                guard url.hasPrefix("nats://") || url.hasPrefix("tls://"), url.count > 7 else {
                    throw ArgumentError(description: "--cluster needs a NATS URL such as nats://127.0.0.1:4222")
                }
                options.cluster = url
            case "--node-name":
                let name = try value(argument)
                guard Self.isNodeToken(name) else { throw ArgumentError(description: "--node-name: use letters, digits, '-' and '_'") }
                options.nodeName = name
            case "--cluster-name":
                let name = try value(argument)
                guard Self.isNodeToken(name) else { throw ArgumentError(description: "--cluster-name: use letters, digits, '-' and '_'") }
                options.clusterName = name
            case "--verbose": options.verbose = true
            case "--help", "-h": options.help = true
            default: throw ArgumentError(description: "unknown option \(argument)")
            }
        }
    }
}

extension ChatServerConfiguration {
    /// The node name `--node-name` defaults to: the server name with every character but
    /// letters, digits, `-` and `_` made `-` (`irc.a.local` → `irc-a-local`).
    public var defaultNodeName: String {
        String(serverName.map { isTokenCharacter($0) ? $0 : "-" })
    }

    static func isNodeToken(_ name: String) -> Bool {
        !name.isEmpty && name.allSatisfy(isTokenCharacter)
    }
}

private func isTokenCharacter(_ character: Character) -> Bool {
    character.isASCII && (character.isLetter || character.isNumber || character == "-" || character == "_")
}

extension Substring {
    fileprivate func trimmingSuffix(_ suffix: String) -> Substring {
        hasSuffix(suffix) ? dropLast(suffix.count) : self
    }
}
