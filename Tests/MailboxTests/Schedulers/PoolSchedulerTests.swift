import Dispatch
import Foundation
import Testing
@testable import Mailbox

extension RealTimeSchedulers {
    /// `PoolScheduler` on its own. It is also in the scheduler contract matrix (as `pool`), where
    /// it is held to everything but one-action-at-a-time; these tests cover what is its own:
    /// parallel workers, shutdown, and scheduling from its own workers.
    ///
    /// Every test shuts its pool down: the worker threads keep the pool alive until then.
    @Suite("PoolScheduler")
    struct PoolSchedulerTests {
        /// Occupies every worker of `pool` with `gate.hold`, so that work scheduled next stays
        /// queued; `false` if the workers did not all start holding in time.
        func occupyAllWorkers(of pool: PoolScheduler, with gate: Gate) -> Bool {
            for _ in 0..<pool.workerCount { pool.schedule(gate.hold) }
            return gate.waitUntilHeld(count: pool.workerCount)
        }

        /// An action that keeps `tracked` alive for as long as the action itself is retained.
        static func capturing(_ tracked: Tracked, _ body: @escaping @Sendable () -> Void = {}) -> @Sendable () -> Void {
            {
                _ = tracked
                body()
            }
        }

        @Test func workers_runAsManyActionsInParallelAsThereAreWorkers() {
            let pool = PoolScheduler(workerCount: 3, name: "MailboxTests.pool")
            defer { pool.shutdown() }
            #expect(pool.workerCount == 3)
            let gate = Gate()
            // Three actions held at once: three workers run in parallel.
            #expect(occupyAllWorkers(of: pool, with: gate))
            gate.open(count: 3)
        }

        @Test func everyScheduledAction_runsExactlyOnce() {
            let pool = PoolScheduler(workerCount: 2, name: "MailboxTests.pool")
            defer { pool.shutdown() }
            let counts = (0..<2_000).map { _ in Locked(0) }
            let group = DispatchGroup()
            for counter in counts {
                group.enter()
                pool.schedule {
                    counter.increment()
                    group.leave()
                }
            }
            #expect(group.waitBounded())
            #expect(counts.allSatisfy { $0.snapshot == 1 })
        }

        @Test func actionDisposedBeforeItStarts_neverRunsAndIsReleasedWhenItsTurnComes() {
            // One worker takes the shared queue's jobs in order: the disposed action's turn
            // comes before the marker's.
            let pool = PoolScheduler(workerCount: 1, name: "MailboxTests.pool")
            defer { pool.shutdown() }
            let gate = Gate()
            #expect(occupyAllWorkers(of: pool, with: gate))
            let tracker = LifetimeTracker()
            let ran = Locked([String]())
            let cancelled = pool.schedule(Self.capturing(tracker.instance()) { ran.append("cancelled") })
            let marker = DispatchSemaphore(value: 0)
            pool.schedule {
                ran.append("kept")
                marker.signal()
            }

            cancelled?.dispose()
            #expect(cancelled?.isDisposed == true)
            gate.open()
            #expect(marker.waitBounded())
            #expect(ran.snapshot == ["kept"])
            #expect(tracker.liveCount == 0, "the pool kept a cancelled action after skipping it")
        }

        @Test func timedActions_neverRunBeforeTheirDate() {
            let pool = PoolScheduler(workerCount: 2, name: "MailboxTests.pool")
            defer { pool.shutdown() }
            let results = Locked([(requested: Date, ran: Date)]())
            let done = DispatchSemaphore(value: 0)
            let delays = [0.0, 0.001, 0.005, 0.01, 0.02, 0.035]
            for delay in delays {
                let requested = Date().addingTimeInterval(delay)
                pool.schedule(after: requested) {
                    results.append((requested, Date()))
                    done.signal()
                }
            }
            #expect(done.waitBounded(count: delays.count))
            #expect(results.snapshot.count == delays.count)
            for result in results.snapshot {
                #expect(result.ran >= result.requested, "ran \(result.requested.timeIntervalSince(result.ran)) s early")
            }
        }

