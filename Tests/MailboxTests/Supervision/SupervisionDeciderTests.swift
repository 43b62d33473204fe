import Foundation
import Testing
@testable import Mailbox

/// The supervision decider alone, without actors: every kind of failure for every kind of
/// supervised actor, checked against a table of expected decisions.
@Suite("Supervision decider")
struct SupervisionDeciderTests {
    struct ErrorA: Error {}
    struct ErrorB: Error {}

    /// The failure's time.
    static let now = Date(timeIntervalSinceReferenceDate: 1_000_000)
    /// The jitter every back-off draws.
    static let random = 0.5

    /// An actor as the cell would hold it: its supervision state, and whether it is top-level
    /// and under which guardian strategy.
    enum Fixture: String, CaseIterable, Codable, Sendable {
        case unsupervised
        case topLevelUnderStop
        case topLevelUnderRestart
        case topLevelUnderEscalate
        case resumeRule
        case stopRuleUnlogged
        case escalateRule
        case restartRule
        case restartRuleKeepingChildren
        /// `restart(limit: 2, within: 10 s)`, one restart 5 s ago.
        case limitedRule
        /// `restart(limit: 2, within: 10 s, whenExceeded: .escalate)`, restarts 8 s and 3 s ago.
        case fullLimitedRule
        /// The same, for a top-level actor (which has no parent to escalate to).
        case fullLimitedRuleTopLevel
        /// `restart(limit: 2, within: 10 s)`, restarts 20 s and 15 s ago (out of the window).
        case expiredLimitedRule
        /// A back-off of 1…8 s, random factor 0.5 (reset after 4.5 s): 2 consecutive restarts,
        /// the last 1 s ago.
        case backoffRule
        /// The same, the last restart 10 s ago: the count resets.
        case stableBackoffRule
        /// The same back-off `withMaxRestarts(2)`, 2 consecutive restarts, the last 1 s ago.
        case backoffRuleAtMaxRestarts
        /// `restart` outside, `resume` for `ErrorA` inside.
        case nestedRules
        /// `resume` for `ErrorA` only.
        case typedRuleOnly
        /// `stop`, deciding `restart` for `ErrorA` and `resume` otherwise.
        case decidingRule
        /// A one-for-one `Supervisor`'s child: intensity 3 in 60 s, nothing counted yet.
        case managedOneForOne
        /// The same, the window full.
        case managedOneForOneFull
        /// An all-for-one `Supervisor`'s child (no shared window).
        case managedAllForOne
        /// An all-for-one child with a `resume` rule for `ErrorA`.
        case managedWithResumeRule
        /// An all-for-one child with an `escalate` rule that does not log.
        case managedWithUnloggedEscalateRule
        /// A top-level actor under a restarting guardian, with an `escalate` rule.
        case topLevelEscalateRuleUnderRestart

