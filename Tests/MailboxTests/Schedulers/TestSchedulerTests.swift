import Dispatch
import Foundation
import Testing
@testable import Mailbox

@Suite("TestScheduler")
struct TestSchedulerTests {
    let scheduler = TestScheduler()
    let log = Locked([String]())

    /// The instant `seconds` after the scheduler's start.
    func at(_ seconds: TimeInterval) -> Date {
        scheduler.startDate.addingTimeInterval(seconds)
    }

    // MARK: - Nothing runs until the clock moves

    @Test func scheduledAction_doesNotRunUntilTheClockIsAdvanced() {
        scheduler.schedule { log.append("now") }
        scheduler.schedule(after: .seconds(1)) { log.append("later") }
        #expect(log.snapshot.isEmpty)
        #expect(scheduler.pendingActionCount == 2)

        scheduler.advance()
        #expect(log.snapshot == ["now"])
        #expect(scheduler.elapsed == .nanoseconds(1))
    }

    @Test func advanceByZero_runsWhatIsDueNowWithoutMovingTheClock() {
        scheduler.schedule { log.append("now") }
        scheduler.advance(by: .nanoseconds(0))
        #expect(log.snapshot == ["now"])
        #expect(scheduler.elapsed == .zero)
    }

    @Test func currentDate_startsAtStartDate() {
        let start = Date(timeIntervalSince1970: 1_000_000)
        let custom = TestScheduler(startDate: start)
        #expect(custom.currentDate == start)
        #expect(custom.elapsed == .zero)
        custom.advance(by: .seconds(5))
        #expect(custom.currentDate == start.addingTimeInterval(5))
    }

    // MARK: - The ways to move the clock

    @Test func advanceByDispatchTimeInterval_runsExactlyWhatIsDue() {
        scheduler.schedule(after: at(2)) { log.append("two") }
        scheduler.advance(by: .seconds(1))
        #expect(log.snapshot.isEmpty)
        scheduler.advance(by: .milliseconds(999))
        #expect(log.snapshot.isEmpty)
        scheduler.advance(by: .milliseconds(1))
        #expect(log.snapshot == ["two"])
        #expect(scheduler.currentDate == at(2))
    }

    @Test func advanceByTimeInterval_movesTheClockBySeconds() {
        scheduler.schedule(after: at(1.5)) { log.append("ran") }
        scheduler.advance(by: 1.25)
        #expect(log.snapshot.isEmpty)
        scheduler.advance(by: 0.25)
        #expect(log.snapshot == ["ran"])
        #expect(scheduler.elapsed == .milliseconds(1_500))
    }

    @Test func advanceByDuration_movesTheClockExactly() {
        scheduler.schedule(after: .microseconds(1_500)) { log.append("ran") }
        scheduler.advance(by: Duration.microseconds(1_499))
        #expect(log.snapshot.isEmpty)
        scheduler.advance(by: Duration.nanoseconds(1_000))
        #expect(log.snapshot == ["ran"])
        #expect(scheduler.elapsed == .nanoseconds(1_500_000))
    }

    @Test func advanceTo_runsEverythingDueByThatDateAndSetsTheClock() {
        scheduler.schedule(after: at(1)) { log.append("1") }
        scheduler.schedule(after: at(3)) { log.append("3") }
        scheduler.schedule(after: at(5)) { log.append("5") }
        scheduler.advance(to: at(3))
        #expect(log.snapshot == ["1", "3"])
        #expect(scheduler.currentDate == at(3))
    }

    @Test func run_runsEverythingInDueOrderHoweverFar() {
        scheduler.schedule(after: at(86_400 * 365)) { log.append("next year") }
        scheduler.schedule(after: at(60)) { log.append("a minute") }
        scheduler.schedule { log.append("now") }
        scheduler.run()
        #expect(log.snapshot == ["now", "a minute", "next year"])
        #expect(scheduler.pendingActionCount == 0)
    }

    @Test func advanceWithNoArgument_movesTheClockOneNanosecondAndRunsOnlyWhatIsDueByThen() {
        scheduler.schedule(after: .nanoseconds(1)) { log.append("1 ns") }
        scheduler.schedule(after: .nanoseconds(2)) { log.append("2 ns") }

        scheduler.advance()
        #expect(log.snapshot == ["1 ns"])
        #expect(scheduler.elapsed == .nanoseconds(1))
        #expect(scheduler.pendingActionCount == 1)

        scheduler.advance()
        #expect(log.snapshot == ["1 ns", "2 ns"])
        #expect(scheduler.elapsed == .nanoseconds(2))
    }

