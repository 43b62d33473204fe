import Mailbox

/// The error a failpoint throws when its `FaultPlan` says so: names the point, the hit and the
/// plan's seed, so a failure found in a randomised run can be traced and replayed.
public struct InjectedFault: Error, Sendable, Hashable, CustomStringConvertible {
    /// The failpoint's name.
    public let point: String
    /// Which hit of the point failed (1-based).
    public let hit: Int
    /// The seed of the plan that injected it.
    public let seed: UInt64

    /// A fault at `hit` of `point` under `seed`.
    public init(point: String, hit: Int, seed: UInt64) {
        self.point = point
        self.hit = hit
        self.seed = seed
    }

    public var description: String { "injected fault at '\(point)' hit \(hit) (seed \(seed))" }
}

/// Counts hits of named failpoints and applies a `FaultPlan` to them: code under test calls
/// `try injector.check("handler")` in a handler (or `check(FaultPlan.setup)` in `setup`), and
/// the call throws `InjectedFault` at the hits the plan names.
///
/// ```swift
/// let injector = FaultInjector(plan: FaultPlan(seed: 7).failing("handler", .atHit(2)))
/// let behavior = Behavior<Int>.receiveMessage { _ in
///     try injector.check("handler")     // throws on the 2nd message
///     return .same
/// }
/// // afterwards: injector.hits("handler"), injector.failures("handler"), injector.injected
/// ```
///
/// Hits are counted per point, for the injector's whole life (across restarts of the actors
/// that call it), which is what makes "fail the 2nd setup" mean "fail the first restart".
/// Counting and deciding are one step under a lock, so hit numbers are exact even when several
/// actors on several threads pass the same point; which caller gets which hit is then up to the
/// scheduler (on a `TestScheduler`, deterministic).
///
/// Thread-safety: every member may be used from any thread.
public final class FaultInjector: Sendable {
    /// The plan applied.
    public let plan: FaultPlan

    private struct State {
        var hits: [String: Int] = [:]
        var failures: [String: Int] = [:]
        var injected: [InjectedFault] = []
    }

    /// Protected by its lock.
    private let state = LockedValueBox(State())

    /// An injector applying `plan`.
    public init(plan: FaultPlan) {
        self.plan = plan
    }

    /// Counts a hit of `point` and throws if the plan fails it.
    ///
    /// - Returns: The hit number (1-based) when it does not throw.
    /// - Throws: `InjectedFault` naming the point, hit and seed. Rules with other effects
    ///   (delay, stall) are for `FaultyScheduler`s and do not make `check` throw.
    @discardableResult
    public func check(_ point: String) throws -> Int {
        let (hit, effect) = hit(point)
        if effect?.isFailure == true {
            throw InjectedFault(point: point, hit: hit, seed: plan.seed)
        }
        return hit
    }

    /// Counts a hit of `point` and returns its number and the plan's effect for it, if any (a
    /// fired effect of any kind is recorded as an injected fault).
    public func hit(_ point: String) -> (hit: Int, effect: FaultEffect?) {
        state.withLockedValue { state in
            let hit = state.hits[point, default: 0] + 1
            state.hits[point] = hit
            let effect = plan.effect(atHit: hit, of: point)
            if effect != nil {
                state.failures[point, default: 0] += 1
                state.injected.append(InjectedFault(point: point, hit: hit, seed: plan.seed))
            }
            return (hit, effect)
        }
    }

    /// How many times `point` has been hit.
    public func hits(_ point: String) -> Int {
        state.withLockedValue { $0.hits[point, default: 0] }
    }

    /// How many faults have been injected at `point`.
    public func failures(_ point: String) -> Int {
        state.withLockedValue { $0.failures[point, default: 0] }
    }

    /// Every fault injected so far, in the order injected.
    public var injected: [InjectedFault] {
        state.withLockedValue { $0.injected }
    }
}
