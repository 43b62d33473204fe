import Mailbox
import MailboxNATS

// Queue groups: a router over a service key whose every message goes to ONE node serving the
// key, chosen by NATS (a queue subscription per key on every node with a local registration),
// then to one of that node's registered actors in turn.

extension _Subjects {
    /// The subject a queue-group router publishes `key`'s messages to.
    func queue(_ key: String) -> String {
        "\(prefix).q.\(key.isEmpty ? "=" : _Escaping.escape(key))"
    }

    /// The queue group every node serving a key joins (one per subject, so one name will do).
    static let queueGroup = "serving"
}

extension _ClusterCore {
    /// A queue-group router's path in dead letters: `/cluster/queue/<escaped key>`.
    static func queuePath(_ key: String) -> String {
        "/cluster/queue/\(_Escaping.escape(key))"
    }

    /// Subscribes to `key`'s queue subject while this node has a registration under it, and
    /// unsubscribes when it has none. Serialised by `queueSubscriptions`' lock, so the
    /// subscription follows the registry's latest state whatever the order of the calls.
    func syncQueueSubscription(_ key: String) {
        queueSubscriptions.withLockedValue { subscriptions in
            let serving = state.withLockedValue { !$0.isShutDown && !($0.localRegistry[key]?.isEmpty ?? true) }
            if serving, subscriptions[key] == nil {
                subscriptions[key] = try? transport.clusterSubscribe(to: subjects.queue(key), queue: _Subjects.queueGroup) { [weak self] message in
                    self?.receivedQueued(message)
                }
            } else if !serving, let subscription = subscriptions.removeValue(forKey: key) {
                subscription.dispose()
            }
        }
    }

    /// Ends every queue subscription (the node shuts down).
    func endQueueSubscriptions() {
        let subscriptions = queueSubscriptions.withLockedValue { subscriptions in
            defer { subscriptions = [:] }
            return Array(subscriptions.values)
        }
        for subscription in subscriptions { subscription.dispose() }
    }

    /// A queue-group message NATS chose this node for: delivered to the next of this node's
    /// actors registered under its key, or a dead letter if none is left (a question is then
    /// answered "recipient gone", so its ask fails at once).
    func receivedQueued(_ message: NATSMessage) {
        guard let envelope = try? _Envelope.decode(message.payload), case let .queued(key, manifest, payload) = envelope.frame else {
            state.withLockedValue { $0.statistics.malformedFrames += 1 }
            return
        }
        let export = state.withLockedValue { state -> _Export? in
            state.statistics.receivedMessages += 1
            guard let actors = state.localRegistry[key], !actors.isEmpty else { return nil }
            let turn = state.queueTurns[key, default: 0]
            state.queueTurns[key] = turn &+ 1
            return state.exports[actors[actors.index(actors.startIndex, offsetBy: turn % actors.count)]]
        }
        if let export {
            export.deliver(manifest, payload, envelope.from)
            return
        }
        system.publishUndeliveredMessage(
            UndeliveredRemoteMessage(manifest: manifest, payload: Array(payload), from: envelope.from, why: nil),
            to: ActorAddress(node: me, system: system.name, path: Self.queuePath(key), incarnation: 0),
            reason: .recipientTerminated)
        if let replyTo = message.replyTo { try? transport.publish(Self.recipientGone, to: replyTo, replyTo: nil, headers: nil) }
    }
}

/// The endpoint behind a queue-group router's ref: serializes each message once and publishes
/// it to the key's queue subject, where NATS hands it to one serving node.
final class _QueueGroupEndpoint<Message: Codable & Sendable>: RemoteEndpoint, Sendable {
    let key: String
    let address: ActorAddress
    let codec: ClusterCodecs.Entry
    private let core: _ClusterCore

    init(key: String, core: _ClusterCore) {
        self.key = key
        self.address = ActorAddress(node: core.me, system: core.system.name, path: _ClusterCore.queuePath(key), incarnation: 0)
        self.codec = core.configuration.codecs.entry(for: Message.self)
        self.core = core
    }

    func tell(_ message: Message) -> TellResult {
        core.sendQueued(message, to: self)
    }

    func send(_ message: Message) async throws {
        if case let .dropped(reason) = tell(message) { throw SendError(recipient: address, failure: reason) }
    }

    /// A router never terminates: watching it tells nothing.
    func watch(_ watcher: RemoteWatcher) {}

    func unwatch(_ watcher: RemoteWatcher) {}
}

extension _ClusterCore {
    /// Serializes `message` and publishes it to `endpoint`'s queue subject. Nobody serving the
    /// key (none listed) makes it a dead letter here; a question carries a reply subject on
    /// which NATS answers "no responders" if the listing was out of date.
    func sendQueued<Message: Codable & Sendable>(_ message: Message, to endpoint: _QueueGroupEndpoint<Message>) -> TellResult {
        let served = state.withLockedValue { state -> Bool in
            guard !state.isShutDown, !state.wasDowned else { return false }
            if !(state.localRegistry[endpoint.key]?.isEmpty ?? true) { return true }
            return state.registries.values.contains { $0.entries.contains { $0.key == endpoint.key } }
        }
        guard served else {
            system.publishUndeliveredMessage(message, to: endpoint.address, reason: .recipientTerminated)
            return .dropped(.recipientTerminated)
        }
        let coding = _RefCoding(core: self, collecting: true)
        let payload: [UInt8]
        do {
            payload = try endpoint.codec.encode(message, ClusterCodingContext(refCoding: coding))
        } catch {
            let why = "\(Message.self) could not be encoded: \(error)"
            system.publishUndeliveredMessage(UnencodableMessage(message: message, why: why), to: endpoint.address, reason: .notUnderstood)
            return .dropped(.notUnderstood)
        }
        let bytes = _Envelope(from: me, sequence: 0, frame: .queued(key: endpoint.key, manifest: endpoint.codec.wireManifest, payload: payload[...])).encoded()
        let asks = coding.exportedAsks?.asks.withLock { $0 } ?? []
        do throws(NATSError) {
            try transport.publish(bytes, to: subjects.queue(endpoint.key), replyTo: asks.first.map { subjects.noResponders(me, ask: $0) }, headers: nil)
        } catch {
            system.publishUndeliveredMessage(message, to: endpoint.address, reason: .recipientTerminated)
            return .dropped(.recipientTerminated)
        }
        sentMessages.add(1, ordering: .relaxed)
        return .enqueued
    }
}

/// Turns any string into letters, digits, `-`, `_` and `=XX` escapes (a subject token, a KV
/// key), reversibly.
enum _Escaping {
    static func escape(_ text: String) -> String {
        var escaped = ""
        escaped.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a") ... UInt8(ascii: "z"), UInt8(ascii: "A") ... UInt8(ascii: "Z"), UInt8(ascii: "0") ... UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"):
                escaped.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = String(byte, radix: 16, uppercase: true)
                escaped += "=" + (hex.count == 1 ? "0" + hex : hex)
            }
        }
        return escaped
    }

    static func unescape(_ escaped: String) -> String {
        var bytes: [UInt8] = []
        var utf8 = escaped.utf8.makeIterator()
        while let byte = utf8.next() {
            if byte == UInt8(ascii: "="), let high = utf8.next(), let low = utf8.next(), let value = UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16) {
                bytes.append(value)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
