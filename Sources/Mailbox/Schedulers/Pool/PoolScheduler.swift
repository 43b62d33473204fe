#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
import Foundation
import Synchronization

/// The default pool: a fixed set of worker threads built for actor throughput.
///
/// Design (measured on this project's 2-core machines; see `docs/Performance.md`):
/// - One worker thread per core, each with a local run queue; an idle worker steals half of a
///   busy worker's queue. Work scheduled from outside the pool goes to a shared queue.
/// - A *run-next* slot per worker: work scheduled *from* a worker (an actor telling another
///   actor) runs next on that same worker, with no queue hop and no thread wake-up. A worker
///   takes from its slot at most `runNextLimit` times in a row, and checks the shared queue every
///   61 jobs, so a ping-pong pair cannot starve other work.
/// - Idle workers sleep on a condition variable (no spinning) and are woken one at a time when
///   stealable work appears.
///
/// Ordering: the pool runs many jobs at once (one per worker) and does not order jobs from
/// different sources. Jobs scheduled from one thread *outside* the pool start in FIFO order
/// when one worker takes them, but two workers may run them concurrently: use an actor, or a
/// `QueueScheduler`, where serial execution matters. Actors on the pool are serial by their
/// mailbox's own status word, whatever the pool does.
///
/// Timed actions wait on a private dispatch queue and are then scheduled on the pool; they never
/// run before their date.
///
/// Thread-safety: schedule from any thread. `shutdown()` stops the workers; work scheduled after
/// it is released without running.
///
/// What keeps what alive: a queued action is retained by the pool until a worker runs or skips
/// it, or `shutdown()` releases it; a cancelled timed action is released at once; a timer
/// retains the pool and its action until disposed. The worker threads retain the pool until
/// `shutdown()` stops them: a pool that is never shut down is never freed and keeps its threads
/// (call `shutdown()` once its work is done).
public final class PoolScheduler: DateScheduler {
    /// The number of worker threads.
    public let workerCount: Int

    /// How many times in a row a worker takes from its run-next slot.
    let runNextLimit: Int

    let workers: [PoolWorker]

    /// Work scheduled from outside the pool. Protected by `globalLock`.
    @exclusivity(unchecked)
    private nonisolated(unsafe) var global = JobDeque()
    private let globalLock = Lock()
    /// Mirrors `global.count`, read without the lock as a hint.
    let globalCount = Atomic<Int>(0)

    /// Workers asleep, most recent last. Protected by `sleepersLock`.
    @exclusivity(unchecked)
    private nonisolated(unsafe) var sleepers: [PoolWorker] = []
    private let sleepersLock = Lock()
    /// Mirrors `sleepers.count`; read on every push to skip the lock when nobody sleeps.
    private let sleepingCount = Atomic<Int>(0)

    /// The number of workers asleep (for tests).
    var sleepingWorkerCount: Int { sleepingCount.load(ordering: .acquiring) }

    let isShutdown = Atomic<Bool>(false)

    /// Workers out of work that are still looking for some before they park. While one
    /// searches, publishers skip the wake-up: the searcher will find the work.
    let searching = Atomic<Int>(0)

    /// How many times a worker out of work polls the queues before it parks.
    let searchRounds = 64

    /// Test hook (see the internal `init`); `nil` outside tests.
    let _searchEndedEmpty: (@Sendable () -> Void)?

    /// Where timed actions wait before they are scheduled on the pool.
    private let timerQueue = DispatchQueue(label: "Mailbox.PoolScheduler.timers")

    /// The wall clock.
    public var currentDate: Date { Date() }

    /// Creates a pool and starts its threads.
    ///
    /// - Parameters:
    ///   - workerCount: Worker threads; by default one per active core.
    ///   - name: A prefix for the threads' names.
    ///   - runNextLimit: How many times in a row a worker runs work from its run-next slot
    ///     before it takes work from its queues (fairness); at least 1.
    public convenience init(workerCount: Int = ProcessInfo.processInfo.activeProcessorCount, name: String = "mailbox-pool", runNextLimit: Int = 32) {
        self.init(workerCount: workerCount, name: name, runNextLimit: runNextLimit, searchEndedEmpty: nil)
    }

