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
        ActorAddress(system: system, path: path == "/" ? "/" + name : Self.joined(path, name), incarnation: incarnation)
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
