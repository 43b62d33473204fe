/// A ref target that converts messages and forwards them to another actor (see
/// `ActorContext.messageAdapter`). The conversion runs on the sender's thread, through the owner's
/// `MessageAdapters`: the most recently registered adapter whose type matches the message.
// Immutable after init (the adapters registry has its own lock).
final class AdapterTarget<From: Sendable, To: Sendable>: ActorRefTarget<From>, @unchecked Sendable {
    let owner: ActorRefTarget<To>
    let adapters: MessageAdapters<To>

    init(owner: ActorRefTarget<To>, adapters: MessageAdapters<To>, address: ActorAddress) {
        self.owner = owner
        self.adapters = adapters
        super.init(address: address, system: owner.system)
    }

    override func tell(_ message: From) -> TellResult {
        do {
            return owner.tell(try adapters.convert(message))
        } catch {
            // As if the owner had failed handling it (Akka runs adapters inside the actor):
            // accepted from the sender's side, a failure of the owner, supervised as any other.
            owner.sendSystem(.adapterFailed(error, message: message))
            return .enqueued
        }
    }

    override func send(_ message: From) async throws {
        let converted: To
        do {
            converted = try adapters.convert(message)
        } catch {
            owner.sendSystem(.adapterFailed(error, message: message))
            return
        }
        try await owner.send(converted)
    }

    /// Watching an adapter watches its owner.
    override var watchedTarget: AnyTarget { owner }

    override func sendSystem(_ message: SystemMessage) {
        owner.sendSystem(message)
    }

    override func sendTerminatedAfterQueuedMessages(_ watched: AnyTarget, failure: (any Error)?) {
        owner.sendTerminatedAfterQueuedMessages(watched, failure: failure)
    }
}
