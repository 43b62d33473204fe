/// How a supervised actor is treated when it fails: a directive, and for restarts their limit,
/// back-off and what happens to children.
///
/// ```swift
/// .supervise(worker()).onFailure(.restart(limit: 3, within: .seconds(10)))
/// .supervise(client()).onFailure(of: ConnectionError.self,
///     .restartWithBackoff(minBackoff: .milliseconds(100), maxBackoff: .seconds(10), randomFactor: 0.2))
/// ```
///
/// ## Restart limits: a sliding window
/// `restart(limit: N, within: T)` allows at most N restarts in any window of length T, as
/// Erlang/OTP's intensity and period do. At a failure at time `now` the restarts at times
/// `t >= now - T` are counted together with the one being decided; if that makes more than N,
/// the limit is exceeded and `whenExceeded` applies instead of the restart.
///
/// Every time rule (the window, the back-off delay, its reset) uses the actor's
/// `DateScheduler`, so a `TestScheduler` drives them in virtual time.
///
/// Thread-safety: a value type, `Sendable`; a decider closure must be `@Sendable`.
public struct SupervisorStrategy: Sendable, CustomStringConvertible {
    /// What happens once a restart limit is exceeded.
    public enum LimitExceeded: Sendable, Equatable {
        /// Stop the actor.
        case stop
        /// Stop the actor and escalate the failure to its parent.
        case escalate
    }

    enum Kind: Sendable {
        case resume
        case stop
        case escalate
        case restart
        case backoff(Backoff)
    }

    struct Backoff: Sendable {
        var minBackoff: Duration
        var maxBackoff: Duration
        var randomFactor: Double
        var resetAfter: Duration
        var stashCapacity: Int
    }

    struct Limit: Sendable {
        var maxRestarts: Int
        /// `nil`: the count never decays (back-off's `withMaxRestarts`, which counts restarts
        /// since the last reset).
        var window: Duration?
        var whenExceeded: LimitExceeded
    }

    let kind: Kind
    var limit: Limit?
    var decider: (@Sendable (any Error) -> SupervisorDirective)?
    /// Whether a restart stops the actor's children first (the default).
    public private(set) var stopsChildren = true
    /// Whether failures handled by this strategy are written to the system's log (the default).
    /// They are published on the event stream either way.
    public private(set) var isLoggingEnabled = true

    init(kind: Kind) {
        self.kind = kind
    }

    /// Keep the state, drop the failing message, go on.
    public static var resume: SupervisorStrategy { SupervisorStrategy(kind: .resume) }

    /// Stop the actor (the default for an actor with no supervision).
    public static var stop: SupervisorStrategy { SupervisorStrategy(kind: .stop) }

    /// Stop the actor and escalate the failure to its parent.
    public static var escalate: SupervisorStrategy { SupervisorStrategy(kind: .escalate) }

    /// Restart without limit. A failure in `setup` during such a restart stops the actor
    /// instead (restarting would fail again at once, forever).
    public static var restart: SupervisorStrategy { SupervisorStrategy(kind: .restart) }

    /// Restart at most `limit` times within any window of `within` (a sliding window, see the
    /// type's documentation); beyond that, `whenExceeded`.
    ///
    /// - Precondition: `limit >= 0` and `within > .zero`.
    public static func restart(limit: Int, within: Duration, whenExceeded: LimitExceeded = .stop) -> SupervisorStrategy {
        precondition(limit >= 0, "a restart limit cannot be negative, not \(limit)")
        precondition(within > .zero, "a restart window must be positive, not \(within)")
        var strategy = SupervisorStrategy(kind: .restart)
        strategy.limit = Limit(maxRestarts: limit, window: within, whenExceeded: whenExceeded)
        return strategy
    }

    /// Restart after a delay that doubles with each consecutive restart, from `minBackoff` up
    /// to `maxBackoff`, each delay stretched by a random factor in `[1, 1 + randomFactor]`:
    ///
    /// ```
    /// failure ──▶ wait min·2⁰·j ──▶ restart ── failure ──▶ wait min·2¹·j ──▶ restart …
    /// (j random in 1…1+randomFactor; every wait capped at maxBackoff·(1+randomFactor))
    /// ```
    ///
    /// The count of consecutive restarts resets once the actor has run for `resetAfter`
    /// (default: the mean of the two bounds) without failing. During the wait, children are
    /// stopped and arriving messages are stashed, up to `stashCapacity` (default 1,000);
    /// beyond that they are dropped (`Dropped`, reason `.backoffStashFull`). After the
    /// restart the stashed messages are handled first, in order.
    ///
    /// The random factor comes from the system's `randomSeed` when one is configured, so a
    /// simulation replays the same delays.
    ///
    /// - Precondition: `.zero < minBackoff <= maxBackoff`, `randomFactor >= 0`.
    public static func restartWithBackoff(minBackoff: Duration, maxBackoff: Duration, randomFactor: Double) -> SupervisorStrategy {
        precondition(minBackoff > .zero, "minBackoff must be positive, not \(minBackoff)")
        precondition(maxBackoff >= minBackoff, "maxBackoff (\(maxBackoff)) must not be below minBackoff (\(minBackoff))")
        precondition(randomFactor >= 0 && randomFactor.isFinite, "randomFactor must be a finite non-negative number, not \(randomFactor)")
        return SupervisorStrategy(kind: .backoff(Backoff(
            minBackoff: minBackoff, maxBackoff: maxBackoff, randomFactor: randomFactor,
            resetAfter: (minBackoff + maxBackoff) / 2, stashCapacity: 1_000)))
    }

