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
    /// The worker's run queue. Protected by `lock` (which is what makes every access
    /// exclusive: no run-time check).
    @exclusivity(unchecked)
    var local = JobDeque()
    /// Mirrors `local.count`, read without the lock by thieves as a hint.
    let localCount = Atomic<Int>(0)

    let parker = Parker()
    private var thread: pthread_t?
    /// The worker thread's kernel id once it runs (Linux with glibc; 0 elsewhere): tests look
    /// it up in `/proc` to see that the thread has exited. A thread's name cannot tell, as a
    /// thread the worker creates (libdispatch's, for one) starts with the worker's name.
    let kernelThreadID = Atomic<Int32>(0)

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
            #if canImport(Glibc)
            start.worker.kernelThreadID.store(_currentKernelThreadID(), ordering: .releasing)
            #endif
            start.worker.workLoop(pool: start.pool)
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

    /// The worker thread's loop: take a job (`nextJob`, else `search`), run it, park when
    /// there is none; until the pool shuts down.
    private func workLoop(pool: PoolScheduler) {
        PoolWorker.setCurrent(self)
        var tick = 0
        var runNextStreak = 0
        var backFromPark = false
        while !pool.isShutdown.load(ordering: .relaxed) {
            tick &+= 1
            let job: Unmanaged<PoolJob>?
            if let next = nextJob(pool: pool, tick: tick, runNextStreak: &runNextStreak) {
                // Woken (or kept awake by `park`) for queued work, possibly for jobs whose
                // publishers skipped their wake-up while a worker searched: pass the wake-up on
                // while more is queued, so the chain reaches every job (`search` does the same
                // for what it finds). Without it a third job could wait with a worker asleep.
                if backFromPark, pool.globalCount.load(ordering: .relaxed) > 0 || localCount.load(ordering: .relaxed) > 0 {
                    pool.wakeOneIfAnySleeps()
                }
                job = next
            } else {
                job = search(pool: pool)
            }
            backFromPark = false
            if let job {
                // The queue's retain (or, for an actor queued without one, its parent) keeps the
                // job alive for the run; no extra retain needed.
                if job._withUnsafeGuaranteedRef({ $0.runJobOnWorker() }) {
                    job.release()
                }
            } else {
                pool.park(self)
                backFromPark = true
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
        if found == nil, let hook = pool._searchEndedEmpty { hook() }
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
