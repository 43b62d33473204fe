/// Where an actor lives: its system and its path from the root, plus an incarnation number
/// that tells apart two actors that had the same path at different times.
///
/// `/user/lobby/alice` is the actor `alice`, a child of `lobby`, a top-level actor spawned
/// with `ActorSystem.spawn`. Addresses are values: `Sendable`, `Hashable`, cheap to copy.
/// Two addresses are equal when node, system, path and incarnation are equal, so a ref to a
/// stopped actor never equals a ref to a new actor spawned later under the same name.
///
/// An address of an actor on another node of a cluster (`MailboxCluster`) also names that
/// `node`; a local address has none (`node == nil`), and costs nothing more for it.
public struct ActorAddress: Hashable, Sendable, CustomStringConvertible {
    /// The name of the actor system the actor belongs to.
    public let system: String

    /// The path from the root, e.g. `/user/lobby/alice`.
    public let path: String

    /// A number unique within the system for each spawned actor.
    public let incarnation: UInt64

    /// The node the actor lives on, as its number in the process's node table (0: this
    /// process's own actor). A number, not a reference: copying a local address retains
    /// nothing more than its two strings.
    @usableFromInline
    let nodeIndex: UInt32

    /// The cluster node the actor lives on, for an actor of another process; `nil` for an
    /// actor of this process.
    public var node: ClusterNode? { nodeIndex == 0 ? nil : _ClusterNodeTable.shared.node(at: nodeIndex) }

    /// The path segments from the root, e.g. `["user", "lobby", "alice"]`.
    public var segments: [String] {
        path.split(separator: "/").map(String.init)
    }

    /// The actor's own name: the last path segment.
    public var name: String {
        guard let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")) else { return path }
        return String(path[path.utf8.index(after: slash)...])
    }

    /// The full address, e.g. `mailbox://chat/user/lobby/alice#42`, or for an actor on another
    /// node `mailbox://chat@node-b:1f3c9e0a77b2d401/user/lobby/alice#42`.
    public var description: String {
        if let node { return "mailbox://\(system)@\(node)\(path)#\(incarnation)" }
        return "mailbox://\(system)\(path)#\(incarnation)"
    }

    init(system: String, path: String, incarnation: UInt64) {
        self.system = system
        self.path = path
        self.incarnation = incarnation
        self.nodeIndex = 0
    }

    /// An address of an actor on `node` (the cluster layer builds them from the wire).
    package init(node: ClusterNode?, system: String, path: String, incarnation: UInt64) {
        self.init(nodeIndex: node.map { _ClusterNodeTable.shared.index(of: $0) } ?? 0, system: system, path: path, incarnation: incarnation)
    }

    private init(nodeIndex: UInt32, system: String, path: String, incarnation: UInt64) {
        self.system = system
        self.path = path
        self.incarnation = incarnation
        self.nodeIndex = nodeIndex
    }

    /// This address as seen from other nodes: the same actor, on `node`.
    package func on(_ node: ClusterNode) -> ActorAddress {
        ActorAddress(node: node, system: system, path: path, incarnation: incarnation)
    }


    func child(_ name: String, incarnation: UInt64) -> ActorAddress {
        ActorAddress(nodeIndex: nodeIndex, system: system, path: path == "/" ? "/" + name : Self.joined(path, name), incarnation: incarnation)
    }

    /// `parent + "/" + name`, written in one pass (two `String` appends cost several times
    /// more, on every spawn).
    static func joined(_ parent: String, _ name: String) -> String {
        var parent = parent, name = name
        return parent.withUTF8 { parentBytes in
            name.withUTF8 { nameBytes in
                String(unsafeUninitializedCapacity: parentBytes.count + 1 + nameBytes.count) { buffer in
                    var end = buffer.initialize(fromContentsOf: parentBytes)
                    buffer[end] = UInt8(ascii: "/")
                    end += 1
                    end = buffer[end...].initialize(fromContentsOf: nameBytes)
                    return end
                }
            }
        }
    }

    /// A generated name, `$a` and `number` in decimal, written in one pass.
    static func generatedName(_ number: UInt64) -> String {
        var digits = number
        var count = 1
        while digits >= 10 {
            digits /= 10
            count += 1
        }
        return String(unsafeUninitializedCapacity: 2 + count) { buffer in
            buffer[0] = UInt8(ascii: "$")
            buffer[1] = UInt8(ascii: "a")
            var rest = number
            for index in stride(from: 1 + count, to: 1, by: -1) {
                buffer[index] = UInt8(ascii: "0") + UInt8(rest % 10)
                rest /= 10
            }
            return 2 + count
        }
    }
}

extension ActorAddress: Codable {
    /// An address reads back from its `description`: `mailbox://system/path#incarnation`, or
    /// `mailbox://system@node:incarnation-hex/path#incarnation` for an actor on a cluster node.
    public init?(parsing text: String) {
        let scheme = "mailbox://"
        guard text.hasPrefix(scheme), let hash = text.lastIndex(of: "#"),
              let actorIncarnation = UInt64(text[text.index(after: hash)...]) else { return nil }
        let body = text[text.index(text.startIndex, offsetBy: scheme.count)..<hash]
        guard let slash = body.firstIndex(of: "/") else { return nil }
        let authority = body[..<slash], path = String(body[slash...])
        guard let at = authority.firstIndex(of: "@") else {
            self.init(node: nil, system: String(authority), path: path, incarnation: actorIncarnation)
            return
        }
        let nodePart = authority[authority.index(after: at)...]
        guard let colon = nodePart.lastIndex(of: ":"),
              let nodeIncarnation = UInt64(nodePart[nodePart.index(after: colon)...], radix: 16) else { return nil }
        let node = ClusterNode(name: String(nodePart[..<colon]), incarnation: nodeIncarnation)
        self.init(node: node, system: String(authority[..<at]), path: path, incarnation: actorIncarnation)
    }

    /// Encodes as the `description` string.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }

    /// Decodes the `description` string.
    /// - Throws: `DecodingError.dataCorrupted` when the string is no address.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let address = ActorAddress(parsing: text) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "\(text.debugDescription) is not an actor address")
        }
        self = address
    }
}
