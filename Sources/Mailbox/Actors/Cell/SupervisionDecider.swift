import Foundation

/// Decides what supervision does with one failure: a pure function of the failure, the actor's
/// supervision state and a few facts about the actor, returning a `Decision` for the cell to
/// perform (`ActorCell.perform(_:for:message:)`, the only place that acts on one). It holds no
/// reference to the actor and performs nothing, so it is tested alone, a table of actors times
/// failures (`SupervisionDeciderTests`).
///
/// Four sources decide, the first that applies wins:
///
/// 1. **The actor's own rule**: the innermost `supervise(_:).onFailure(_:)` rule whose error
///    type matches. Its directive stands unless it is `escalate` (or no rule matches).
/// 2. **A one-for-one `Supervisor`'s window**, for its child: a restart the supervisor's shared
///    intensity window admits is taken here, with no round trip (never for a failing `setup`,
///    which would loop without yielding).
/// 3. **The `Supervisor`** itself, for its child otherwise: the child suspends and asks.
/// 4. **The guardian strategy**, for a top-level actor; its `escalate` shuts the system down.
///
/// With none of them, the actor stops. A failing `setup` never resumes (there is no state) and
/// never restarts without a limit (it would fail again at once, forever).
///
/// ## Restart limits
/// A restart is counted against the deciding rule's limit, and refused past it (then the
/// limit's `whenExceeded` applies). With `restart(limit: 2, within: T)` (a sliding window):
///
/// ```
///  time ──────────────────────────────────────────────────────────────────▶
///        r1        r2             f3             f4
///        │◀─────────── T ─────────▶│                            r1, r2 in [f3 - T, f3]: refused
///                  │◀─────────── T ─────────▶│                  only r2 in [f4 - T, f4]: restart
/// ```
///
/// A back-off counts *consecutive* restarts instead, reset once the actor has run `resetAfter`
/// since its last restart; the n-th waits `min(maxBackoff, minBackoff·2ⁿ)·(1 + random·randomFactor)`.
///
/// Deciding mutates only the counts it keeps: the deciding rule's (in `SupervisionState`) and a
/// one-for-one supervisor's shared window. Touched only inside the actor's mailbox run.
///
/// (Not generic, like `RestartSource`: its decisions need no type metadata at run time; only
/// `decide` is, for the rules it reads.)
struct SupervisionDecider {
    /// The system's guardian strategy if the failing actor is top-level (its parent is the
    /// guardian), for when no rule of its own decides; `nil` for any other actor.
    let guardianStrategy: SupervisorStrategy?

    /// Whether the failing actor is top-level.
    var isTopLevel: Bool { guardianStrategy != nil }

    /// What the cell does with a failure. Each decision publishes one `SupervisionDecision`
    /// (from `report` and `directive`), then acts.
    enum Decision {
        /// Keep the state; the failing message is dropped.
        case resume(Report)
        /// Stop; the parent hears of it as `exit`. `limitExceeded` if a restart limit refused
        /// the restart.
        case stop(Report, exit: ChildExit, limitExceeded: LimitExceeded?)
        /// Stop, and hand the failure to the parent (`childFailed`). `limitExceeded` as for `stop`.
        case escalate(Report, limitExceeded: LimitExceeded?)
        /// Restart what `source` rebuilds, stopping the children first if `stopsChildren`,
        /// after `backoff` if the strategy has one.
        case restart(RestartSource, stopsChildren: Bool, backoff: Backoff?, Report)
        /// A `Supervisor`'s child: suspend (messages wait in the mailbox) and ask the supervisor.
        case askSupervisor(Report)
        /// Stop (the parent hears of it as `exit`) and shut the system down: the guardian
        /// strategy escalated.
        case shutDownSystem(Report, exit: ChildExit)

        /// The directive published for this decision. A `Supervisor`'s child that asks, and a
        /// guardian that shuts the system down, report `escalate`.
        var directive: SupervisorDirective {
            switch self {
            case .resume: .resume
            case .stop: .stop
            case .escalate, .askSupervisor, .shutDownSystem: .escalate
            case .restart: .restart
            }
        }

        /// What is published and logged about the decision.
        var report: Report {
            switch self {
            case let .resume(report), let .stop(report, _, _), let .escalate(report, _),
                 let .restart(_, _, _, report), let .askSupervisor(report), let .shutDownSystem(report, _):
                report
            }
        }

        /// The back-off delay before a restart, if any.
        var backoffDelay: Duration? {
            if case let .restart(_, _, backoff, _) = self { return backoff?.delay }
            return nil
        }
    }

