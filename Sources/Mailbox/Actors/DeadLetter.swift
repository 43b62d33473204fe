/// A message that was not delivered because nobody could receive it, and why.
///
/// Published as `ActorSystemEvent.deadLetter` (observe it with `ActorSystem.deadLetters`) and
/// counted in `ActorSystem.deadLetterCount`. A message dropped for lack of room is not a dead
/// letter but a `Dropped` (Akka draws the same line).
public struct DeadLetter: Sendable, CustomStringConvertible {
    /// Why a message was not delivered: the reason of a dead letter, of a `Dropped` message,
    /// and of a refused `tell` (`TellResult.dropped`).
    public enum Reason: Sendable, Equatable, CustomStringConvertible {
        /// The recipient had terminated (or terminated with the message still queued).
        case recipientTerminated
        /// The recipient's bounded mailbox was full; the policy says which message was dropped.
        /// A drop: published as `Dropped`, not as a dead letter.
        case mailboxFull(OverflowPolicy)
        /// A reply arrived after its ask had completed (timed out or cancelled).
        case lateReply
        /// The message was sent to `ActorSystem.deadLetters` or a ref with no actor behind it.
        case noRecipient
        /// The recipient was waiting out a restart back-off and its stash was full. A drop:
        /// published as `Dropped`, not as a dead letter.
        case backoffStashFull
        /// The message could not cross to or from another node: the receiving node could not
        /// turn it into a message of the recipient's type (an unknown manifest, a newer
        /// version, bytes its codec refused), or the sending node could not encode it. The
        /// dead letter's message says which (MailboxCluster's `UndeliveredRemoteMessage`).
        /// No payload, so that a `TellResult` stays a trivial value on every tell.
        case notUnderstood
        /// The bounded outbound queue to the recipient's node was full (the node is slow or
        /// unreachable). A drop: published as `Dropped`, on the sending node.
        case outboundQueueFull

        /// Whether the message was dropped for lack of room (`mailboxFull`, `backoffStashFull`)
        /// rather than for lack of a recipient.
        public var isDrop: Bool {
            switch self {
            case .mailboxFull, .backoffStashFull, .outboundQueueFull: return true
            case .recipientTerminated, .lateReply, .noRecipient, .notUnderstood: return false
            }
        }

        public var description: String {
            switch self {
            case .recipientTerminated: return "recipient terminated"
            case let .mailboxFull(policy): return "mailbox full (\(policy))"
            case .lateReply: return "late reply"
            case .noRecipient: return "no recipient"
            case .backoffStashFull: return "back-off stash full"
            case .notUnderstood: return "not understood by the other node"
            case .outboundQueueFull: return "outbound queue to the node full"
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
