import Mailbox

/// An actor on the node that sends or receives a frame: its path and incarnation (the node is
/// the frame's sender or recipient).
struct _WireActor: Hashable, Sendable {
    var path: String
    var incarnation: UInt64
}

/// What nodes send each other. Directed frames go to the recipient node's own subject (one
/// subject per node incarnation, so NATS keeps them in the order the sender published them);
/// heartbeats and registries go to subjects every node follows.
///
/// Layout: `M`, version 1, the kind, the sender node (name, incarnation), the link sequence
/// number (0 for frames outside the link's order), then the kind's fields.
enum _Frame: Equatable, Sendable {
    /// A user message for `recipient`, serialized under `manifest`.
    case message(recipient: _WireActor, manifest: String, payload: ArraySlice<UInt8>)
    /// The sender's `watcher` wants to hear when the receiver's `watched` terminates.
    case watch(watched: _WireActor, watcher: _WireActor)
    /// The sender's `watcher` no longer wants to.
    case unwatch(watched: _WireActor, watcher: _WireActor)
    /// The sender's `actor` terminated (with a failure's description, if it failed).
    case terminated(actor: _WireActor, failure: String?)
    /// The receiver has everything up to `sequence` of the sender's link: credit returned.
    case ack(sequence: UInt64)
    /// The sender has sent up to `sequence` on its link: what the receiver lacks is lost.
    case probe(sequence: UInt64)
    /// A liveness request (answered on the NATS reply subject).
    case ping
    /// The receiver's incarnation was downed: it must not come back under it.
    case downed
    /// The sender's membership heartbeat.
    case heartbeat(status: MemberStatus, system: String, registryVersion: UInt64)
    /// The sender leaves the cluster (an orderly shutdown).
    case leaving
    /// The sender's whole receptionist registry (the newest `version` wins), its actors in
    /// actor system `system`.
    case registry(version: UInt64, system: String, entries: [_RegistryEntry])
    /// The sender lacks the receiver's newest registry: send it.
    case registryRequest
    /// A `distributed func` call on the receiver's distributed actor `actor` (a NATS request:
    /// the result goes to its reply subject).
    case call(actor: _WireActor, target: String, generics: [String], arguments: [ArraySlice<UInt8>])
    /// A user message for one of the receiver's actors registered under service key `key`
    /// (a queue-group router's: NATS chose the receiver among the nodes serving the key).
    case queued(key: String, manifest: String, payload: ArraySlice<UInt8>)
    /// The sender watches these of the receiver's actors (after frames were lost between
    /// them): the receiver adds the watches it lacks and answers `terminated` for actors gone.
    case watchSync(actors: [_WireActor])
    /// The receiver should send its `watchSync` to the sender (the sender lost frames from it).
    case watchSyncRequest

    var kind: UInt8 {
        switch self {
        case .message: 1
        case .watch: 2
        case .unwatch: 3
        case .terminated: 4
        case .ack: 5
        case .probe: 6
        case .ping: 7
        case .downed: 8
        case .heartbeat: 9
        case .leaving: 10
        case .registry: 11
        case .registryRequest: 12
        case .call: 13
        case .queued: 14
        case .watchSync: 15
        case .watchSyncRequest: 16
        }
    }

    /// Whether the frame travels in the link's order and takes a sequence number.
    var isSequenced: Bool {
        switch self {
        case .message, .watch, .unwatch, .terminated: true
        default: false
        }
    }
}

/// The bytes of a `.message` envelope up to its payload, which are the same for every message
/// one sender node sends one recipient under one manifest: encoded once, copied per message.
struct _MessageHeader: Sendable {
    let bytes: [UInt8]

    init(from: ClusterNode, recipient: _WireActor, manifest: String) {
        var bytes = _Envelope(from: from, sequence: 0, frame: .message(recipient: recipient, manifest: manifest, payload: [][...])).encoded()
        bytes.removeLast(4)  // the payload's length, written per message
        self.bytes = bytes
    }

    /// The whole envelope of a message with `payload` (sequence number 0, patched by the link).
    func frame(_ payload: [UInt8]) -> [UInt8] {
        var writer = _ByteWriter(capacity: bytes.count + 4 + payload.count)
        writer.bytes.append(contentsOf: bytes)
        writer.run(payload)
        return writer.bytes
    }
}

/// One registration in a node's receptionist registry.
struct _RegistryEntry: Hashable, Sendable {
    var key: String
    var actor: _WireActor
}

/// A frame with its sender and link sequence number.
struct _Envelope: Equatable, Sendable {
    var from: ClusterNode
    var sequence: UInt64
    var frame: _Frame

    static let magic: UInt8 = 0x4D
    static let version: UInt8 = 1