    /// The wait between a restart's stop half and its rebuild.
    struct Backoff {
        let delay: Duration
        /// Messages arriving meanwhile are kept for the new state up to this bound.
        let stashCapacity: Int
    }

    /// A restart refused by its limit: the strategy, for the log line. (A class, so that a
    /// `SupervisorStrategy` does not make every decision several times larger: copying
    /// decisions is on the failure path; a refusal is rare.)
    final class LimitExceeded {
        let strategy: SupervisorStrategy

        init(_ strategy: SupervisorStrategy) {
            self.strategy = strategy
        }
    }

    /// Who decided, the restarts counted, and whether the deciding strategy logs.
    struct Report {
        var decider: SupervisionDecision.Decider
        var restarts: RestartCount
        var logging: Bool
    }

    /// Restarts counted in a window, for decisions and their log lines: `count`, out of
    /// `limit` within `window` when the rule has such a limit.
    struct RestartCount: Equatable {
        var count: Int
        var limit: Int?
        var window: Duration?

        init(_ count: Int, limit: Int? = nil, window: Duration? = nil) {
            self.count = count
            self.limit = limit
            self.window = window
        }

        init(_ count: Int, of window: SharedRestartWindow) {
            self.init(count, limit: window.intensity, window: window.period)
        }

        /// "2 of 3 in 10.0 seconds", "2 of 10", "2".
        var text: String {
            var text = "\(count)"
            if let limit { text += " of \(limit)" }
            if let window { text += " in \(window)" }
            return text
        }
    }

    // MARK: Deciding

    /// Decides a failure of a handler (or, `inSetup`, of `setup`).
    ///
    /// - Parameters:
    ///   - state: The actor's supervision state (`nil`: no rule, not a `Supervisor`'s child,
    ///     no guardian strategy that can restart it).
    ///   - now: The actor's clock, read only when a window or a back-off needs it.
    ///   - randomUnit: A number in `0..<1` for a back-off's jitter, drawn only for a restart
    ///     with a back-off.
    func decide<Message: Sendable>(
        _ error: any Error, inSetup: Bool, state: SupervisionState<Message>?,
        now: @autoclosure () -> Date, randomUnit: () -> Double
    ) -> Decision {
        // 1. The innermost matching rule.
        var source: RestartSource?
        var strategy: SupervisorStrategy?
        if let state {
            for index in state.rules.indices.reversed() where state.rules[index].rule.matches(error) {
                source = .rule(index)
                strategy = state.rules[index].rule.strategy
                break
            }
        }
        var directive = strategy?.directive(for: error)
        var decider: SupervisionDecision.Decider = strategy == nil ? .none : .actor
        if directive == nil || directive == .escalate {
            // 2 and 3. A `Supervisor`'s child: its shared window, or the supervisor.
            if let state, state.isManaged {
                let logging = strategy?.isLoggingEnabled ?? true
                if !inSetup, let window = state.delegatedWindow, let count = window.admit(at: now()) {
                    return .restart(.delegated, stopsChildren: SupervisorStrategy.restart.stopsChildren, backoff: nil, Report(
                        decider: .supervisor, restarts: RestartCount(count, of: window), logging: logging))
                }
                return .askSupervisor(Report(decider: .supervisor, restarts: RestartCount(0), logging: logging))
            }
            // 4. The guardian strategy.
            if let guardianStrategy {
                strategy = guardianStrategy
                source = .guardian
                decider = .guardian
                directive = guardianStrategy.directive(for: error)
                if directive == .escalate {
                    return .shutDownSystem(Report(
                        decider: .guardian, restarts: restartsInWindow(.guardian, guardianStrategy, state, now()),
                        logging: guardianStrategy.isLoggingEnabled), exit: .stopped)
                }
            }
        }
        guard let source, let strategy, var chosen = directive else {
            return .stop(Report(decider: decider, restarts: RestartCount(0), logging: true), exit: .stopped, limitExceeded: nil)
        }
        if inSetup, chosen == .resume || (chosen == .restart && strategy.restartsWithoutLimit) {
            chosen = .stop
        }
        let logging = strategy.isLoggingEnabled
        switch chosen {
        case .resume:
            return .resume(Report(decider: decider, restarts: restartsInWindow(source, strategy, state, now()), logging: logging))
        case .stop:
            return .stop(Report(
                decider: decider, restarts: restartsInWindow(source, strategy, state, now()), logging: logging),
                exit: .stopped, limitExceeded: nil)
        case .escalate:
            return .escalate(Report(
                decider: decider, restarts: restartsInWindow(source, strategy, state, now()), logging: logging),
                limitExceeded: nil)
        case .restart:
            switch admitRestart(source, strategy, state, now(), randomUnit) {
            case let .allowed(backoff, restarts):
                return .restart(
                    source, stopsChildren: strategy.stopsChildren, backoff: backoff,
                    Report(decider: decider, restarts: restarts, logging: logging))
            case let .refused(exceeded, restarts):
                let report = Report(decider: decider, restarts: restarts, logging: logging)
                if exceeded == .escalate, !isTopLevel {
                    return .escalate(report, limitExceeded: LimitExceeded(strategy))
                }
                return .stop(report, exit: .stopped, limitExceeded: LimitExceeded(strategy))
            }
        }
    }

