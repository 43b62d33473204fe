#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// A joinable POSIX thread running one closure: benchmarks that need N dedicated threads use
/// these rather than a pool, so the thread count is exactly what the benchmark says.
struct BenchThread {
    private let handle: pthread_t

    /// Starts a thread running `body`.
    init(_ body: @escaping @Sendable () -> Void) {
        final class Box: Sendable {
            let body: @Sendable () -> Void
            init(_ body: @escaping @Sendable () -> Void) { self.body = body }
        }
        let context = Unmanaged.passRetained(Box(body)).toOpaque()
        #if canImport(Darwin)
        var handle: pthread_t?
        #else
        var handle = pthread_t()
        #endif
        let error = pthread_create(&handle, nil, { context in
            let box = Unmanaged<Box>.fromOpaque(context!).takeRetainedValue()
            box.body()
            return nil
        }, context)
        precondition(error == 0, "pthread_create failed with error \(error)")
        #if canImport(Darwin)
        self.handle = handle!
        #else
        self.handle = handle
        #endif
    }

    /// Waits for the thread to finish. Call exactly once per thread.
    func join() {
        let error = pthread_join(handle, nil)
        precondition(error == 0, "pthread_join failed with error \(error)")
    }
}

/// Lets a fixed number of threads start their timed work together.
///
/// Each participant calls `arriveAndWait()`; the timing thread calls `waitForAllThenOpen()`,
/// reads the clock, and the participants go. Waiting yields the CPU, so on a machine with
/// fewer cores than threads the waiters do not starve the others.
final class StartGate: Sendable {
    private let arrived = Atomic<Int>(0)
    private let open = Atomic<Bool>(false)
    private let participants: Int

    init(participants: Int) {
        self.participants = participants
    }

    /// Called by each participant; returns once the gate is open.
    func arriveAndWait() {
        arrived.add(1, ordering: .releasing)
        while !open.load(ordering: .acquiring) { sched_yield() }
    }

    /// Called by the timing thread: waits until every participant has arrived, then opens.
    func waitForAllThenOpen() {
        while arrived.load(ordering: .acquiring) < participants { sched_yield() }
        open.store(true, ordering: .releasing)
    }
}
