import Mailbox

/// The endpoint behind a ref to an actor on another node: serializes what the ref is told,
/// sends it on the link to the node, and registers watches with the core.
final class _RemoteEndpoint<Message: Codable & Sendable>: RemoteEndpoint, Sendable {
    let address: ActorAddress
    let recipient: _WireActor
    let link: _PeerLink
    /// The message type's codec, looked up once.
    let codec: ClusterCodecs.Entry
    /// Every message frame's bytes up to its payload (sender, recipient, manifest), encoded once.
    let messageHeader: _MessageHeader
    /// Strong: a remote ref may outlive its `ClusterSystem` (it then finds its link closed).
    private let core: _ClusterCore

    init(address: ActorAddress, link: _PeerLink, core: _ClusterCore) {
        self.address = address
        self.recipient = _WireActor(path: address.path, incarnation: address.incarnation)
        self.link = link
        self.codec = core.configuration.codecs.entry(for: Message.self)
        self.messageHeader = _MessageHeader(from: core.me, recipient: recipient, manifest: codec.wireManifest)
        self.core = core
    }

    func tell(_ message: Message) -> TellResult {
        switch core.prepare(message, for: self) {
        case let .refused(reason):
            return .dropped(reason)
        case let .ready(prepared):
            return core.finish(message, for: self, outcome: link.send(prepared.bytes, sequenceOffset: prepared.sequenceOffset, replyTo: prepared.replyTo))
        }
    }

    func send(_ message: Message) async throws {
        let prepared: _Prepared
        switch core.prepare(message, for: self) {
        case let .refused(reason): throw SendError(recipient: address, failure: reason)
        case let .ready(value): prepared = value
        }
        while true {
            switch link.send(prepared.bytes, sequenceOffset: prepared.sequenceOffset, replyTo: prepared.replyTo) {
            case .sent:
                return
            case .closed:
                _ = core.finish(message, for: self, outcome: .closed)
                throw SendError(recipient: address, failure: .recipientTerminated)
            case .full:
                let open = await link.waitForRoom()
                try Task.checkCancellation()
                if !open {
                    _ = core.finish(message, for: self, outcome: .closed)
                    throw SendError(recipient: address, failure: .recipientTerminated)
                }
            }
        }
    }

    func watch(_ watcher: RemoteWatcher) {
        core.watch(recipient, on: link, by: watcher)
    }

    func unwatch(_ watcher: RemoteWatcher) {
        core.unwatch(recipient, on: link, by: watcher)
    }
}

/// A message serialized for the link, or why it could not be (already published).
enum _Preparation {
    case ready(_Prepared)
    case refused(DeadLetter.Reason)
}

/// A message serialized into its frame, ready for the link.
struct _Prepared {
    var bytes: [UInt8]
    var sequenceOffset: Int
    var replyTo: String?
}
