/// Why `SignalProducer.drain(into:…)` ended a stream that its upstream did not end: the buffer
/// overflowed, the actor terminated or refused a message, or the drain was interrupted.
///
/// A struct with a private code, so new cases can be added without breaking users; compare
/// with the static members (`failure.code == .bufferOverflow`).
public struct DrainFailure: Error, Sendable, Equatable, CustomStringConvertible {
    /// What ended the drain, without details.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Value: Hashable, Sendable { case bufferOverflow, targetTerminated, notDelivered, interrupted }
        private let value: Value
        private init(_ value: Value) { self.value = value }

        /// A value arrived while `bufferLimit` values were waiting for the actor's demand, and
        /// the overflow policy is `.fail`.
        public static let bufferOverflow = Code(.bufferOverflow)
        /// The actor terminated before the stream ended. (Never told to the actor.)
        public static let targetTerminated = Code(.targetTerminated)
        /// The actor's bounded mailbox refused a message of the drain (see `deliveryFailure`).
        public static let notDelivered = Code(.notDelivered)
        /// The drain was disposed, or its upstream was interrupted: the stream ended without
        /// completing. Told to the actor (as Akka tells an `AbruptStageTerminationException`);
        /// the drain's own run is then interrupted, not failed.
        public static let interrupted = Code(.interrupted)

        public var description: String { "\(value)" }
    }

    /// The kind of failure.
    public let code: Code
    /// The actor the drain was sending to.
    public let target: ActorAddress
    /// The buffer's limit, for `.bufferOverflow`.
    public let bufferLimit: Int?
    /// Why a message was not delivered, for `.notDelivered`.
    public let deliveryFailure: DeadLetter.Reason?

    init(code: Code, target: ActorAddress, bufferLimit: Int? = nil, deliveryFailure: DeadLetter.Reason? = nil) {
        self.code = code
        self.target = target
        self.bufferLimit = bufferLimit
        self.deliveryFailure = deliveryFailure
    }

    public var description: String {
        switch code {
        case .bufferOverflow:
            return "drain into \(target.path) overflowed its buffer of \(bufferLimit ?? 0) values"
        case .targetTerminated:
            return "drain into \(target.path) ended: the actor terminated"
        case .notDelivered:
            return "drain into \(target.path) ended: a message was not delivered (\(deliveryFailure.map { "\($0)" } ?? "unknown reason"))"
        default:
            return "drain into \(target.path) was interrupted"
        }
    }
}
