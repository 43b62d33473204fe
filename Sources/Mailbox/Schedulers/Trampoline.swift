#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs mailbox runs scheduled on the `ImmediateScheduler` on the sending thread without
/// recursion: a run scheduled while another is running on the same thread is queued and runs
/// after it, in FIFO order.
enum Trampoline {
    final class Queue {
        var jobs: [Unmanaged<PoolJob>] = []
        var isDraining = false
    }

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        let error = pthread_key_create(&key) { pointer in
            if let pointer { Unmanaged<Queue>.fromOpaque(pointer).release() }
        }
        precondition(error == 0, "pthread_key_create failed with error \(error)")
        return key
    }()

    private static var queue: Queue {
        if let pointer = pthread_getspecific(key) {
            return Unmanaged<Queue>.fromOpaque(pointer).takeUnretainedValue()
        }
        let queue = Queue()
        pthread_setspecific(key, Unmanaged.passRetained(queue).toOpaque())
        return queue
    }

    /// Runs `job` now, or after the run in progress on this thread; consumes the retain.
    static func run(_ job: Unmanaged<PoolJob>) {
        let queue = self.queue
        queue.jobs.append(job)
        guard !queue.isDraining else { return }
        queue.isDraining = true
        drain(queue)
    }

    /// Runs `body` with this thread's trampoline held: runs scheduled meanwhile wait until
    /// `body` has returned, then run, in order (a pool router tells its routees under its lock,
    /// and their runs must not happen inside it).
    static func deferringRuns<T>(_ body: () -> T) -> T {
        let queue = self.queue
        if queue.isDraining { return body() }
        queue.isDraining = true
        let result = body()
        drain(queue)
        return result
    }

    /// Runs the queued jobs, those they queue included, then lets go of the trampoline.
    private static func drain(_ queue: Queue) {
        var index = 0
        while index < queue.jobs.count {
            let next = queue.jobs[index]
            index += 1
            next.takeUnretainedValue().runJob()
            next.release()
        }
        queue.jobs.removeAll(keepingCapacity: true)
        queue.isDraining = false
    }
}