        func make() -> (decider: SupervisionDecider, state: SupervisionState<Int>?) {
            let now = SupervisionDeciderTests.now
            func ago(_ seconds: Double) -> Date { now.addingTimeInterval(-seconds) }
            func decider(topLevel: Bool = false, _ guardian: SupervisorStrategy = .stop) -> SupervisionDecider {
                SupervisionDecider(guardianStrategy: topLevel ? guardian : nil)
            }
            func rule(_ strategy: SupervisorStrategy, of error: (any Error.Type)? = nil) -> SupervisionState<Int>.ActiveRule {
                .init(rule: SupervisionRule(behavior: .receiveMessage { _ in .same }, strategy: strategy, matches: { thrown in
                    guard let error else { return true }
                    return type(of: thrown) == error
                }))
            }
            func state(_ rules: SupervisionState<Int>.ActiveRule..., managed: Bool = false, window: SharedRestartWindow? = nil) -> SupervisionState<Int> {
                let state = SupervisionState<Int>(isManaged: managed, delegatedWindow: window)
                state.rules = rules
                return state
            }
            func guarded(_ guardian: SupervisorStrategy, _ rules: SupervisionState<Int>.ActiveRule...) -> SupervisionState<Int> {
                let state = SupervisionState<Int>(isManaged: false)
                state.rules = rules
                state.guardianRule = rule(guardian)
                return state
            }
            func counted(_ active: SupervisionState<Int>.ActiveRule, at times: Double..., window: Duration) -> SupervisionState<Int>.ActiveRule {
                var active = active
                for time in times { _ = active.window.admit(at: ago(time), window: window, limit: .max) }
                return active
            }
            func consecutive(_ active: SupervisionState<Int>.ActiveRule, _ count: Int, lastAgo: Double) -> SupervisionState<Int>.ActiveRule {
                var active = active
                active.consecutive = count
                active.lastRestart = ago(lastAgo)
                return active
            }
            let backoff = SupervisorStrategy.restartWithBackoff(minBackoff: .seconds(1), maxBackoff: .seconds(8), randomFactor: 0.5)
            switch self {
            case .unsupervised:
                return (decider(), nil)
            case .topLevelUnderStop:
                return (decider(topLevel: true, .stop), nil)
            case .topLevelUnderRestart:
                return (decider(topLevel: true, .restart), guarded(.restart))
            case .topLevelUnderEscalate:
                return (decider(topLevel: true, .escalate), guarded(.escalate))
            case .resumeRule:
                return (decider(), state(rule(.resume)))
            case .stopRuleUnlogged:
                return (decider(), state(rule(SupervisorStrategy.stop.withLogging(false))))
            case .escalateRule:
                return (decider(), state(rule(.escalate)))
            case .restartRule:
                return (decider(), state(rule(.restart)))
            case .restartRuleKeepingChildren:
                return (decider(), state(rule(SupervisorStrategy.restart.keepingChildren())))
            case .limitedRule:
                return (decider(), state(counted(rule(.restart(limit: 2, within: .seconds(10))), at: 5, window: .seconds(10))))
            case .fullLimitedRule, .fullLimitedRuleTopLevel:
                let limited = rule(.restart(limit: 2, within: .seconds(10), whenExceeded: .escalate))
                return (decider(topLevel: self == .fullLimitedRuleTopLevel), state(counted(limited, at: 8, 3, window: .seconds(10))))
            case .expiredLimitedRule:
                return (decider(), state(counted(rule(.restart(limit: 2, within: .seconds(10))), at: 20, 15, window: .seconds(10))))
            case .backoffRule:
                return (decider(), state(consecutive(rule(backoff), 2, lastAgo: 1)))
            case .stableBackoffRule:
                return (decider(), state(consecutive(rule(backoff), 2, lastAgo: 10)))
            case .backoffRuleAtMaxRestarts:
                return (decider(), state(consecutive(rule(backoff.withMaxRestarts(2)), 2, lastAgo: 1)))
            case .nestedRules:
                return (decider(), state(rule(.restart), rule(.resume, of: ErrorA.self)))
            case .typedRuleOnly:
                return (decider(), state(rule(.resume, of: ErrorA.self)))
            case .decidingRule:
                return (decider(), state(rule(SupervisorStrategy.stop.deciding { $0 is ErrorA ? .restart : .resume })))
            case .managedOneForOne:
                return (decider(), state(managed: true, window: SharedRestartWindow(intensity: 3, period: .seconds(60))))
            case .managedOneForOneFull:
                let window = SharedRestartWindow(intensity: 3, period: .seconds(60))
                for _ in 0..<3 { _ = window.admit(at: ago(1)) }
                return (decider(), state(managed: true, window: window))
            case .managedAllForOne:
                return (decider(), state(managed: true))
            case .managedWithResumeRule:
                return (decider(), state(rule(.resume, of: ErrorA.self), managed: true))
            case .managedWithUnloggedEscalateRule:
                return (decider(), state(rule(SupervisorStrategy.escalate.withLogging(false)), managed: true))
            case .topLevelEscalateRuleUnderRestart:
                return (decider(topLevel: true, .restart), guarded(.restart, rule(.escalate)))
            }
        }
    }

    /// Every failure the decider takes.
    enum Failure: String, CaseIterable, Codable, Sendable {
        /// A handler threw `ErrorA`.
        case handlerThrowsA
        /// A handler threw `ErrorB`.
        case handlerThrowsB
        /// `setup` threw `ErrorA`.
        case setupThrowsA
        /// A `Supervisor` exceeded its intensity (3 in 10 s).
        case exceedsIntensity

        func decide(_ decider: SupervisionDecider, _ state: SupervisionState<Int>?, randomUnit: () -> Double) -> SupervisionDecider.Decision {
            switch self {
            case .handlerThrowsA:
                decider.decide(ErrorA(), inSetup: false, state: state, now: SupervisionDeciderTests.now, randomUnit: randomUnit)
            case .handlerThrowsB:
                decider.decide(ErrorB(), inSetup: false, state: state, now: SupervisionDeciderTests.now, randomUnit: randomUnit)
            case .setupThrowsA:
                decider.decide(ErrorA(), inSetup: true, state: state, now: SupervisionDeciderTests.now, randomUnit: randomUnit)
            case .exceedsIntensity:
                decider.decideIntensityExceeded(SupervisorIntensityError(
                    supervisor: ActorAddress(system: "test", path: "/user/s", incarnation: 1), intensity: 3, period: .seconds(10), lastFailure: ErrorA()))
            }
        }
    }

    // MARK: The table

