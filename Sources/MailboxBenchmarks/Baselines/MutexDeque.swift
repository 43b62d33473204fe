import Synchronization

/// A growable ring buffer of `Int`s: the queue inside the baseline, kept deliberately plain.
struct RingDeque {
    private var storage: [Int]
    private var head = 0
    private(set) var count = 0

    init(initialCapacity: Int = 1024) {
        var capacity = 1
        while capacity < initialCapacity { capacity <<= 1 }
        storage = Array(repeating: 0, count: capacity)
    }

    mutating func append(_ value: Int) {
        if count == storage.count { grow() }
        storage[(head &+ count) & (storage.count &- 1)] = value
        count &+= 1
    }

    mutating func popFirst() -> Int? {
        guard count > 0 else { return nil }
        let value = storage[head]
        head = (head &+ 1) & (storage.count &- 1)
        count &-= 1
        return value
    }

    /// Doubles the capacity, moving the elements to the front in order.
    private mutating func grow() {
        var bigger = [Int](repeating: 0, count: storage.count * 2)
        for offset in 0..<count {
            bigger[offset] = storage[(head &+ offset) & (storage.count &- 1)]
        }
        storage = bigger
        head = 0
    }
}

/// The MPSC baseline: a `RingDeque` behind a `Synchronization.Mutex`, what one writes first.
final class MutexDeque: Sendable {
    private let deque = Mutex(RingDeque())

    func enqueue(_ value: Int) {
        deque.withLock { $0.append(value) }
    }

    func dequeue() -> Int? {
        deque.withLock { $0.popFirst() }
    }
}