    /// Decides for a `Supervisor` that exceeded its restart intensity. As in OTP, that is not a
    /// failure for its own rules: it shuts down (the `shutdown` exit), and under the guardian
    /// strategy `escalate` a top-level supervisor's shutdown also shuts the system down. The
    /// decision reports its intensity as its restarts.
    func decideIntensityExceeded(_ error: SupervisorIntensityError) -> Decision {
        let restarts = RestartCount(error.intensity, limit: error.intensity, window: error.period)
        if let guardianStrategy, guardianStrategy.directive(for: error) == .escalate {
            return .shutDownSystem(Report(decider: .guardian, restarts: restarts, logging: true), exit: .shutdown)
        }
        return .stop(Report(decider: .actor, restarts: restarts, logging: true), exit: .shutdown, limitExceeded: nil)
    }

    // MARK: The restart arithmetic

    private enum Admission {
        case allowed(backoff: Backoff?, RestartCount)
        case refused(SupervisorStrategy.LimitExceeded, RestartCount)
    }

    /// Counts a restart against the strategy's limit; the back-off if allowed, and the restarts
    /// in the window (with this one, if allowed).
    private func admitRestart<Message: Sendable>(
        _ source: RestartSource, _ strategy: SupervisorStrategy, _ state: SupervisionState<Message>?,
        _ now: Date, _ randomUnit: () -> Double
    ) -> Admission {
        state?.withActiveRule(source) { active -> Admission in
            let backoff = strategy.backoff
            if let backoff, let last = active.lastRestart, now.timeIntervalSince(last) >= backoff.resetAfter.timeInterval {
                active.consecutive = 0
            }
            var windowCount: Int?
            if let limit = strategy.limit {
                if let window = limit.window {
                    // The sliding window: restarts at t >= now - window count, with this one.
                    guard let count = active.window.admit(at: now, window: window, limit: limit.maxRestarts) else {
                        return .refused(limit.whenExceeded, RestartCount(active.window.count, limit: limit.maxRestarts, window: window))
                    }
                    windowCount = count
                } else if active.consecutive + 1 > limit.maxRestarts {
                    return .refused(limit.whenExceeded, RestartCount(active.consecutive, limit: limit.maxRestarts))
                }
            }
            let wait = backoff.map {
                Backoff(delay: Self.backoffDelay($0, restarts: active.consecutive, random: randomUnit()), stashCapacity: $0.stashCapacity)
            }
            active.consecutive += 1
            return .allowed(backoff: wait, RestartCount(
                windowCount ?? active.consecutive, limit: strategy.limit?.maxRestarts, window: strategy.limit?.window))
        } ?? .allowed(backoff: nil, RestartCount(0))
    }

    /// The restarts the rule `source` (with `strategy`) holds in its window at `now`, without
    /// counting one: for decisions that do not restart.
    private func restartsInWindow<Message: Sendable>(
        _ source: RestartSource, _ strategy: SupervisorStrategy, _ state: SupervisionState<Message>?, _ now: Date
    ) -> RestartCount {
        state?.withActiveRule(source) { active -> RestartCount in
            if let limit = strategy.limit, let window = limit.window {
                return RestartCount(active.window.count(at: now, window: window), limit: limit.maxRestarts, window: window)
            }
            return RestartCount(active.consecutive, limit: strategy.limit?.maxRestarts)
        } ?? RestartCount(0)
    }

    /// `min(maxBackoff, minBackoff·2ⁿ) · (1 + random·randomFactor)`.
    static func backoffDelay(_ backoff: SupervisorStrategy.Backoff, restarts: Int, random: Double) -> Duration {
        let base = min(backoff.maxBackoff.timeInterval, backoff.minBackoff.timeInterval * pow(2, Double(min(restarts, 62))))
        return .seconds(base * (1 + random * backoff.randomFactor))
    }
}