    /// The specification: for every actor and every failure, the decision (described).
    static func expected(_ fixture: Fixture, _ failure: Failure) -> String {
        if failure == .exceedsIntensity {
            // Never the actor's own rules: a shutdown, and the system's too under a guardian
            // that escalates.
            return fixture == .topLevelUnderEscalate
                ? "shutDownSystem(shutdown) by guardian, restarts 3 of 3 in 10.0 seconds"
                : "stop(shutdown) by actor, restarts 3 of 3 in 10.0 seconds"
        }
        let inSetup = failure == .setupThrowsA
        let isA = failure != .handlerThrowsB
        switch fixture {
        case .unsupervised:
            return "stop(stopped) by none, restarts 0"
        case .topLevelUnderStop:
            return "stop(stopped) by guardian, restarts 0"
        case .topLevelUnderRestart, .topLevelEscalateRuleUnderRestart:
            // An unlimited immediate restart of a failing setup would loop: stop.
            return inSetup ? "stop(stopped) by guardian, restarts 0" : "restart(guardian) by guardian, restarts 1"
        case .topLevelUnderEscalate:
            return "shutDownSystem(stopped) by guardian, restarts 0"
        case .resumeRule:
            // Nothing to resume without a state.
            return inSetup ? "stop(stopped) by actor, restarts 0" : "resume by actor, restarts 0"
        case .stopRuleUnlogged:
            return "stop(stopped) by actor, restarts 0, not logged"
        case .escalateRule:
            return "escalate by actor, restarts 0"
        case .restartRule:
            return inSetup ? "stop(stopped) by actor, restarts 0" : "restart(rule(0)) by actor, restarts 1"
        case .restartRuleKeepingChildren:
            return inSetup ? "stop(stopped) by actor, restarts 0" : "restart(rule(0), keeping children) by actor, restarts 1"
        case .limitedRule:
            return "restart(rule(0)) by actor, restarts 2 of 2 in 10.0 seconds"
        case .fullLimitedRule:
            return "escalate(limit exceeded) by actor, restarts 2 of 2 in 10.0 seconds"
        case .fullLimitedRuleTopLevel:
            return "stop(stopped, limit exceeded) by actor, restarts 2 of 2 in 10.0 seconds"
        case .expiredLimitedRule:
            return "restart(rule(0)) by actor, restarts 1 of 2 in 10.0 seconds"
        case .backoffRule:
            // min(8, 1·2²)·(1 + 0.5·0.5)
            return "restart(rule(0), after 5.0 seconds, stash 1000) by actor, restarts 3"
        case .stableBackoffRule:
            return "restart(rule(0), after 1.25 seconds, stash 1000) by actor, restarts 1"
        case .backoffRuleAtMaxRestarts:
            return "stop(stopped, limit exceeded) by actor, restarts 2 of 2"
        case .nestedRules:
            if inSetup { return "stop(stopped) by actor, restarts 0" }
            return isA ? "resume by actor, restarts 0" : "restart(rule(0)) by actor, restarts 1"
        case .typedRuleOnly:
            if inSetup { return "stop(stopped) by actor, restarts 0" }
            return isA ? "resume by actor, restarts 0" : "stop(stopped) by none, restarts 0"
        case .decidingRule:
            // A deciding `stop` restarts without limit.
            if inSetup { return "stop(stopped) by actor, restarts 0" }
            return isA ? "restart(rule(0)) by actor, restarts 1" : "resume by actor, restarts 0"
        case .managedOneForOne:
            // A failing setup goes to the supervisor: a local restart loop would never yield.
            return inSetup
                ? "askSupervisor by supervisor, restarts 0"
                : "restart(delegated) by supervisor, restarts 1 of 3 in 60.0 seconds"
        case .managedOneForOneFull, .managedAllForOne:
            return "askSupervisor by supervisor, restarts 0"
        case .managedWithResumeRule:
            if inSetup { return "stop(stopped) by actor, restarts 0" }
            return isA ? "resume by actor, restarts 0" : "askSupervisor by supervisor, restarts 0"
        case .managedWithUnloggedEscalateRule:
            return "askSupervisor by supervisor, restarts 0, not logged"
        }
    }

    @Test(arguments: Fixture.allCases, Failure.allCases)
    func everyFailureOfEveryActor(_ fixture: Fixture, _ failure: Failure) {
        let (decider, state) = fixture.make()
        var draws = 0
        let decision = failure.decide(decider, state) {
            draws += 1
            return Self.random
        }
        #expect(describe(decision) == Self.expected(fixture, failure), "\(failure) of \(fixture)")
        // The jitter is drawn for a back-off restart only (a seeded system replays the same
        // sequence).
        #expect(draws == (decision.backoffDelay == nil ? 0 : 1), "\(failure) of \(fixture)")
    }

    // MARK: Properties the cell relies on

