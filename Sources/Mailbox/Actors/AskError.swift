/// Why an ask failed.
///
/// A struct with a private code, so new cases can be added without breaking users; compare
/// with the static members (`error.code == .timedOut`).
public struct AskError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, without details.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Value: Hashable, Sendable { case timedOut, notDelivered }
        private let value: Value
        private init(_ value: Value) { self.value = value }

        /// No reply arrived within the time-out.
        public static let timedOut = Code(.timedOut)
        /// The question was not delivered (the target had terminated, or its mailbox was full).
        public static let notDelivered = Code(.notDelivered)

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
        return "ask to \(target.path) with \(messageType) was not delivered: \(deliveryFailure.map { "\($0)" } ?? "unknown reason")"
    }
}
