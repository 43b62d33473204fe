import Foundation
import Mailbox

/// A hand-written serializer for one message type, for types where JSON is too slow or too
/// big. Register it with `ClusterCodecs.register(_:manifest:version:aliases:codec:)`.
///
/// `decode` gets the version the sender wrote, so a newer node can read an older node's
/// bytes (and should throw, with a clear message, for a version it cannot read).
/// Refs inside a message are written with `context.encode(_:)` and read with
/// `context.decodeRef(_:from:)`.
///
/// Thread-safety: called from any thread, concurrently; keep it stateless.
public protocol ClusterMessageCodec<Message>: Sendable {
    associatedtype Message: Sendable
    /// The message's bytes.
    func encode(_ message: Message, context: ClusterCodingContext) throws -> [UInt8]
    /// The message from bytes written by `encode` of a codec of `version`.
    func decode(_ bytes: ArraySlice<UInt8>, version: Int, context: ClusterCodingContext) throws -> Message
}

/// JSON through `Codable`: the default for every `Codable` message type.
public struct JSONMessageCodec<Message: Codable & Sendable>: ClusterMessageCodec {
    public init() {}

    public func encode(_ message: Message, context: ClusterCodingContext) throws -> [UInt8] {
        try _JSONCoders.shared.withCoder(context.refCoding) { coder in Array(try coder.encoder.encode(message)) }
    }

    public func decode(_ bytes: ArraySlice<UInt8>, version: Int, context: ClusterCodingContext) throws -> Message {
        try _JSONCoders.shared.withCoder(context.refCoding) { coder in
            try bytes.withUnsafeBytes { raw in
                try coder.decoder.decode(Message.self, from: Data(bytesNoCopy: UnsafeMutableRawPointer(mutating: raw.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!), count: raw.count, deallocator: .none))
            }
        }
    }
}

/// JSON encoders and decoders reused across messages: making one (and its `userInfo`) for
/// every message cost more than encoding a small message. Each pooled coder's `userInfo`
/// holds a slot that forwards to the ref coding of the message being coded.
///
/// Thread-safety: a coder is taken out of the pool (under its lock) by one thread and given
/// back after use, so no two threads use one at a time.
final class _JSONCoders: Sendable {
    static let shared = _JSONCoders()

    // Safe: owned by one thread at a time, between `take` and `giveBack` (the pool's lock
    // hands it over).
    final class Coder: @unchecked Sendable {
        let encoder = JSONEncoder()
        let decoder = JSONDecoder()
        let slot = Slot()

        init() {
            encoder.userInfo[.actorRefCoding] = slot
            decoder.userInfo[.actorRefCoding] = slot
        }
    }

    /// The ref coding of the message being coded, for `ActorRef`'s `Codable` conformance.
    // Safe: written and read only by the thread that holds the slot's coder.
    final class Slot: ActorRefCoding, @unchecked Sendable {
        var current: _RefCoding?

        func encode<Message: Codable & Sendable>(_ ref: ActorRef<Message>, to encoder: any Encoder) throws {
            guard let current else { throw ClusterWireError("a ref encoded outside a cluster message") }
            try current.encode(ref, to: encoder)
        }

        func decodeRef<Message: Codable & Sendable>(_ type: Message.Type, from decoder: any Decoder) throws -> ActorRef<Message> {
            guard let current else { throw ClusterWireError("a ref decoded outside a cluster message") }
            return try current.decodeRef(type, from: decoder)
        }
    }

    private let idle = LockedValueBox<[Coder]>([])

    func withCoder<T>(_ refCoding: _RefCoding, _ body: (Coder) throws -> T) throws -> T {
        let coder = idle.withLockedValue { $0.popLast() } ?? Coder()
        coder.slot.current = refCoding
        defer {
            coder.slot.current = nil
            idle.withLockedValue { idle in
                if idle.count < 32 { idle.append(coder) }
            }
        }
        return try body(coder)
    }
}

/// What a codec may use while it runs: how to write and read refs inside a message.
public struct ClusterCodingContext: Sendable {
    let refCoding: _RefCoding

    /// The text that stands for `ref` on the wire (its address with the node).
    public func encode<Message: Codable & Sendable>(_ ref: ActorRef<Message>) -> String {
        refCoding.wireAddress(of: ref)
    }

    /// The ref `text` stands for, resolved on this node.
    /// - Throws: `ClusterWireError` when `text` is no address.
    public func decodeRef<Message: Codable & Sendable>(_ type: Message.Type, from text: String) throws -> ActorRef<Message> {
        try refCoding.resolve(text, as: type)
    }
}

