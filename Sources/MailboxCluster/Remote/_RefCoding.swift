import Mailbox
import Synchronization

/// Writes refs inside messages as their address (with the node) and resolves addresses on
/// arrival. An encode's coding also collects the ask reply refs it exported, so that the
/// question goes out with a reply subject NATS answers with "no responders" when the
/// recipient's node is gone; a decode's has nothing to collect (and allocates nothing).
struct _RefCoding: ActorRefCoding, Sendable {
    private let core: _ClusterCore
    /// The incarnations of the ask reply refs exported by this encode (nil: a decode).
    let exportedAsks: _AskCollector?

    /// A coding for encoding (`collecting`) or decoding.
    init(core: _ClusterCore, collecting: Bool = false) {
        self.core = core
        self.exportedAsks = collecting ? _AskCollector() : nil
    }

    func encode<Message: Codable & Sendable>(_ ref: ActorRef<Message>, to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(wireAddress(of: ref))
    }

    func decodeRef<Message: Codable & Sendable>(_ type: Message.Type, from decoder: any Decoder) throws -> ActorRef<Message> {
        let text = try decoder.singleValueContainer().decode(String.self)
        return try resolve(text, as: type)
    }

    func wireAddress<Message: Codable & Sendable>(of ref: ActorRef<Message>) -> String {
        if ref.address.node != nil { return ref.address.description }
        let address = core.export(ref)
        if ref.isAskReply { exportedAsks?.asks.withLock { $0.append(address.incarnation) } }
        return address.description
    }

    func resolve<Message: Codable & Sendable>(_ text: String, as type: Message.Type) throws -> ActorRef<Message> {
        guard let address = Self.parse(text) else {
            throw ClusterWireError("\(text.debugDescription) is not an actor address")
        }
        return core.resolve(address, as: type)
    }

    /// A cluster address (one with a node) back from its text.
    static func parse(_ text: String) -> ActorAddress? {
        guard let address = ActorAddress(parsing: text), address.node != nil else { return nil }
        return address
    }
}

/// The ask reply refs one encode exported.
final class _AskCollector: Sendable {
    let asks = Mutex<[UInt64]>([])
}