        @Test func timedActionDisposedBeforeItsDate_neverRunsAndIsReleasedAtOnce() {
            let pool = PoolScheduler(workerCount: 2, name: "MailboxTests.pool")
            defer { pool.shutdown() }
            let tracker = LifetimeTracker()
            let ran = Locked(false)
            let date = Date().addingTimeInterval(0.02)
            let cancelled = pool.schedule(
                after: date,
                action: Self.capturing(tracker.instance()) { ran.withLock { $0 = true } }
            )
            #expect(tracker.liveCount == 1)
            cancelled?.dispose()
            // On a loaded machine this thread may be descheduled past the date before it
            // disposes: then the action may rightly be queued or have run, and this run cannot
            // judge.
            let disposedInTime = Date() < date
            if disposedInTime {
                #expect(tracker.liveCount == 0, "a cancelled timed action stays alive until its date")
            }

            let later = DispatchSemaphore(value: 0)
            pool.schedule(after: Date().addingTimeInterval(0.1)) { later.signal() }
            #expect(later.waitBounded())
            if disposedInTime { #expect(ran.snapshot == false) }
        }

        @Test func repeatingAction_runsRepeatedlyUntilDisposedAndThenNoMore() {
            let pool = PoolScheduler(workerCount: 2, name: "MailboxTests.pool")
            defer { pool.shutdown() }
            let runs = Locked(0)
            let third = DispatchSemaphore(value: 0)
            let start = Date().addingTimeInterval(0.005)
            let firstRun = Locked<Date?>(nil)
            let timer = pool.schedule(after: start, interval: .milliseconds(5), leeway: .milliseconds(1)) {
                firstRun.withLock { $0 = $0 ?? Date() }
                if runs.increment() == 3 { third.signal() }
            }
            #expect(third.waitBounded(), "fewer than three runs")
            #expect(firstRun.snapshot.map { $0 >= start } == true, "the first run came before its start date")

            timer?.dispose()
            // A run that had started when the timer was disposed may still finish: let it,
            // then check that nothing runs over many more intervals.
            let settled = DispatchSemaphore(value: 0)
            pool.schedule(after: Date().addingTimeInterval(0.02)) { settled.signal() }
            #expect(settled.waitBounded())
            let afterDisposal = runs.snapshot
            let later = DispatchSemaphore(value: 0)
            pool.schedule(after: Date().addingTimeInterval(0.1)) { later.signal() }
            #expect(later.waitBounded())
            #expect(runs.snapshot == afterDisposal, "the timer ran again after its disposal")
        }

        @Test func workScheduledAfterShutdown_isReleasedWithoutRunning() {
            let pool = PoolScheduler(workerCount: 2, name: "MailboxTests.pool")
            pool.shutdown()
            let tracker = LifetimeTracker()
            let runs = Locked(0)
            pool.schedule(Self.capturing(tracker.instance()) { runs.increment() })
            #expect(tracker.liveCount == 0, "work scheduled after shutdown was kept")

            // A timed action reaches the pool when due, and is released then.
            pool.schedule(after: Date(), action: Self.capturing(tracker.instance()) { runs.increment() })
            #expect(spinUntil { tracker.liveCount == 0 }, "a timed action due after shutdown was kept")
            #expect(runs.snapshot == 0)
            pool.shutdown()  // idempotent
        }

        @Test func workQueuedWhenShutdownBegins_isReleasedWithoutRunning() {
            let pool = PoolScheduler(workerCount: 1, name: "MailboxTests.pool")
            let gate = Gate()
            #expect(occupyAllWorkers(of: pool, with: gate))
            let tracker = LifetimeTracker()
            let runs = Locked(0)
            pool.schedule(Self.capturing(tracker.instance()) { runs.increment() })

            let shutDown = DispatchSemaphore(value: 0)
            Thread {
                pool.shutdown()
                shutDown.signal()
            }.start()
            #expect(spinUntil { pool.isShutdown.load(ordering: .acquiring) })
            gate.open()
            #expect(shutDown.waitBounded())
            #expect(runs.snapshot == 0, "a job still queued at shutdown ran")
            #expect(tracker.liveCount == 0, "a job still queued at shutdown was not released")
        }

        @Test func shutdown_waitsForRunningActionsAndTheWorkerThreadsToExit() {
            let pool = PoolScheduler(workerCount: 2, name: "MailboxTests.pool")
            let gate = Gate()
            let workerThreads = Locked([String]())
            let finished = Locked(0)
            for _ in 0..<pool.workerCount {
                pool.schedule {
                    workerThreads.append(Self.currentThreadTaskPath())
                    gate.hold()
                    finished.increment()
                }
            }
            #expect(gate.waitUntilHeld(count: pool.workerCount))

            let shutDown = DispatchSemaphore(value: 0)
            Thread {
                pool.shutdown()
                shutDown.signal()
            }.start()
            #expect(spinUntil { pool.isShutdown.load(ordering: .acquiring) })
            #expect(finished.snapshot == 0)
            gate.open(count: pool.workerCount)
            #expect(shutDown.waitBounded())
            #expect(finished.snapshot == pool.workerCount, "shutdown() returned while actions were still running")

            #if os(Linux)
            // A joined thread's task leaves /proc shortly after the join returns (the kernel
            // wakes the joiner first); a worker that merely parked would stay there.
            let paths = workerThreads.snapshot
            #expect(paths.count == pool.workerCount)
            #expect(spinUntil { paths.allSatisfy { !FileManager.default.fileExists(atPath: $0) } }, "a worker thread outlived shutdown()")
            #endif
        }

        /// Dropping the last reference without `shutdown()` must not free the pool under its
        /// running workers (they would read freed memory): the threads keep it alive, and it
        /// goes once `shutdown()` has stopped them.
        @Test func workerThreadsKeepThePoolAlive_untilShutdown() {
            weak var weakPool: PoolScheduler?
            do {
                let pool = PoolScheduler(workerCount: 2, name: "MailboxTests.keep")
                weakPool = pool
            }
            do {
                guard let pool = weakPool else {
                    Issue.record("the pool was freed while its worker threads were running")
                    return
                }
                let ran = DispatchSemaphore(value: 0)
                pool.schedule { ran.signal() }
                #expect(ran.waitBounded(), "a pool whose creator let go of it stopped working")
                pool.shutdown()
            }
            #expect(spinUntil { weakPool == nil }, "the pool was not freed after shutdown()")
        }

        #if os(Linux)
        @Test func workerThreads_areNamedAfterThePool() throws {
            let pool = PoolScheduler(workerCount: 2, name: "MailboxTests.named")
            defer { pool.shutdown() }
            let name = Locked("")
            let ran = DispatchSemaphore(value: 0)
            pool.schedule {
                let comm = (try? String(contentsOfFile: Self.currentThreadTaskPath() + "/comm", encoding: .utf8)) ?? ""
                name.withLock { $0 = comm.trimmingCharacters(in: .whitespacesAndNewlines) }
                ran.signal()
            }
            #expect(ran.waitBounded())
            // Linux keeps 15 bytes of a thread's name: the end, with the worker's index.
            #expect(["s.named-0", "s.named-1"].contains(where: { name.snapshot.hasSuffix($0) }), "thread name: \(name.snapshot)")
        }
        #endif

        /// This thread's task directory in /proc (Linux), such as `/proc/123/task/456`; empty
        /// elsewhere.
        static func currentThreadTaskPath() -> String {
            #if os(Linux)
            let link = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self")) ?? ""
            return link.hasPrefix("/") ? link : "/proc/" + link
            #else
            return ""
            #endif
        }

        @Test func manyThreadsSchedulingAtOnce_loseNothing() {
            let pool = PoolScheduler(workerCount: 2, name: "MailboxTests.pool")
            defer { pool.shutdown() }
            let threads = 4
            let perThread = 2_000
            // Every other action schedules a follow-up from its worker (the run-next path),
            // while the outside threads keep filling the shared queue.
            let counts = (0..<(threads * perThread * 2)).map { _ in Locked(0) }
            let group = DispatchGroup()
            let barrier = SpinBarrier(parties: threads)
            // Threads of their own (not `concurrentPerform`, which may run fewer at once than
            // the barrier waits for), released together so that their pushes contend.
            let scheduled = DispatchGroup()
            for thread in 0..<threads {
                scheduled.enter()
                Thread {
                    defer { scheduled.leave() }
                    barrier.arriveAndWait(round: 0)
                    for index in 0..<perThread {
                        let slot = (thread * perThread + index) * 2
                        group.enter()
                        pool.schedule {
                            counts[slot].increment()
                            if index.isMultiple(of: 2) {
                                group.enter()
                                pool.schedule {
                                    counts[slot + 1].increment()
                                    group.leave()
                                }
                            }
                            group.leave()
                        }
                    }
                }.start()
            }
            #expect(scheduled.waitBounded())
            #expect(group.waitBounded())
            let expected = counts.indices.map { slot in
                slot.isMultiple(of: 2) || ((slot - 1) / 2 % perThread).isMultiple(of: 2) ? 1 : 0
            }
            #expect(counts.map(\.snapshot) == expected, "an action was lost, duplicated or invented")
        }
    }
}