/// Which codec serializes which message type, under which *manifest* (the name the receiver
/// looks the type up by) and version.
///
/// A `Codable` type not registered travels as JSON under the manifest
/// `String(reflecting: Type.self)`, version 1. Register a type to give it a stable manifest
/// (so that renaming the Swift type does not break older nodes), a version (bumped when the
/// shape changes), old manifests it still answers to (`aliases`), or a binary codec.
///
/// How a receiver decides (docs/Cluster.md, "Serialization and versions"): a message whose
/// manifest is the recipient type's manifest or one of its aliases is decoded by the
/// recipient type's codec, given the sender's version; anything else becomes a dead letter
/// with reason `.notUnderstood` on the receiving node, its message an `UndeliveredRemoteMessage`
/// whose `why` says what was wrong.
///
/// A value type: build it before `ClusterSystem.join`; every node of a cluster should
/// register the same types (under the same manifests).
public struct ClusterCodecs: Sendable {
    struct Entry: Sendable {
        let manifest: String
        let version: Int
        /// `manifest@version`, as the wire carries it.
        let wireManifest: String
        let aliases: Set<String>
        let encode: @Sendable (any Sendable, ClusterCodingContext) throws -> [UInt8]
        let decode: @Sendable (ArraySlice<UInt8>, Int, ClusterCodingContext) throws -> any Sendable
    }

    private var entries: [ObjectIdentifier: Entry] = [:]

    public init() {}

    /// Registers `type` as JSON under `manifest` (version `version`), also accepting
    /// messages sent under any of `aliases` (earlier names of the type).
    public mutating func register<Message: Codable & Sendable>(
        _ type: Message.Type, manifest: String, version: Int = 1, aliases: Set<String> = []
    ) {
        register(type, manifest: manifest, version: version, aliases: aliases, codec: JSONMessageCodec<Message>())
    }

    /// Registers `type` with a hand-written `codec`. (`Codable` still: a ref to an actor can
    /// travel only when its message type is, and the codec replaces JSON for it.)
    public mutating func register<Message: Codable & Sendable>(
        _ type: Message.Type, manifest: String, version: Int = 1, aliases: Set<String> = [],
        codec: some ClusterMessageCodec<Message>
    ) {
        precondition(!manifest.isEmpty && !manifest.contains("@"), "a manifest is a non-empty name without '@'")
        entries[ObjectIdentifier(type)] = Entry(
            manifest: manifest, version: version, wireManifest: "\(manifest)@\(version)", aliases: aliases,
            encode: { message, context in try codec.encode(message as! Message, context: context) },
            decode: { bytes, version, context in try codec.decode(bytes, version: version, context: context) })
    }

    /// The entry for `type`: the registered one, or JSON under the type's full name.
    func entry<Message: Codable & Sendable>(for type: Message.Type) -> Entry {
        entries[ObjectIdentifier(type)] ?? Self.defaultEntry(for: type)
    }

    static func defaultEntry<Message: Codable & Sendable>(for type: Message.Type) -> Entry {
        let codec = JSONMessageCodec<Message>()
        return Entry(
            manifest: String(reflecting: type), version: 1, wireManifest: "\(String(reflecting: type))@1", aliases: [],
            encode: { message, context in try codec.encode(message as! Message, context: context) },
            decode: { bytes, version, context in try codec.decode(bytes, version: version, context: context) })
    }
}

extension ClusterCodecs.Entry {
    /// Decodes a message sent under `wireManifest` for a recipient of this entry's type, or
    /// says why not.
    func decodeMessage(_ payload: ArraySlice<UInt8>, wireManifest sent: String, context: ClusterCodingContext) -> _Decoded {
        // The common case: a sender with the same registration.
        if sent == wireManifest {
            do {
                return .message(try decode(payload, version, context))
            } catch {
                return .refused(why: "'\(sent)' could not be decoded: \(error)")
            }
        }
        let (name, version) = Self.split(sent)
        guard name == manifest || aliases.contains(name) else {
            return .refused(why: "manifest '\(name)' is not the recipient's type '\(manifest)'")
        }
        do {
            return .message(try decode(payload, version, context))
        } catch {
            let newer = version > self.version ? " (sent as version \(version); this node knows up to \(self.version))" : ""
            return .refused(why: "'\(sent)' could not be decoded\(newer): \(error)")
        }
    }

    static func split(_ wireManifest: String) -> (String, Int) {
        guard let at = wireManifest.lastIndex(of: "@"), let version = Int(wireManifest[wireManifest.index(after: at)...]) else {
            return (wireManifest, 1)
        }
        return (String(wireManifest[..<at]), version)
    }
}

/// A message decoded for its recipient, or why not (a `.notUnderstood` dead letter).
enum _Decoded {
    case message(any Sendable)
    case refused(why: String)
}
