/// How many children a `Supervisor` has, by kind: OTP's `count_children`.
///
/// Thread-safety: a value, `Sendable`.
public struct SupervisorChildCount: Sendable, Hashable, CustomStringConvertible {
    /// Child specs the supervisor keeps, running or not.
    public var specs: Int
    /// Children running now.
    public var active: Int
    /// Specs whose child is itself a `Supervisor` (`ChildSpec.type == .supervisor`), running
    /// or not.
    public var supervisors: Int
    /// Specs whose child is a worker, running or not.
    public var workers: Int

    /// A count; `specs` should equal `supervisors + workers`.
    public init(specs: Int, active: Int, supervisors: Int, workers: Int) {
        self.specs = specs
        self.active = active
        self.supervisors = supervisors
        self.workers = workers
    }

    public var description: String {
        "specs: \(specs), active: \(active), supervisors: \(supervisors), workers: \(workers)"
    }
}
