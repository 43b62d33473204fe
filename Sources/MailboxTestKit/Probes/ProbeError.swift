import Mailbox

/// Why a `TestProbe` expectation failed. Its description names the probe, what was expected,
/// what arrived instead (if anything) and how long the probe waited — in virtual time when the
/// system runs on a `TestScheduler`, else in wall-clock time.
///
/// A struct wrapping a code, so that new kinds of failure can be added without breaking users:
/// compare `code` against the static members of `ProbeError.Code`.
public struct ProbeError: Error, Sendable, CustomStringConvertible {
    /// The kind of failure.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Value: Hashable, Sendable {
            case timedOut, unexpectedMessage, mismatch
        }

        private let value: Value

        private init(_ value: Value) {
            self.value = value
        }

        /// Nothing (or not enough) arrived before the deadline.
        public static let timedOut = Code(.timedOut)
        /// A message arrived while the probe expected none.
        public static let unexpectedMessage = Code(.unexpectedMessage)
        /// A message arrived but was not the one expected.
        public static let mismatch = Code(.mismatch)

        public var description: String { "\(value)" }
    }

    /// The kind of failure.
    public let code: Code
    /// The probe's path, e.g. `/user/probe`.
    public let probe: String
    /// What the expectation wanted, in words (e.g. `a message equal to pong`).
    public let expected: String
    /// What arrived instead, described; empty when nothing arrived.
    public let received: [String]
    /// How long the probe waited before failing.
    public let waited: Duration
    /// Whether `waited` is virtual time (the system runs on a `TestScheduler`).
    public let isVirtualTime: Bool

    init(code: Code, probe: String, expected: String, received: [String], waited: Duration, isVirtualTime: Bool) {
        self.code = code
        self.probe = probe
        self.expected = expected
        self.received = received
        self.waited = waited
        self.isVirtualTime = isVirtualTime
    }

    public var description: String {
        let clock = isVirtualTime ? "virtual time" : "wall-clock time"
        let arrived = received.isEmpty ? "nothing arrived" : "received \(received.joined(separator: ", "))"
        switch code {
        case .unexpectedMessage:
            return "probe \(probe) expected \(expected), but \(arrived) after \(waited) of \(clock)"
        case .mismatch:
            return "probe \(probe) expected \(expected), but \(arrived) (after \(waited) of \(clock))"
        default:
            return "probe \(probe) timed out after \(waited) of \(clock) waiting for \(expected); \(arrived)"
        }
    }
}