    /// This back-off strategy, with the count of consecutive restarts reset after the actor has
    /// run `interval` without failing.
    public func withResetBackoffAfter(_ interval: Duration) -> SupervisorStrategy {
        guard case var .backoff(backoff) = kind else {
            preconditionFailure("withResetBackoffAfter applies to restartWithBackoff, not \(self)")
        }
        precondition(interval > .zero, "resetBackoffAfter must be positive, not \(interval)")
        backoff.resetAfter = interval
        var copy = SupervisorStrategy(kind: .backoff(backoff))
        copy.copyOptions(from: self)
        return copy
    }

    /// This back-off strategy, stashing at most `capacity` messages during a back-off.
    public func withStashCapacity(_ capacity: Int) -> SupervisorStrategy {
        guard case var .backoff(backoff) = kind else {
            preconditionFailure("withStashCapacity applies to restartWithBackoff, not \(self)")
        }
        precondition(capacity >= 0, "a stash capacity cannot be negative, not \(capacity)")
        backoff.stashCapacity = capacity
        var copy = SupervisorStrategy(kind: .backoff(backoff))
        copy.copyOptions(from: self)
        return copy
    }

    /// This back-off strategy, giving up after `maxRestarts` consecutive restarts (the count
    /// resets with the back-off, after a stable period); then `whenExceeded`.
    public func withMaxRestarts(_ maxRestarts: Int, whenExceeded: LimitExceeded = .stop) -> SupervisorStrategy {
        guard case .backoff = kind else {
            preconditionFailure("withMaxRestarts applies to restartWithBackoff; use restart(limit:within:)")
        }
        precondition(maxRestarts >= 0, "maxRestarts cannot be negative, not \(maxRestarts)")
        var copy = self
        copy.limit = Limit(maxRestarts: maxRestarts, window: nil, whenExceeded: whenExceeded)
        return copy
    }

    /// This strategy, but a restart keeps the actor's children running (the new state's
    /// `setup` must then not spawn children with the same names).
    public func keepingChildren() -> SupervisorStrategy {
        var copy = self
        copy.stopsChildren = false
        return copy
    }

    /// This strategy, with failures written to the system's log or not.
    public func withLogging(_ enabled: Bool) -> SupervisorStrategy {
        var copy = self
        copy.isLoggingEnabled = enabled
        return copy
    }

    /// This strategy, with the directive chosen per failure by `decide`. A `.restart` chosen by
    /// `decide` uses this strategy's limit and back-off (a strategy that does not restart
    /// restarts without limit).
    public func deciding(_ decide: @escaping @Sendable (any Error) -> SupervisorDirective) -> SupervisorStrategy {
        var copy = self
        copy.decider = decide
        return copy
    }

    private mutating func copyOptions(from other: SupervisorStrategy) {
        limit = other.limit
        decider = other.decider
        stopsChildren = other.stopsChildren
        isLoggingEnabled = other.isLoggingEnabled
    }

    /// The directive for `error`.
    func directive(for error: any Error) -> SupervisorDirective {
        if let decider { return decider(error) }
        switch kind {
        case .resume: return .resume
        case .stop: return .stop
        case .escalate: return .escalate
        case .restart, .backoff: return .restart
        }
    }

    var backoff: Backoff? {
        if case let .backoff(backoff) = kind { return backoff }
        return nil
    }

    /// Whether restarts are unlimited and immediate (a failing `setup` would loop forever).
    var restartsWithoutLimit: Bool {
        if case .backoff = kind { return false }
        return limit == nil
    }

    public var description: String {
        var text: String
        switch kind {
        case .resume: text = "resume"
        case .stop: text = "stop"
        case .escalate: text = "escalate"
        case .restart: text = "restart"
        case let .backoff(backoff):
            text = "restartWithBackoff(\(backoff.minBackoff)…\(backoff.maxBackoff), random \(backoff.randomFactor))"
        }
        if let limit {
            text += " limit \(limit.maxRestarts)" + (limit.window.map { " within \($0)" } ?? "") + " then \(limit.whenExceeded)"
        }
        if decider != nil { text += " (decider)" }
        if !stopsChildren { text += " keeping children" }
        return text
    }
}

// MARK: - Behavior.supervise

extension Behavior {
    /// Supervises `behavior`: say with `onFailure` what happens when it throws.
    ///
    /// ```swift
    /// try system.spawn(
    ///     .supervise(counter()).onFailure(.restart(limit: 3, within: .seconds(1))),
    ///     name: "counter")
    /// ```
    ///
    /// Rules nest: the innermost rule whose error type matches decides, so
    /// `.supervise(.supervise(b).onFailure(of: A.self, .resume)).onFailure(.restart)` resumes
    /// on `A` and restarts on anything else. A restart rebuilds the behavior the rule wraps.
    public static func supervise(_ behavior: Behavior<Message>) -> Supervise<Message> {
        Supervise(behavior: behavior)
    }
}