    /// The pool, with a test hook: `searchEndedEmpty` runs on a worker whose search for work
    /// found nothing, just before it stops counting as searching (the window in which
    /// publishers skip their wake-ups).
    init(workerCount: Int, name: String, runNextLimit: Int, searchEndedEmpty: (@Sendable () -> Void)?) {
        precondition(workerCount > 0, "a pool needs at least one worker, not \(workerCount)")
        precondition(runNextLimit > 0, "runNextLimit must be at least 1, not \(runNextLimit)")
        self._searchEndedEmpty = searchEndedEmpty
        self.workerCount = workerCount
        self.runNextLimit = runNextLimit
        self.workers = (0..<workerCount).map { PoolWorker(index: $0) }
        for worker in workers {
            worker.start(pool: self, name: "\(name)-\(worker.index)")
        }
    }

    deinit {
        for worker in workers { worker.releaseQueuedJobs() }
        releaseQueuedGlobalJobs()
        global.deallocate()
    }

    /// Stops the workers after the jobs they are running, and waits for their threads to exit.
    /// Jobs still queued are released without running. Idempotent. Must not be called from a
    /// pool worker thread.
    public func shutdown() {
        guard !isShutdown.exchange(true, ordering: .acquiringAndReleasing) else { return }
        precondition(PoolWorker.current?.pool !== self, "PoolScheduler.shutdown() called from one of its own workers")
        for worker in workers { worker.parker.unpark() }
        for worker in workers { worker.join() }
        for worker in workers { worker.releaseQueuedJobs() }
        releaseQueuedGlobalJobs()
    }

    /// Schedules `action` on the pool: from one of its workers it runs next on that worker, from
    /// any other thread it joins the shared queue. After `shutdown()` it is released unrun.
    ///
    /// - Returns: A disposable that makes the action be skipped if disposed before it starts;
    ///   the action stays retained until a worker reaches it (or the pool releases it).
    @discardableResult
    public func schedule(_ action: @escaping @Sendable () -> Void) -> (any Disposable)? {
        let cancellation = AnyDisposable()
        enqueue(Unmanaged.passRetained(ClosureJob(action, cancellation: cancellation)))
        return cancellation
    }

    /// Schedules `action` on the pool once `date` has come (never before it); it waits on a
    /// private dispatch queue until then.
    ///
    /// - Returns: A disposable that cancels the action, releasing it at once if it is still
    ///   waiting for its date.
    @discardableResult
    public func schedule(after date: Date, action: @escaping @Sendable () -> Void) -> (any Disposable)? {
        let cancellation = AnyDisposable()
        let pending = PendingAction { [self] in
            enqueue(Unmanaged.passRetained(ClosureJob(action, cancellation: cancellation)))
        }
        timerQueue.asyncNotEarly(at: date, pending)
        // Cancelling releases the action at once (not at its date) and stops a queued job.
        return AnyDisposable {
            pending.dispose()
            cancellation.dispose()
        }
    }

    /// Schedules `action` on the pool first at or after `date` (never before it), then every
    /// `interval`; runs go to whichever worker is free, so a slow run may overlap the next.
    ///
    /// - Returns: A disposable that stops the timer, skips the runs not yet started and releases
    ///   `action` from the timer.
    @discardableResult
    public func schedule(
        after date: Date,
        interval: DispatchTimeInterval,
        leeway: DispatchTimeInterval,
        action: @escaping @Sendable () -> Void
    ) -> (any Disposable)? {
        timerQueue.repeatingSchedule(from: date, interval: interval, leeway: leeway) { [self] stopped in
            enqueue(Unmanaged.passRetained(ClosureJob(action, cancellation: stopped)))
        }
    }

