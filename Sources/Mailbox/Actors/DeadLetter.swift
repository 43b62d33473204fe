/// A message that was not delivered, and why.
public struct DeadLetter: Sendable, CustomStringConvertible {
    /// Why a message became a dead letter.
    public enum Reason: Sendable, Equatable, CustomStringConvertible {
        /// The recipient had terminated (or terminated with the message still queued).
        case recipientTerminated
        /// The recipient's bounded mailbox was full; the policy says which message was dropped.
        case mailboxFull(OverflowPolicy)
        /// A reply arrived after its ask had completed (timed out or cancelled).
        case lateReply
        /// The message was sent to `ActorSystem.deadLetters` or a ref with no actor behind it.
        case noRecipient
        /// The recipient was waiting out a restart back-off and its stash was full.
        case backoffStashFull

        public var description: String {
            switch self {
            case .recipientTerminated: return "recipient terminated"
            case let .mailboxFull(policy): return "mailbox full (\(policy))"
            case .lateReply: return "late reply"
            case .noRecipient: return "no recipient"
            case .backoffStashFull: return "back-off stash full"
            }
        }
    }

    /// Who the message was for.
    public let recipient: ActorAddress
    /// The message itself.
    public let message: any Sendable
    /// Why it was not delivered.
    public let reason: Reason

    public var description: String {
        "dead letter to \(recipient.path) (\(reason)): \(message)"
    }
}
