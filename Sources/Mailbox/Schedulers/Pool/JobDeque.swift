/// A growable ring buffer of jobs, used as a worker's local run queue.
///
/// Not thread-safe: each worker's deque is protected by that worker's `Lock`; the owner pushes
/// and pops at the back/front, thieves take from the front in halves.
struct JobDeque {
    private var buffer: UnsafeMutablePointer<Unmanaged<PoolJob>>
    private var capacity: Int
    private var head = 0
    private(set) var count = 0

    init(capacity: Int = 64) {
        precondition(capacity > 0 && capacity & (capacity - 1) == 0, "capacity must be a power of two")
        self.capacity = capacity
        self.buffer = .allocate(capacity: capacity)
    }

    /// Frees the buffer; the jobs still in it (if any) are the caller's to release first.
    func deallocate() {
        buffer.deallocate()
    }

    var isEmpty: Bool { count == 0 }

    mutating func pushBack(_ job: Unmanaged<PoolJob>) {
        if count == capacity { grow() }
        buffer[(head + count) & (capacity - 1)] = job
        count += 1
    }

    mutating func popFront() -> Unmanaged<PoolJob>? {
        guard count > 0 else { return nil }
        let job = buffer[head]
        head = (head + 1) & (capacity - 1)
        count -= 1
        return job
    }

    private mutating func grow() {
        let newCapacity = capacity * 2
        let newBuffer = UnsafeMutablePointer<Unmanaged<PoolJob>>.allocate(capacity: newCapacity)
        for index in 0..<count {
            newBuffer[index] = buffer[(head + index) & (capacity - 1)]
        }
        buffer.deallocate()
        buffer = newBuffer
        capacity = newCapacity
        head = 0
    }
}
