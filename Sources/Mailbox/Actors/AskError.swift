/// Why an ask failed.
///
/// A struct with a private code, so new cases can be added without breaking users; compare
/// with the static members (`error.code == .timedOut`).
public struct AskError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, without details.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Value: Hashable, Sendable { case timedOut, notDelivered, invalidTimeout, systemShutDown }
        private let value: Value
        private init(_ value: Value) { self.value = value }

        /// No reply arrived within the time-out.
        public static let timedOut = Code(.timedOut)
        /// The question was not delivered (the target had terminated, or its mailbox was full).
        public static let notDelivered = Code(.notDelivered)
        /// The time-out was zero or negative: no answer could ever be awaited, so the question
        /// was not sent (nothing was asked, no work was done for it).
        public static let invalidTimeout = Code(.invalidTimeout)
        /// The actor system shut down before a reply came: `shutdown()` fails every ask still
        /// waiting once the actors have stopped, and an ask started after it fails at once.
        public static let systemShutDown = Code(.systemShutDown)

        public var description: String { "\(value)" }
    }

    /// The kind of failure.
    public let code: Code
    /// The actor that was asked.
    public let target: ActorAddress
    /// The type of the message that was sent.
    public let messageType: String
    /// The time-out the ask had.
    public let timeout: Duration
    /// Why the message was not delivered, for `.notDelivered`.
    public let deliveryFailure: DeadLetter.Reason?

    public var description: String {
        if code == .timedOut {
            return "ask to \(target.path) with \(messageType) timed out after \(timeout)"
        }
        if code == .systemShutDown {
            return "ask to \(target.path) with \(messageType) failed: the actor system shut down before a reply came"
        }
        if code == .invalidTimeout {
            return "ask to \(target.path) with \(messageType) not sent: its time-out (\(timeout)) must be positive"
        }
        return "ask to \(target.path) with \(messageType) was not delivered: \(deliveryFailure.map { "\($0)" } ?? "unknown reason")"
    }

    /// The error for an ask whose time-out cannot be honoured (not positive).
    static func invalidTimeout(target: ActorAddress, messageType: String, timeout: Duration) -> AskError {
        AskError(code: .invalidTimeout, target: target, messageType: messageType, timeout: timeout, deliveryFailure: nil)
    }
}