    /// Schedules a job, consuming the retain the caller passed in.
    ///
    /// From one of this pool's workers the job goes to that worker's run-next slot (the job it
    /// displaces moves to the worker's queue, where an idle worker may steal it); from any
    /// other thread it goes to the shared queue.
    @usableFromInline
    func enqueue(_ job: Unmanaged<PoolJob>) {
        if let current = PoolWorker.currentUnmanaged {
            let handled = current._withUnsafeGuaranteedRef { worker -> Bool in
                // Compared by identity: loading `worker.pool` would retain and release it.
                guard worker.poolIdentity == ObjectIdentifier(self) else { return false }
                if let displaced = worker.runNext {
                    worker.runNext = job
                    worker.pushLocal(displaced)
                    wakeOneIfAnySleeps()
                } else {
                    worker.runNext = job
                }
                return true
            }
            if handled { return }
        }
        // Checked under the lock that `shutdown()` takes to release the queued jobs (after
        // setting `isShutdown`): a job is either released there or refused here, never left
        // queued until `deinit`.
        let accepted = globalLock.withLock { () -> Bool in
            guard !isShutdown.load(ordering: .acquiring) else { return false }
            global.pushBack(job)
            globalCount.store(global.count, ordering: .relaxed)
            return true
        }
        guard accepted else {
            job.releaseUnrun()
            return
        }
        wakeOneIfAnySleeps()
    }

    func popGlobal() -> Unmanaged<PoolJob>? {
        guard globalCount.load(ordering: .relaxed) > 0 else { return nil }
        return globalLock.withLock {
            let job = global.popFront()
            globalCount.store(global.count, ordering: .relaxed)
            return job
        }
    }

    private func releaseQueuedGlobalJobs() {
        globalLock.withLock {
            while let job = global.popFront() { job.releaseUnrun() }
            globalCount.store(0, ordering: .relaxed)
        }
    }

    /// Wakes one sleeping worker, if any, so it can take or steal the work just published.
    ///
    /// Lost wake-ups cannot happen: a worker stops searching and registers as a sleeper
    /// *before* it looks at the queues one last time (under their locks), and a publisher pushes
    /// (under the queue's lock) *before* it reads `searching` and `sleepingCount`. Whichever
    /// lock acquisition comes second sees the other's writes.
    func wakeOneIfAnySleeps() {
        // A searching worker will find the work (it re-checks every queue under its lock
        // after registering as a sleeper, before it parks), so no wake-up is needed.
        guard searching.load(ordering: .acquiring) == 0 else { return }
        guard sleepingCount.load(ordering: .acquiring) > 0 else { return }
        let sleeper: PoolWorker? = sleepersLock.withLock {
            guard let sleeper = sleepers.popLast() else { return nil }
            sleepingCount.subtract(1, ordering: .releasing)
            return sleeper
        }
        sleeper?.parker.unpark()
    }

    /// Registers `worker` as asleep, then sleeps unless work turned up in the meantime.
    ///
    /// A worker that finds work here takes one job and passes the rest on (wakes one more
    /// worker if more than one job is queued). Publishers skip their wake-up while a worker
    /// searches, trusting it to find their work; this worker searched, found nothing, and is
    /// now finding *several* jobs whose publishers may all have skipped. Taking one and
    /// waking nobody stranded the others with workers asleep: a job could wait in the shared
    /// queue until some unrelated event woke a worker (seen as a 20 s stall of
    /// `workers_runAsManyActionsInParallelAsThereAreWorkers` in about 1 of 300 runs under load;
    /// `HangRegressionTests.poolWorkerFindingSeveralJobsAsItParks_wakesAnotherForTheRest`).
    func park(_ worker: PoolWorker) {
        sleepersLock.withLock {
            sleepers.append(worker)
            sleepingCount.add(1, ordering: .acquiringAndReleasing)
        }
        let queued = queuedJobCount()
        if queued > 0 || isShutdown.load(ordering: .acquiring) {
            let removed: Bool = sleepersLock.withLock {
                guard let index = sleepers.firstIndex(where: { $0 === worker }) else { return false }
                sleepers.remove(at: index)
                sleepingCount.subtract(1, ordering: .releasing)
                return true
            }
            // Not found: a publisher already took us off the list and will unpark us; consume
            // that wake-up so the next park does not return spuriously.
            if !removed { worker.parker.park() }
            if queued > 1 { wakeOneIfAnySleeps() }
            return
        }
        worker.parker.park()
    }

    /// The jobs queued in the shared queue and every worker's queue (each read under its lock).
    private func queuedJobCount() -> Int {
        var count = globalLock.withLock { global.count }
        for other in workers {
            count += other.lock.withLock { other.local.count }
        }
        return count
    }
}