    @Test func run_stopsAtTheEndOfVirtualTimeAbout292YearsAfterTheStart() {
        scheduler.schedule(after: .seconds(60)) { log.append("a minute") }
        // Beyond the end of virtual time: scheduled at the end, so `run()` still reaches it.
        scheduler.schedule(after: Date.distantFuture) { log.append("distant future") }
        scheduler.run()
        #expect(log.snapshot == ["a minute", "distant future"])
        #expect(scheduler.elapsed == .nanoseconds(Int64.max))
        #expect(scheduler.currentDate == scheduler.startDate.addingTimeInterval(Double(Int64.max) / 1e9))
        #expect(scheduler.pendingActionCount == 0)
    }

    // MARK: - Ordering

    @Test func actionsDueAtTheSameInstant_runInSchedulingOrder() {
        for index in 0..<20 {
            // Mix the ways of naming the same instant.
            if index.isMultiple(of: 2) {
                scheduler.schedule(after: at(1)) { log.append("\(index)") }
            } else {
                scheduler.schedule(after: .seconds(1)) { log.append("\(index)") }
            }
        }
        scheduler.advance(by: .seconds(1))
        #expect(log.snapshot == (0..<20).map { "\($0)" })
    }

    @Test func actions_runEarliestFirstWhateverTheSchedulingOrder() {
        for seconds in [3, 1, 4, 2, 5] {
            scheduler.schedule(after: at(TimeInterval(seconds))) { log.append("\(seconds)") }
        }
        scheduler.advance(by: .seconds(10))
        #expect(log.snapshot == ["1", "2", "3", "4", "5"])
    }

    @Test func actionScheduledWhileAdvancing_runsInTheSameAdvanceIfDue() {
        let scheduler = scheduler, log = log
        scheduler.schedule(after: .seconds(1)) {
            log.append("first at \(scheduler.elapsed)")
            scheduler.schedule(after: .seconds(1)) { log.append("second at \(scheduler.elapsed)") }
            scheduler.schedule(after: .seconds(5)) { log.append("third at \(scheduler.elapsed)") }
        }
        scheduler.advance(by: .seconds(3))
        #expect(log.snapshot == ["first at 1.0 seconds", "second at 2.0 seconds"])
        #expect(scheduler.elapsed == .seconds(3))
        #expect(scheduler.pendingActionCount == 1)

        scheduler.advance(by: .seconds(3))
        #expect(log.snapshot.last == "third at 6.0 seconds")
    }

    @Test func immediateActionScheduledFromAnAction_runsAtThatInstantAfterThoseAlreadyDue() {
        let scheduler = scheduler, log = log
        scheduler.schedule(after: .seconds(1)) {
            log.append("A")
            scheduler.schedule { log.append("C at \(scheduler.elapsed)") }
        }
        scheduler.schedule(after: .seconds(1)) { log.append("B") }
        scheduler.schedule(after: .seconds(2)) { log.append("D") }
        scheduler.advance(by: .seconds(2))
        #expect(log.snapshot == ["A", "B", "C at 1.0 seconds", "D"])
    }

    @Test func currentDateInsideAnAction_isItsDueTimeAndAfterTheAdvanceItsTarget() {
        let scheduler = scheduler
        let seen = Locked([Date]())
        for seconds in [0.5, 1, 2.25] {
            scheduler.schedule(after: at(seconds)) { seen.append(scheduler.currentDate) }
        }
        scheduler.advance(by: .seconds(10))
        #expect(seen.snapshot == [at(0.5), at(1), at(2.25)])
        #expect(scheduler.currentDate == at(10))
    }

    @Test func actionScheduledInThePast_runsAtTheCurrentTimeWithoutMovingTheClockBack() {
        let scheduler = scheduler
        scheduler.advance(by: .seconds(10))
        let seen = Locked([Duration]())
        scheduler.schedule(after: at(3)) { seen.append(scheduler.elapsed) }
        scheduler.schedule(after: .seconds(-2)) { seen.append(scheduler.elapsed) }
        scheduler.advance()
        #expect(seen.snapshot == [.seconds(10), .seconds(10)])
        #expect(scheduler.elapsed == .seconds(10) + .nanoseconds(1))
    }