    func encoded() -> [UInt8] {
        var writer = _ByteWriter(capacity: 64 + payloadSize)
        writer.u8(Self.magic)
        writer.u8(Self.version)
        writer.u8(frame.kind)
        writer.string(from.name)
        writer.u64(from.incarnation)
        writer.u64(sequence)
        switch frame {
        case let .message(recipient, manifest, payload):
            writer.actor(recipient)
            writer.string(manifest)
            writer.run(payload)
        case let .watch(watched, watcher), let .unwatch(watched, watcher):
            writer.actor(watched)
            writer.actor(watcher)
        case let .terminated(actor, failure):
            writer.actor(actor)
            writer.u8(failure == nil ? 0 : 1)
            if let failure { writer.string(failure) }
        case let .ack(sequence), let .probe(sequence):
            writer.u64(sequence)
        case .ping, .downed, .leaving, .registryRequest, .watchSyncRequest:
            break
        case let .watchSync(actors):
            writer.u32(UInt32(actors.count))
            for actor in actors { writer.actor(actor) }
        case let .heartbeat(status, system, registryVersion):
            writer.u8(status.wireValue)
            writer.string(system)
            writer.u64(registryVersion)
        case let .call(actor, target, generics, arguments):
            writer.actor(actor)
            writer.string(target)
            writer.u32(UInt32(generics.count))
            for generic in generics { writer.string(generic) }
            writer.u32(UInt32(arguments.count))
            for argument in arguments { writer.run(argument) }
        case let .queued(key, manifest, payload):
            writer.string(key)
            writer.string(manifest)
            writer.run(payload)
        case let .registry(version, system, entries):
            writer.u64(version)
            writer.string(system)
            writer.u32(UInt32(entries.count))
            for entry in entries {
                writer.string(entry.key)
                writer.actor(entry.actor)
            }
        }
        return writer.bytes
    }

    private var payloadSize: Int {
        switch frame {
        case let .message(_, _, payload), let .queued(_, _, payload): payload.count
        default: 0
        }
    }

    static func decode(_ bytes: [UInt8]) throws(ClusterWireError) -> _Envelope {
        var reader = _ByteReader(bytes)
        guard try reader.u8() == magic else { throw ClusterWireError("not a cluster frame (bad magic byte)") }
        let version = try reader.u8()
        guard version == Self.version else { throw ClusterWireError("frame version \(version); this node speaks \(Self.version)") }
        let kind = try reader.u8()
        let from = ClusterNode(name: try reader.string(), incarnation: try reader.u64())
        let sequence = try reader.u64()
        let frame: _Frame
        switch kind {
        case 1:
            frame = .message(recipient: try reader.actor(), manifest: try reader.string(), payload: try reader.run())
        case 2:
            frame = .watch(watched: try reader.actor(), watcher: try reader.actor())
        case 3:
            frame = .unwatch(watched: try reader.actor(), watcher: try reader.actor())
        case 4:
            let actor = try reader.actor()
            let flag = try reader.u8()
            guard flag <= 1 else { throw ClusterWireError("failure flag \(flag)") }
            frame = .terminated(actor: actor, failure: flag == 0 ? nil : try reader.string())
        case 5:
            frame = .ack(sequence: try reader.u64())
        case 6:
            frame = .probe(sequence: try reader.u64())
        case 7:
            frame = .ping
        case 8:
            frame = .downed
        case 9:
            let raw = try reader.u8()
            guard let status = MemberStatus(wireValue: raw) else { throw ClusterWireError("unknown member status \(raw)") }
            frame = .heartbeat(status: status, system: try reader.string(), registryVersion: try reader.u64())
        case 10:
            frame = .leaving
        case 11:
            let version = try reader.u64()
            let system = try reader.string()
            let count = Int(try reader.u32())
            // Each entry takes at least 16 bytes: a count beyond that is a lie, not an allocation.
            guard count <= (bytes.count - reader.offset) / 16 else { throw ClusterWireError("registry of \(count) entries in \(bytes.count) bytes") }
            var entries: [_RegistryEntry] = []
            entries.reserveCapacity(count)
            for _ in 0..<count {
                entries.append(_RegistryEntry(key: try reader.string(), actor: try reader.actor()))
            }
            frame = .registry(version: version, system: system, entries: entries)
        case 12:
            frame = .registryRequest
        case 13:
            let actor = try reader.actor()
            let target = try reader.string()
            let genericCount = Int(try reader.u32())
            guard genericCount <= (bytes.count - reader.offset) / 4 else { throw ClusterWireError("\(genericCount) generic substitutions in \(bytes.count) bytes") }
            var generics: [String] = []
            for _ in 0..<genericCount { generics.append(try reader.string()) }
            let argumentCount = Int(try reader.u32())
            guard argumentCount <= (bytes.count - reader.offset) / 4 else { throw ClusterWireError("\(argumentCount) arguments in \(bytes.count) bytes") }
            var arguments: [ArraySlice<UInt8>] = []
            for _ in 0..<argumentCount { arguments.append(try reader.run()) }
            frame = .call(actor: actor, target: target, generics: generics, arguments: arguments)
        case 14:
            frame = .queued(key: try reader.string(), manifest: try reader.string(), payload: try reader.run())
        case 15:
            let count = Int(try reader.u32())
            // Each actor takes at least 12 bytes: a count beyond that is a lie, not an allocation.
            guard count <= (bytes.count - reader.offset) / 12 else { throw ClusterWireError("watch sync of \(count) actors in \(bytes.count) bytes") }
            var actors: [_WireActor] = []
            actors.reserveCapacity(count)
            for _ in 0..<count { actors.append(try reader.actor()) }
            frame = .watchSync(actors: actors)
        case 16:
            frame = .watchSyncRequest
        default:
            throw ClusterWireError("unknown frame kind \(kind)")
        }
        guard reader.isAtEnd else { throw ClusterWireError("\(bytes.count - reader.offset) bytes after a frame of kind \(kind)") }
        return _Envelope(from: from, sequence: sequence, frame: frame)
    }
}


extension _ByteWriter {
    mutating func actor(_ actor: _WireActor) {
        string(actor.path)
        u64(actor.incarnation)
    }
}

extension _ByteReader {
    mutating func actor() throws(ClusterWireError) -> _WireActor {
        _WireActor(path: try string(), incarnation: try u64())
    }
}
