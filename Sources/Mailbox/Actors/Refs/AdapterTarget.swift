/// A ref target that converts messages and forwards them to another actor (see
/// `ActorContext.messageAdapter`). The conversion runs on the sender's thread.
// Immutable after init.
final class AdapterTarget<From: Sendable, To: Sendable>: ActorRefTarget<From>, @unchecked Sendable {
    let owner: ActorRefTarget<To>
    let transform: @Sendable (From) -> To

    init(owner: ActorRefTarget<To>, transform: @escaping @Sendable (From) -> To, address: ActorAddress) {
        self.owner = owner
        self.transform = transform
        super.init(address: address, system: owner.system)
    }

    override func tell(_ message: From) -> TellResult {
        owner.tell(transform(message))
    }

    override func send(_ message: From) async throws {
        try await owner.send(transform(message))
    }

    /// Watching an adapter watches its owner.
    override var watchedTarget: AnyTarget { owner }

    override func sendSystem(_ message: SystemMessage) {
        owner.sendSystem(message)
    }
}
