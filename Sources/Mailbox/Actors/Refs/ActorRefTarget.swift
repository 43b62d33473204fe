/// A target that accepts messages of one type.
@usableFromInline
// Adds only an immutable reference to `AnyTarget`.
class ActorRefTarget<Message: Sendable>: AnyTarget, @unchecked Sendable {
    /// The system the target belongs to.
    @usableFromInline
    let system: ActorSystem

    @usableFromInline
    init(address: ActorAddress, system: ActorSystem, isActorCell: Bool = false, parent: AnyTarget? = nil) {
        self.system = system
        super.init(address: address, isActorCell: isActorCell, parent: parent)
    }

    /// The scheduler whose clock times asks to this target.
    var askScheduler: any DateScheduler { system.timerScheduler }

    /// Messages queued for the target and not yet handled, user and system, the one in hand
    /// included, plus one while the actor restarts (its messages may then wait in the restart
    /// buffer); a snapshot, which also still counts the messages handled earlier in the current
    /// mailbox run. 0 for a target without a mailbox. Read by pool routing and resizers.
    @usableFromInline
    var mailboxDepth: Int { 0 }

    /// Whether the target is an actor that has terminated (false for other targets).
    @usableFromInline
    var hasTerminated: Bool { false }

    @usableFromInline
    func tell(_ message: Message) -> TellResult {
        system.publishUndelivered(message, to: address, reason: .noRecipient)
        return .dropped(.noRecipient)
    }

    func send(_ message: Message) async throws {
        let result = tell(message)
        if case let .dropped(reason) = result {
            throw SendError(recipient: address, reason: reason)
        }
    }
}