    /// Regression: with a start date far from the reference date, converting a date to whole
    /// nanoseconds and back could land one `Double` step *before* the date, so an action saw a
    /// `currentDate` earlier than the date it was scheduled at.
    @Test func currentDateInsideAnAction_isNeverBeforeTheScheduledDateWhateverTheStartDate() {
        let seed = testSeed()
        var random = SplitMix64(seed: seed)
        var early: [String] = []
        for _ in 0..<200 {
            let start = Date(timeIntervalSinceReferenceDate: Double.random(in: -1e9...2e9, using: &random))
            let scheduler = TestScheduler(startDate: start)
            let seen = Locked([(requested: Date, current: Date)]())
            for _ in 0..<20 {
                let requested = start.addingTimeInterval(Double.random(in: 0...100_000, using: &random))
                scheduler.schedule(after: requested) { seen.append((requested, scheduler.currentDate)) }
            }
            let target = start.addingTimeInterval(Double.random(in: 0...200_000, using: &random))
            scheduler.advance(to: target)
            if scheduler.currentDate < target {
                early.append("advance(to: \(target.timeIntervalSinceReferenceDate)) left the clock at \(scheduler.currentDate.timeIntervalSinceReferenceDate)")
            }
            for entry in seen.snapshot where entry.current < entry.requested {
                early.append("ran at \(entry.current.timeIntervalSinceReferenceDate) for \(entry.requested.timeIntervalSinceReferenceDate)")
            }
        }
        #expect(early.isEmpty, "seed \(seed): \(early.prefix(5))")
    }

    @Test func advanceToADate_thenSchedulingAtThatDate_runsAtOnceOnTheNextAdvance() {
        let start = Date(timeIntervalSinceReferenceDate: 812_345_678.123_456_7)
        let scheduler = TestScheduler(startDate: start)
        let date = start.addingTimeInterval(0.3)
        scheduler.advance(to: date)
        let ran = Locked(false)
        scheduler.schedule(after: date) { ran.withLock { $0 = true } }
        scheduler.advance(by: .nanoseconds(0))
        #expect(ran.snapshot)
    }

    // MARK: - Cancellation

    @Test func disposedAction_neverRuns() {
        let disposable = scheduler.schedule(after: .seconds(1)) { log.append("cancelled") }
        scheduler.schedule(after: .seconds(1)) { log.append("kept") }
        disposable?.dispose()
        scheduler.run()
        #expect(log.snapshot == ["kept"])
    }

    @Test func actionDisposedByAnEarlierActionInTheSameAdvance_neverRuns() {
        let later = Locked<(any Disposable)?>(nil)
        scheduler.schedule(after: .seconds(1)) { later.snapshot?.dispose() }
        later.withLock { $0 = scheduler.schedule(after: .seconds(2)) { log.append("later") } }
        scheduler.advance(by: .seconds(5))
        #expect(log.snapshot.isEmpty)
    }

    @Test func pendingActionCount_countsWaitingActionsUntilTheyRunOrAreDiscarded() {
        #expect(scheduler.pendingActionCount == 0)
        let first = scheduler.schedule(after: .seconds(1)) {}
        scheduler.schedule(after: .seconds(2)) {}
        scheduler.schedule(after: .seconds(3), interval: .seconds(1)) {}
        #expect(scheduler.pendingActionCount == 3)

        first?.dispose()
        #expect(scheduler.pendingActionCount == 3, "a cancelled action is counted until discarded")
        scheduler.advance(by: .seconds(2))
        #expect(scheduler.pendingActionCount == 1, "the repeating action is counted once")
        scheduler.advance(by: .seconds(5))
        #expect(scheduler.pendingActionCount == 1)
    }

    /// An action that keeps `tracked` alive for as long as the action itself is retained.
    static func capturing(_ tracked: Tracked) -> @Sendable () -> Void {
        { _ = tracked }
    }

    @Test func disposingAnAction_releasesItAtOnceNotWhenTheClockReachesIt() {
        let tracker = LifetimeTracker()
        let disposables = [
            scheduler.schedule(Self.capturing(tracker.instance())),
            scheduler.schedule(after: .seconds(1), action: Self.capturing(tracker.instance())),
            scheduler.schedule(after: at(2), action: Self.capturing(tracker.instance())),
            scheduler.schedule(after: at(3), interval: .seconds(1), leeway: .nanoseconds(0), action: Self.capturing(tracker.instance())),
        ]
        #expect(tracker.liveCount == 4)

        for disposable in disposables { disposable?.dispose() }
        #expect(tracker.liveCount == 0, "a cancelled action stays alive until its due time")
        #expect(scheduler.pendingActionCount == 4, "the cancelled entries are discarded when the clock reaches them")
        #expect(disposables.allSatisfy { $0?.isDisposed == true })

        scheduler.advance(by: .seconds(10))
        #expect(scheduler.pendingActionCount == 0)
    }

