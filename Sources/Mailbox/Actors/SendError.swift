/// Why `send(_:)` could not deliver a message.
public struct SendError: Error, Sendable, CustomStringConvertible {
    /// Where the message was going.
    public let recipient: ActorAddress
    /// What happened to it: it was published as a dead letter for this reason.
    public let reason: DeadLetter.Reason

    public var description: String {
        "message to \(recipient.path) not delivered: \(reason)"
    }
}
