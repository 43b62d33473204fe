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
    /// A node is one raw allocation: the atomic `next` link at offset 0, the element (an
    /// `Element?`, `nil` in the stub) after it. The two fields are reached through their own
    /// typed pointers, never as one struct, so the consumer taking an element never "modifies"
    /// the memory of the link that a producer may be storing to at the same time.
    @usableFromInline
    typealias Link = Atomic<UnsafeMutableRawPointer?>

    @usableFromInline
    static var elementOffset: Int {
        let linkSize = MemoryLayout<Link>.size
        let alignment = MemoryLayout<Element?>.alignment
        return (linkSize + alignment - 1) / alignment * alignment
    }

    @usableFromInline
    static var nodeAlignment: Int { max(MemoryLayout<Link>.alignment, MemoryLayout<Element?>.alignment) }

    @inlinable
    static func link(_ node: UnsafeMutableRawPointer) -> UnsafeMutablePointer<Link> {
        node.assumingMemoryBound(to: Link.self)
    }

    @inlinable
    static func element(_ node: UnsafeMutableRawPointer) -> UnsafeMutablePointer<Element?> {
        (node + elementOffset).assumingMemoryBound(to: Element?.self)
    }

    @inlinable
    static func makeNode(_ element: consuming Element?) -> UnsafeMutableRawPointer {
        let node = UnsafeMutableRawPointer.allocate(
            byteCount: elementOffset + MemoryLayout<Element?>.size, alignment: nodeAlignment)
        node.bindMemory(to: Link.self, capacity: 1).initialize(to: Link(nil))
        (node + elementOffset).bindMemory(to: Element?.self, capacity: 1).initialize(to: element)
        return node
    }

    @inlinable
    static func freeNode(_ node: UnsafeMutableRawPointer) {
        element(node).deinitialize(count: 1)
        link(node).deinitialize(count: 1)
        node.deallocate()
    }

    /// The most recently enqueued node. Written only by producers' atomic exchange.
    @usableFromInline
    let tail: Atomic<UnsafeMutableRawPointer>

    /// The node before the oldest element (the stub). Read and written only by the consumer,
    /// one at a time by contract, so exclusivity is not checked at run time (the check cost
    /// ~10% of an actor message).
    @usableFromInline
    @exclusivity(unchecked)
    var head: UnsafeMutableRawPointer

    /// Creates an empty queue.
    public init() {
        let stub = Self.makeNode(nil)
        head = stub
        tail = Atomic(stub)
    }

    deinit {
        var node: UnsafeMutableRawPointer? = head
        while let current = node {
            node = Self.link(current).pointee.load(ordering: .relaxed)
            Self.freeNode(current)
        }
    }

    /// Appends `element`. Lock-free and wait-free for producers; safe from any thread.
    @inlinable
    public func enqueue(_ element: consuming Element) {
        let node = Self.makeNode(element)
        let previous = tail.exchange(node, ordering: .acquiringAndReleasing)
        Self.link(previous).pointee.store(node, ordering: .releasing)
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
            if let next = Self.link(current).pointee.load(ordering: .acquiring) {
                let element = Self.element(next).pointee.take()
                head = next
                Self.freeNode(current)
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
        Self.link(head).pointee.load(ordering: .acquiring) == nil && tail.load(ordering: .acquiring) == head
    }
}

// `tail` and every node's `next` are atomics (acquire/release); `head` and the elements are
// touched only by the single consumer, handed over with those atomics' happens-before edges.
extension MPSCQueue: @unchecked Sendable where Element: Sendable {}