    @Test func oneShotAction_isReleasedOnceItHasRunEvenWhileItsDisposableIsKept() {
        let tracker = LifetimeTracker()
        let disposable = scheduler.schedule(after: .seconds(1), action: Self.capturing(tracker.instance()))
        scheduler.advance(by: .seconds(1))
        #expect(tracker.liveCount == 0, "the returned disposable keeps an action that has run alive")
        #expect(disposable?.isDisposed == false, "running an action does not dispose its disposable")
    }

    @Test func repeatingAction_staysRetainedBetweenRunsUntilDisposed() {
        let tracker = LifetimeTracker()
        let runs = Locked(0)
        let tracked = tracker.instance()
        let disposable = scheduler.schedule(after: at(1), interval: .seconds(1), leeway: .nanoseconds(0)) { [tracked] in
            _ = tracked
            runs.increment()
        }
        _ = consume tracked
        scheduler.advance(by: .seconds(2))
        #expect(runs.snapshot == 2)
        #expect(tracker.liveCount == 1)

        disposable?.dispose()
        #expect(tracker.liveCount == 0)
        scheduler.advance(by: .seconds(2))
        #expect(runs.snapshot == 2)
    }

    // MARK: - Repeating actions

    @Test func repeatingAction_runsAtExactIntervalsAnExactNumberOfTimes() {
        let scheduler = scheduler
        let runs = Locked([Duration]())
        scheduler.schedule(after: at(1), interval: .seconds(1)) { runs.append(scheduler.elapsed) }
        scheduler.advance(by: .seconds(10))
        #expect(runs.snapshot == (1...10).map { Duration.seconds($0) })
        scheduler.advance(by: .milliseconds(999))
        #expect(runs.snapshot.count == 10)
        scheduler.advance(by: .milliseconds(1))
        #expect(runs.snapshot.count == 11)
    }

    @Test func repeatingActionWithDurationInterval_countsNanosecondsExactly() {
        let scheduler = scheduler
        let runs = Locked([Duration]())
        scheduler.schedule(after: .milliseconds(5), interval: .milliseconds(3)) { runs.append(scheduler.elapsed) }
        scheduler.advance(by: Duration.milliseconds(20))
        #expect(runs.snapshot == [5, 8, 11, 14, 17, 20].map { Duration.milliseconds($0) })
    }

    @Test func repeatingActionWithTimeIntervalInterval_runsEveryInterval() {
        let runs = Locked(0)
        scheduler.schedule(after: at(0), interval: 0.25) { runs.increment() }
        scheduler.advance(by: 1.0)
        #expect(runs.snapshot == 5, "at 0, 0.25, 0.5, 0.75 and 1.0")
    }

    @Test func repeatingAction_stopsOnceDisposedBetweenAdvances() {
        let runs = Locked(0)
        let disposable = scheduler.schedule(after: at(1), interval: .seconds(1)) { runs.increment() }
        scheduler.advance(by: .seconds(3))
        #expect(runs.snapshot == 3)
        disposable?.dispose()
        scheduler.advance(by: .seconds(10))
        #expect(runs.snapshot == 3)
        #expect(scheduler.pendingActionCount == 0)
    }

    @Test func repeatingAction_stopsWhenItDisposesItself() {
        let runs = Locked(0)
        let handle = Locked<(any Disposable)?>(nil)
        handle.withLock {
            $0 = scheduler.schedule(after: at(1), interval: .seconds(1)) {
                if runs.increment() == 4 { handle.snapshot?.dispose() }
            }
        }
        scheduler.advance(by: .seconds(100))
        #expect(runs.snapshot == 4)
    }

    @Test func repeatingActionAndOneShotAtTheSameInstant_keepSchedulingOrderEachTick() {
        scheduler.schedule(after: at(1), interval: .seconds(1)) { log.append("tick") }
        scheduler.schedule(after: at(2)) { log.append("two") }
        scheduler.advance(by: .seconds(3))
        // The tick at 2 s was re-queued when the tick at 1 s ran, after "two" had been scheduled.
        #expect(log.snapshot == ["tick", "two", "tick", "tick"])
    }

    // MARK: - Exact virtual time