    @Test func aRefusedRestart_countsNothing() {
        let (decider, state) = Fixture.fullLimitedRule.make()
        for _ in 0..<3 {
            let decision = Failure.handlerThrowsA.decide(decider, state) { Self.random }
            #expect(describe(decision) == "escalate(limit exceeded) by actor, restarts 2 of 2 in 10.0 seconds")
        }
        #expect(state?.rules[0].window.count(at: Self.now, window: .seconds(10)) == 2)
    }

    @Test func anAdmittedRestart_isCountedOnce() {
        let (decider, state) = Fixture.limitedRule.make()
        _ = Failure.handlerThrowsA.decide(decider, state) { Self.random }
        #expect(state?.rules[0].window.count(at: Self.now, window: .seconds(10)) == 2)
        #expect(state?.rules[0].consecutive == 1)
        // The next failure finds the window full.
        let next = Failure.handlerThrowsA.decide(decider, state) { Self.random }
        #expect(describe(next) == "stop(stopped, limit exceeded) by actor, restarts 2 of 2 in 10.0 seconds")
    }

    @Test func aFailingSetup_takesNoSlotOfTheSharedWindow() {
        let window = SharedRestartWindow(intensity: 3, period: .seconds(60))
        let state = SupervisionState<Int>(isManaged: true, delegatedWindow: window)
        let decider = SupervisionDecider(guardianStrategy: nil)
        _ = decider.decide(ErrorA(), inSetup: true, state: state, now: Self.now, randomUnit: { Self.random })
        #expect(window.count(at: Self.now) == 0)
        _ = decider.decide(ErrorA(), inSetup: false, state: state, now: Self.now, randomUnit: { Self.random })
        #expect(window.count(at: Self.now) == 1)
    }

    @Test func decisionsThatDoNotRestart_countNothing() {
        let (decider, state) = Fixture.nestedRules.make()
        _ = Failure.handlerThrowsA.decide(decider, state) { Self.random }
        #expect(state?.rules.map(\.consecutive) == [0, 0])
        _ = Failure.handlerThrowsB.decide(decider, state) { Self.random }
        #expect(state?.rules.map(\.consecutive) == [1, 0])
    }

    @Test func theClockIsReadOnlyWhenAWindowOrBackoffNeedsIt() {
        var reads = 0
        func now() -> Date {
            reads += 1
            return Self.now
        }
        let unsupervised = SupervisionDecider(guardianStrategy: nil)
        _ = unsupervised.decide(ErrorA(), inSetup: false, state: SupervisionState<Int>?.none, now: now(), randomUnit: { Self.random })
        let allForOne = SupervisionState<Int>(isManaged: true)
        _ = unsupervised.decide(ErrorA(), inSetup: false, state: allForOne, now: now(), randomUnit: { Self.random })
        #expect(reads == 0)
        let (decider, state) = Fixture.limitedRule.make()
        _ = decider.decide(ErrorA(), inSetup: false, state: state, now: now(), randomUnit: { Self.random })
        #expect(reads == 1)
    }

    @Test func backoffDelay_doublesUpToItsMaximum_thenStretchesByTheJitter() {
        let backoff = SupervisorStrategy.Backoff(
            minBackoff: .milliseconds(100), maxBackoff: .seconds(1), randomFactor: 0.2, resetAfter: .seconds(1), stashCapacity: 1)
        let delays = [0, 1, 2, 3, 4, 100].map { SupervisionDecider.backoffDelay(backoff, restarts: $0, random: 0) }
        #expect(delays.map { ($0.timeInterval * 1_000).rounded() } == [100, 200, 400, 800, 1_000, 1_000])
        #expect(abs(SupervisionDecider.backoffDelay(backoff, restarts: 100, random: 1).timeInterval - 1.2) < 1e-9)
    }

    // MARK: Describing

    private func describe(_ decision: SupervisionDecider.Decision) -> String {
        let head: String
        switch decision {
        case .resume: head = "resume"
        case let .stop(_, exit, limitExceeded): head = "stop(\(exit)\(limitExceeded == nil ? "" : ", limit exceeded"))"
        case let .escalate(_, limitExceeded): head = limitExceeded == nil ? "escalate" : "escalate(limit exceeded)"
        case let .restart(source, stopsChildren, backoff, _):
            head = "restart(\(source)\(backoff.map { ", after \($0.delay), stash \($0.stashCapacity)" } ?? "")\(stopsChildren ? "" : ", keeping children"))"
        case .askSupervisor: head = "askSupervisor"
        case let .shutDownSystem(_, exit): head = "shutDownSystem(\(exit))"
        }
        let report = decision.report
        return "\(head) by \(report.decider), restarts \(report.restarts.text)" + (report.logging ? "" : ", not logged")
    }
}
