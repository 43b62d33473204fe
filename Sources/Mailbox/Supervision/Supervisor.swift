import Foundation

/// Erlang/OTP-style supervision trees: a supervisor actor starts children from specifications
/// and restarts them by a strategy, within an intensity/period limit.
///
/// ```swift
/// let tree = try system.spawn(
///     Supervisor.behavior(strategy: .oneForOne, intensity: 3, period: .seconds(5), children: [
///         ChildSpec(id: "db") { database() },
///         ChildSpec(id: "cache", restart: .transient) { cache() },
///     ]),
///     name: "app")
/// ```
///
/// - A child that fails and whose own `supervise` rules do not decide (or escalate) is
///   suspended: its mailbox keeps filling, nothing is handled. The supervisor then restarts it
///   *in place* (same ref, queued messages kept in order, the failing message dropped) together
///   with the set its strategy names:
///   - `oneForOne`: the failed child only;
///   - `allForOne`: every child;
///   - `restForOne`: the failed child and every child started after it.
///   The set is stopped one child at a time in reverse start order (each child's `preRestart`
///   runs and its own children stop), then started one at a time in start order (each child's
///   `setup` runs before the next child is started), as OTP does.
/// - Restart types: `permanent` children are always restarted, `transient` ones only after a
///   failure, `temporary` ones never (a temporary child that fails or is stopped, or that a
///   strategy would restart, is stopped and forgotten).
/// - Children start one at a time, in order: the supervisor spawns the next child once the
///   previous one's `setup` has run (for a child that is a supervisor, once its own children
///   have started).
/// - A child that *terminated* (it stopped itself, or was stopped from outside) and must be
///   restarted is spawned again from its specification: a new actor with the same name and a
///   new ref. Find it with `SupervisorMessage.whichChildren`.
/// - Intensity/period: more than `intensity` restarts within any `period` (a sliding window,
///   like `SupervisorStrategy.restart(limit:within:)`) and the supervisor gives up, as in OTP:
///   it publishes `ActorSystemEvent.failed` with a `SupervisorIntensityError` (and the decision
///   `stop`), stops its children newest first, and terminates with a *shutdown* exit. A parent
///   `Supervisor` leaves a transient child that shut down stopped, and spawns a permanent one
///   again, counting that against its own intensity; the supervisor's own `supervise` rules
///   and the guardian strategy do not restart it (a guardian `.escalate` shuts the system down).
/// - Dynamic children (OTP `start_child`, `terminate_child`, `restart_child`, `delete_child`,
///   `count_children`): see `SupervisorMessage`. They are lost when the supervisor restarts.
///
/// Thread-safety: the supervisor is an actor; talk to it with `SupervisorMessage`s.
public enum Supervisor {
    /// Which children are restarted with a failed one: OTP's `strategy` supervisor flag
    /// (`one_for_one`, `one_for_all`, `rest_for_one`).
    ///
    /// Not to be confused with `SupervisorStrategy`, which decides *what* happens to one failed
    /// actor (restart, resume, stop, escalate, with limits and back-off). A restart scope
    /// decides *which* of a `Supervisor`'s children restart together once a restart is decided.
    public enum RestartScope: Sendable, Equatable {
        /// Only the failed child.
        case oneForOne
        /// Every child.
        case allForOne
        /// The failed child and every child started after it.
        case restForOne
    }

    /// The former name of `RestartScope`.
    @available(*, deprecated, renamed: "RestartScope")
    public typealias Strategy = RestartScope

    /// A supervisor behavior: spawns `children` in order when it starts, then supervises them.
    ///
    /// - Parameters:
    ///   - strategy: which children restart with a failed one (OTP's `strategy` flag).
    ///   - intensity: restarts allowed within `period` (OTP's default: 1).
    ///   - period: the sliding window for `intensity` (OTP's default: 5 seconds), on the
    ///     supervisor's `DateScheduler`.
    /// - Precondition: child ids are unique valid actor names; `intensity >= 0`; `period > 0`.
    public static func behavior(
        strategy: RestartScope, intensity: Int = 1, period: Duration = .seconds(5), children: [ChildSpec]
    ) -> Behavior<SupervisorMessage> {
        precondition(intensity >= 0, "intensity cannot be negative, not \(intensity)")
        precondition(period > .zero, "period must be positive, not \(period)")
        precondition(Set(children.map(\.id)).count == children.count, "child ids must be unique: \(children.map(\.id))")
        return .object { context in
            try SupervisorBehavior(context: context, strategy: strategy, intensity: intensity, period: period, specs: children)
        }
    }
}

extension AnyActorRef {
    /// This ref with its message type, if the actor takes `Message`s.
    public func typed<Message: Sendable>(as type: Message.Type) -> ActorRef<Message>? {
        (target as? ActorRefTarget<Message>).map(ActorRef.init)
    }
}