    @Test func scheduleAfterDuration_isExactInNanoseconds() {
        let scheduler = scheduler
        let ranAt = Locked<Duration?>(nil)
        scheduler.schedule(after: .nanoseconds(1_000_000_001)) { ranAt.withLock { $0 = scheduler.elapsed } }
        scheduler.advance(by: .seconds(1))
        #expect(ranAt.snapshot == nil)
        scheduler.advance()
        #expect(ranAt.snapshot == .nanoseconds(1_000_000_001))
    }

    @Test func manySmallDelays_addUpWithoutRoundingError() {
        let scheduler = scheduler
        let remaining = Locked(1_000)
        let finishedAt = Locked<Duration?>(nil)
        @Sendable func hop() {
            if remaining.withLock({ $0 -= 1; return $0 }) > 0 {
                scheduler.schedule(after: .nanoseconds(7), action: hop)
            } else {
                finishedAt.withLock { $0 = scheduler.elapsed }
            }
        }
        scheduler.schedule(after: .nanoseconds(7), action: hop)
        scheduler.advance(by: Duration.nanoseconds(6_999))
        #expect(finishedAt.snapshot == nil)
        scheduler.advance()
        #expect(remaining.snapshot == 0)
        #expect(finishedAt.snapshot == .nanoseconds(7_000))
    }

    @Test func chainedHops_landOnTheExactSumOfTheirDelays() {
        let scheduler = scheduler
        let times = Locked([Duration]())
        @Sendable func hop(_ left: Int) {
            times.append(scheduler.elapsed)
            guard left > 0 else { return }
            scheduler.schedule(after: .nanoseconds(333)) { hop(left - 1) }
        }
        scheduler.schedule { hop(300) }
        scheduler.advance(by: Duration.seconds(1))
        #expect(times.snapshot == (0...300).map { Duration.nanoseconds(333 * $0) })
    }

    // MARK: - Threads

    @Test func actionsScheduledFromManyThreads_eachRunExactlyOnce() {
        let counts = (0..<400).map { _ in Locked(0) }
        DispatchQueue.concurrentPerform(iterations: counts.count) { index in
            scheduler.schedule(after: .milliseconds(index % 7)) { counts[index].increment() }
        }
        scheduler.advance(by: .seconds(1))
        #expect(counts.allSatisfy { $0.snapshot == 1 })
    }

    // MARK: - Driving a program

    struct Step: Equatable, Sendable, CustomStringConvertible {
        var name: String
        var ranAt: Duration
        var dueAt: Duration
        var description: String { "\(name)@\(ranAt)" }
    }

    /// A small "program": each step logs itself and schedules up to three children at random
    /// delays (the root exactly three), some of which a later sibling cancels. Everything random comes from `seed`.
    static func runProgram(seed: UInt64) -> [Step] {
        let scheduler = TestScheduler()
        let trace = Locked([Step]())
        let random = Locked(SplitMix64(seed: seed))
        @Sendable func step(_ name: String, dueAt: Duration, depth: Int) {
            trace.append(Step(name: name, ranAt: scheduler.elapsed, dueAt: dueAt))
            guard depth < 5 else { return }
            let children = depth == 0 ? 3 : random.withLock { Int.random(in: 0...3, using: &$0) }
            var previous: (any Disposable)?
            for child in 0..<children {
                let delay = Duration.milliseconds(random.withLock { Int.random(in: 0...20, using: &$0) })
                let due = scheduler.elapsed + delay
                let handle = scheduler.schedule(after: delay) {
                    step("\(name).\(child)", dueAt: due, depth: depth + 1)
                }
                if depth > 0, random.withLock({ Int.random(in: 0..<5, using: &$0) }) == 0 { previous?.dispose() }
                previous = handle
            }
        }
        scheduler.schedule { step("root", dueAt: .zero, depth: 0) }
        scheduler.run()
        return trace.snapshot
    }

    @Test func program_producesTheSameTraceOnEveryRunFromTheSameSeed() {
        let seed = testSeed()
        let first = Self.runProgram(seed: seed)
        let second = Self.runProgram(seed: seed)
        #expect(first == second, "seed \(seed)")
        #expect(first.first?.name == "root")
        #expect(first.count >= 4, "the root and its three (never cancelled) children ran")
        #expect(first.allSatisfy { $0.ranAt == $0.dueAt }, "every step ran exactly when due; seed \(seed)")
        #expect(zip(first, first.dropFirst()).allSatisfy { $0.ranAt <= $1.ranAt }, "virtual time went backwards; seed \(seed)")
    }
}
