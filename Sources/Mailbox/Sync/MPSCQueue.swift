#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// A lock-free, unbounded, multi-producer single-consumer FIFO queue (Vyukov's node-based design).
///
/// Producers on any number of threads call `enqueue(_:)`; it never blocks and never fails.
/// Exactly one consumer at a time calls `dequeue()` (the mailbox run that owns the queue).
///
/// Ordering: elements enqueued by one producer are dequeued in the order that producer
/// enqueued them; elements from different producers interleave in the order their `exchange` on
/// `tail` took effect.
///
/// ```
///  head (consumer)                                   tail (producers, atomic exchange)
///    │                                                  │
///    ▼                                                  ▼
///  [stub] ──next──▶ [a] ──next──▶ [b] ──next──▶ ... ▶ [z] ──next──▶ nil
/// ```
///
/// `enqueue` is two atomic steps: swap the new node into `tail`, then link the previous tail
/// to it. Between the two the queue is momentarily unlinked; `dequeue` sees `tail != head` and
/// waits out those few instructions instead of reporting "empty", so it returns `nil` only
/// when every enqueue that has returned has been dequeued.
///
/// The queue owns its nodes: `deinit` frees every node still queued along with its element.
///
/// Thread-safety: `enqueue` from any thread; `dequeue` and `isEmpty` from one consumer at a time
/// (a caller that hands the consumer role between threads must do so with a happens-before
/// edge, as the actor run loop's status word does).
public final class MPSCQueue<Element> {
    @usableFromInline
    struct Node: ~Copyable {
        @usableFromInline
        let next: Atomic<UnsafeMutablePointer<Node>?>
        @usableFromInline
        var element: Element?

        @inlinable
        init(_ element: consuming Element?) {
            self.next = Atomic(nil)
            self.element = element
        }
    }

    /// The most recently enqueued node. Written only by producers' atomic exchange.
    @usableFromInline
    let tail: Atomic<UnsafeMutablePointer<Node>>

    /// The node before the oldest element (the stub). Read and written only by the consumer.
    @usableFromInline
    var head: UnsafeMutablePointer<Node>

    /// Creates an empty queue.
    public init() {
        let stub = UnsafeMutablePointer<Node>.allocate(capacity: 1)
        stub.initialize(to: Node(nil))
        head = stub
        tail = Atomic(stub)
    }

    deinit {
        var node: UnsafeMutablePointer<Node>? = head
        while let current = node {
            node = current.pointee.next.load(ordering: .relaxed)
            current.deinitialize(count: 1)
            current.deallocate()
        }
    }

    /// Appends `element`. Lock-free and wait-free for producers; safe from any thread.
    @inlinable
    public func enqueue(_ element: consuming Element) {
        let node = UnsafeMutablePointer<Node>.allocate(capacity: 1)
        node.initialize(to: Node(element))
        let previous = tail.exchange(node, ordering: .acquiringAndReleasing)
        previous.pointee.next.store(node, ordering: .releasing)
    }

    /// Removes and returns the oldest element, or `nil` when the queue is empty.
    ///
    /// Consumer only. If a producer is between its two steps, waits (spinning, then yielding the
    /// thread) for it to finish rather than reporting a non-empty queue as empty.
    @inlinable
    public func dequeue() -> Element? {
        var spins = 0
        while true {
            let current = head
            if let next = current.pointee.next.load(ordering: .acquiring) {
                let element = next.pointee.element.take()
                head = next
                current.deinitialize(count: 1)
                current.deallocate()
                return element
            }
            if tail.load(ordering: .acquiring) == current {
                return nil
            }
            spins &+= 1
            if spins > 64 { sched_yield() }
        }
    }

    /// Whether the queue holds no element and no enqueue is in progress. Consumer only.
    @inlinable
    public var isEmpty: Bool {
        head.pointee.next.load(ordering: .acquiring) == nil && tail.load(ordering: .acquiring) == head
    }
}

// `tail` and every node's `next` are atomics (acquire/release); `head` and the elements are
// touched only by the single consumer, handed over with those atomics' happens-before edges.
extension MPSCQueue: @unchecked Sendable where Element: Sendable {}
