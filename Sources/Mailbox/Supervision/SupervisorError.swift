/// Why a `Supervisor` refused a request about one of its children: the error results of OTP's
/// `start_child`, `terminate_child`, `restart_child` and `delete_child`. (OTP's `restarting`
/// has no counterpart: a request waits until a restart in progress is over.)
///
/// A struct with a private code, so new cases can be added without breaking users; compare
/// with the static members (`error.code == .running`).
///
/// Thread-safety: an immutable value, `Sendable`.
public struct SupervisorError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, without details.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Value: Hashable, Sendable {
            case alreadyStarted, alreadyPresent, running, notFound, startFailed
        }
        private let value: Value
        private init(_ value: Value) { self.value = value }

        /// `startChild`: a child with that id is running (OTP `{already_started, Child}`);
        /// `child` is its ref.
        public static let alreadyStarted = Code(.alreadyStarted)
        /// `startChild`: the supervisor keeps a spec with that id, not running (OTP
        /// `already_present`); start it with `restartChild` or remove it with `deleteChild`.
        public static let alreadyPresent = Code(.alreadyPresent)
        /// `restartChild`, `deleteChild`: the child is running (OTP `running`).
        public static let running = Code(.running)
        /// No child with that id (OTP `not_found`).
        public static let notFound = Code(.notFound)
        /// `startChild`, `restartChild`: the child could not be spawned, or its `setup` threw
        /// (OTP `{error, Reason}`); `underlying` is the error. A spec given to `startChild` is
        /// then discarded; a restarted child's spec is kept, not running.
        public static let startFailed = Code(.startFailed)

        public var description: String { "\(value)" }
    }

    /// The kind of error.
    public let code: Code
    /// The supervisor.
    public let supervisor: ActorAddress
    /// The child's id.
    public let id: String
    /// The running child, for `.alreadyStarted`.
    public let child: AnyActorRef?
    /// Why the child did not start, for `.startFailed`.
    public let underlying: (any Error)?

    public var description: String {
        let subject = "child '\(id)' of \(supervisor.path)"
        switch code {
        case .alreadyStarted: return "\(subject) is already started as \(child?.path ?? "?")"
        case .alreadyPresent: return "\(subject) is already present (not running)"
        case .running: return "\(subject) is running"
        case .notFound: return "no \(subject)"
        default: return "\(subject) failed to start: \(underlying.map { "\($0)" } ?? "unknown reason")"
        }
    }

    init(_ code: Code, supervisor: ActorAddress, id: String, child: AnyActorRef? = nil, underlying: (any Error)? = nil) {
        self.code = code
        self.supervisor = supervisor
        self.id = id
        self.child = child
        self.underlying = underlying
    }
}
