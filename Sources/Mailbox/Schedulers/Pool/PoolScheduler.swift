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
    private nonisolated(unsafe) var global = JobDeque()
    private let globalLock = Lock()
    /// Mirrors `global.count`, read without the lock as a hint.
    let globalCount = Atomic<Int>(0)

    /// Workers asleep, most recent last. Protected by `sleepersLock`.
    private nonisolated(unsafe) var sleepers: [PoolWorker] = []
    private let sleepersLock = Lock()
    /// Mirrors `sleepers.count`; read on every push to skip the lock when nobody sleeps.
    private let sleepingCount = Atomic<Int>(0)

    let isShutdown = Atomic<Bool>(false)

    /// Workers out of work that are still looking for some before they park. While one
    /// searches, publishers skip the wake-up: the searcher will find the work.
    let searching = Atomic<Int>(0)

    /// How many times a worker out of work polls the queues before it parks.
    let searchRounds = 64

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
    public init(workerCount: Int = ProcessInfo.processInfo.activeProcessorCount, name: String = "mailbox-pool", runNextLimit: Int = 32) {
        precondition(workerCount > 0, "a pool needs at least one worker, not \(workerCount)")
        precondition(runNextLimit > 0, "runNextLimit must be at least 1, not \(runNextLimit)")
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
        let cancellation = AnyDisposable()
        let timer = timerQueue.repeatingTimer(from: date, interval: interval, leeway: leeway) { [self] in
            enqueue(Unmanaged.passRetained(ClosureJob(action, cancellation: cancellation)))
        }
        return AnyDisposable {
            cancellation.dispose()
            timer.dispose()
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
    func park(_ worker: PoolWorker) {
        sleepersLock.withLock {
            sleepers.append(worker)
            sleepingCount.add(1, ordering: .acquiringAndReleasing)
        }
        if hasWork(for: worker) || isShutdown.load(ordering: .acquiring) {
            let removed: Bool = sleepersLock.withLock {
                guard let index = sleepers.firstIndex(where: { $0 === worker }) else { return false }
                sleepers.remove(at: index)
                sleepingCount.subtract(1, ordering: .releasing)
                return true
            }
            // Not found: a publisher already took us off the list and will unpark us; consume
            // that wake-up so the next park does not return spuriously.
            if removed { return }
        }
        worker.parker.park()
    }

    private func hasWork(for worker: PoolWorker) -> Bool {
        if globalLock.withLock({ !global.isEmpty }) { return true }
        for other in workers where other.lock.withLock({ !other.local.isEmpty }) {
            return true
        }
        return false
    }
}

/// One worker thread of a `PoolScheduler` and its queues.
final class PoolWorker {
    let index: Int

    /// The pool, set before the thread starts. The thread holds a strong reference for as long
    /// as it runs (see `start`), so the pool cannot be freed under a running worker: a pool
    /// that is never shut down lives, with its threads, until the process exits.
    unowned(unsafe) var pool: PoolScheduler!
    /// The pool's identity, set with `pool`: what `enqueue` compares, without a retain.
    var poolIdentity: ObjectIdentifier?

    /// The job to run next. Only the worker's own thread touches it (so exclusivity holds
    /// without run-time checks).
    @exclusivity(unchecked)
    var runNext: Unmanaged<PoolJob>?

    /// Protects `local`.
    let lock = Lock()
    /// The worker's run queue. Protected by `lock`.
    var local = JobDeque()
    /// Mirrors `local.count`, read without the lock by thieves as a hint.
    let localCount = Atomic<Int>(0)

    let parker = Parker()
    private var thread: pthread_t?

    init(index: Int) {
        self.index = index
    }

    deinit {
        local.deallocate()
    }

    func pushLocal(_ job: Unmanaged<PoolJob>) {
        lock.withLock {
            local.pushBack(job)
            localCount.store(local.count, ordering: .relaxed)
        }
    }

    func popLocal() -> Unmanaged<PoolJob>? {
        guard localCount.load(ordering: .relaxed) > 0 else { return nil }
        return lock.withLock {
            let job = local.popFront()
            localCount.store(local.count, ordering: .relaxed)
            return job
        }
    }

    /// Moves half of `victim`'s queue (rounded up) to this worker and returns the first job.
    func steal(from victim: PoolWorker) -> Unmanaged<PoolJob>? {
        guard victim.localCount.load(ordering: .relaxed) > 0 else { return nil }
        var taken: [Unmanaged<PoolJob>] = []
        victim.lock.withLock {
            let half = (victim.local.count + 1) / 2
            taken.reserveCapacity(half)
            for _ in 0..<half {
                if let job = victim.local.popFront() { taken.append(job) }
            }
            victim.localCount.store(victim.local.count, ordering: .relaxed)
        }
        guard !taken.isEmpty else { return nil }
        if taken.count > 1 {
            lock.withLock {
                for job in taken.dropFirst() { local.pushBack(job) }
                localCount.store(local.count, ordering: .relaxed)
            }
        }
        return taken[0]
    }

    func releaseQueuedJobs() {
        runNext?.releaseUnrun()
        runNext = nil
        lock.withLock {
            while let job = local.popFront() { job.releaseUnrun() }
            localCount.store(0, ordering: .relaxed)
        }
    }

    // MARK: The worker loop

    /// What a new worker thread starts with: its worker, the pool (retained: the thread keeps
    /// it alive until the thread exits) and the thread's name.
    private final class ThreadStart {
        let worker: PoolWorker
        let pool: PoolScheduler
        let name: String

        init(worker: PoolWorker, pool: PoolScheduler, name: String) {
            self.worker = worker
            self.pool = pool
            self.name = name
        }
    }

    func start(pool: PoolScheduler, name: String) {
        self.pool = pool
        poolIdentity = ObjectIdentifier(pool)
        let context = Unmanaged.passRetained(ThreadStart(worker: self, pool: pool, name: name)).toOpaque()
        var handle = pthread_t()
        let error = pthread_create(&handle, nil, { context in
            let start = Unmanaged<ThreadStart>.fromOpaque(context!).takeRetainedValue()
            // Linux limits thread names to 15 bytes; keep the end, where the worker's index is,
            // cut at a character boundary.
            var name = Substring(start.name)
            while name.utf8.count > 15 { name = name.dropFirst() }
            Thread.current.name = String(name)
            start.worker.runLoop(pool: start.pool)
            return nil
        }, context)
        precondition(error == 0, "pthread_create failed with error \(error)")
        thread = handle
    }

    func join() {
        if let thread {
            pthread_join(thread, nil)
            self.thread = nil
        }
    }

    private func runLoop(pool: PoolScheduler) {
        PoolWorker.setCurrent(self)
        var tick = 0
        var runNextStreak = 0
        while !pool.isShutdown.load(ordering: .relaxed) {
            tick &+= 1
            if let job = nextJob(pool: pool, tick: tick, runNextStreak: &runNextStreak) ?? search(pool: pool) {
                // The queue's retain (or, for an actor queued without one, its parent) keeps the
                // job alive for the run; no extra retain needed.
                if job._withUnsafeGuaranteedRef({ $0.runFromPool() }) {
                    job.release()
                }
            } else {
                pool.park(self)
            }
        }
        PoolWorker.setCurrent(nil)
    }

    /// Polls the queues for a short while before the worker parks, yielding the CPU between
    /// polls: a producer that hands out work one job at a time then finds an awake worker
    /// instead of paying a thread wake-up per job. A worker that finds work while others may
    /// still be needed wakes one, so parallelism is not lost to the skipped wake-ups.
    private func search(pool: PoolScheduler) -> Unmanaged<PoolJob>? {
        pool.searching.wrappingAdd(1, ordering: .sequentiallyConsistent)
        var found: Unmanaged<PoolJob>?
        for round in 0..<pool.searchRounds where !pool.isShutdown.load(ordering: .relaxed) {
            if let job = popLocal() ?? pool.popGlobal() ?? stealFromAny(pool: pool) {
                found = job
                break
            }
            if round >= 4 { sched_yield() }
        }
        pool.searching.wrappingSubtract(1, ordering: .sequentiallyConsistent)
        if found != nil, pool.globalCount.load(ordering: .relaxed) > 0 || localCount.load(ordering: .relaxed) > 0 {
            pool.wakeOneIfAnySleeps()
        }
        return found
    }

    private func stealFromAny(pool: PoolScheduler) -> Unmanaged<PoolJob>? {
        let workers = pool.workers
        for offset in 1..<max(workers.count, 1) {
            if let job = steal(from: workers[(index + offset) % workers.count]) {
                return job
            }
        }
        return nil
    }

    private func nextJob(pool: PoolScheduler, tick: Int, runNextStreak: inout Int) -> Unmanaged<PoolJob>? {
        if tick % 61 == 0, let job = pool.popGlobal() {
            return job
        }
        if let job = runNext {
            if runNextStreak < pool.runNextLimit {
                runNextStreak += 1
                runNext = nil
                return job
            }
            // Fairness: the slot had its turn; queue it behind the local work.
            runNext = nil
            pushLocal(job)
        }
        runNextStreak = 0
        return popLocal() ?? pool.popGlobal() ?? stealFromAny(pool: pool)
    }

    // MARK: Current worker (thread-local)

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        let error = pthread_key_create(&key, nil)
        precondition(error == 0, "pthread_key_create failed with error \(error)")
        return key
    }()

    /// The worker running on the calling thread, if it is a pool worker thread.
    static var current: PoolWorker? {
        currentUnmanaged?.takeUnretainedValue()
    }

    /// `current` without a retain; valid while the worker's thread runs (the pool joins its
    /// threads before releasing the workers).
    static var currentUnmanaged: Unmanaged<PoolWorker>? {
        guard let pointer = pthread_getspecific(key) else { return nil }
        return Unmanaged<PoolWorker>.fromOpaque(pointer)
    }

    private static func setCurrent(_ worker: PoolWorker?) {
        pthread_setspecific(key, worker.map { Unmanaged.passUnretained($0).toOpaque() })
    }
}

// `local` is protected by `lock`; `runNext` is touched only by the worker's own thread (it is
// read by `enqueue` only when `PoolWorker.current === self`); the rest is immutable or atomic.
extension PoolWorker: @unchecked Sendable {}

/// A binary semaphore for one sleeping thread: `park` waits for a permit, `unpark` grants it.
final class Parker {
    private let lock = Lock()
    private let condition: UnsafeMutablePointer<pthread_cond_t>
    /// Protected by `lock`.
    private var permit = false

    init() {
        condition = .allocate(capacity: 1)
        pthread_cond_init(condition, nil)
    }

    deinit {
        pthread_cond_destroy(condition)
        condition.deallocate()
    }

    func park() {
        lock.lock()
        while !permit {
            pthread_cond_wait(condition, lock.mutex)
        }
        permit = false
        lock.unlock()
    }

    func unpark() {
        lock.withLock {
            permit = true
            pthread_cond_signal(condition)
        }
    }
}

// `permit` is protected by `lock`; the condition variable is used only with `lock` held.
extension Parker: @unchecked Sendable {}
