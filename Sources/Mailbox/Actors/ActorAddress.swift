/// Where an actor lives: its system and its path from the root, plus an incarnation number
/// that tells apart two actors that had the same path at different times.
///
/// `/user/lobby/alice` is the actor `alice`, a child of `lobby`, a top-level actor spawned
/// with `ActorSystem.spawn`. Addresses are values: `Sendable`, `Hashable`, cheap to copy.
/// Two addresses are equal when system, path and incarnation are equal, so a ref to a stopped
/// actor never equals a ref to a new actor spawned later under the same name.
public struct ActorAddress: Hashable, Sendable, CustomStringConvertible {
    /// The name of the actor system the actor belongs to.
    public let system: String

    /// The path from the root, e.g. `/user/lobby/alice`.
    public let path: String

    /// A number unique within the system for each spawned actor.
    public let incarnation: UInt64

    /// The path segments from the root, e.g. `["user", "lobby", "alice"]`.
    public var segments: [String] {
        path.split(separator: "/").map(String.init)
    }

    /// The actor's own name: the last path segment.
    public var name: String {
        guard let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")) else { return path }
        return String(path[path.utf8.index(after: slash)...])
    }

    /// The full address, e.g. `mailbox://chat/user/lobby/alice#42`.
    public var description: String {
        "mailbox://\(system)\(path)#\(incarnation)"
    }

    init(system: String, path: String, incarnation: UInt64) {
        self.system = system
        self.path = path
        self.incarnation = incarnation
    }

    func child(_ name: String, incarnation: UInt64) -> ActorAddress {
        ActorAddress(system: system, path: path == "/" ? "/" + name : path + "/" + name, incarnation: incarnation)
    }
}
