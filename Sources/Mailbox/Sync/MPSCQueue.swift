#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// An unbounded multi-producer single-consumer FIFO queue of array blocks, lock-free for its
/// producers.
///
/// Producers on any number of threads call `enqueue(_:)`; it never blocks, never fails and never
/// waits for another thread: producers are lock-free. Exactly one consumer at a time calls
/// `dequeue()` (the mailbox run that owns the queue). The consumer is not lock-free: when a
/// producer has claimed the next position but not yet written its element, `dequeue()` waits for
/// that producer (spinning, then yielding), which is normally a few instructions but lasts as
/// long as that producer is descheduled between its claim and its write.
///
/// Ordering: elements enqueued by one producer are dequeued in the order that producer
/// enqueued them; elements from different producers interleave in the order their claims on
/// `tailIndex` took effect.
///
/// ## Design
/// Every element gets a position from one atomic counter (`tailIndex`, fetch-and-add: one
/// contended atomic per enqueue). Positions map onto a singly linked list of blocks, each an
/// array of slots with a per-slot *written* flag. The first block holds 2 slots and each new
/// block doubles, up to `maximumBlockCapacity`, so an idle queue is small while a busy one
/// allocates once per 32 elements and reads them from contiguous memory.
///
/// ```
///  headBlock/headIndex (consumer)          tailBlock (hint, producers)     tailIndex (producers)
///    │                                        │                              │
///    ▼                                        ▼                              ▼
///  [start 0 │ 2 slots] ─▶ [2 │ 4] ─▶ [6 │ 8] ─▶ [14 │ 16] ─▶ [30 │ 32] ─▶ ... (block of index)
/// ```
///
/// `enqueue`: take `index = tailIndex++`; walk from `tailBlock` to the block holding `index`,
/// appending a block (compare-and-swap on `next`) when the list ends there; write the element;
/// set the slot's flag (release). Any producer may append, so no producer ever waits for
/// another: producers are lock-free. A producer that walks past a block whose every slot is
/// written moves `tailBlock` forward and *releases* that block, recording `tailIndex` at that
/// moment (`observedTail`).
///
/// `dequeue`: if the slot at `headIndex` is flagged, take its element. Otherwise, if
/// `tailIndex == headIndex` the queue is empty (`nil`); else a producer has taken the position
/// but not written it yet, and the consumer waits out those few instructions (spinning, then
/// yielding) rather than reporting a non-empty queue as empty. So `dequeue` returns `nil` only
/// when every enqueue that has returned has been dequeued.
///
/// Reclamation (Tokio's mpsc block list): a consumed block may still be in the hands of a
/// producer that read `tailBlock` before it moved. Such a producer took its index before the
/// block was released, so its index is below `observedTail`, and the consumer has dequeued
/// that index only after the producer's last touch of any block. The consumer therefore
/// recycles a block only once it is released and `headIndex >= observedTail`; a recycled
/// full-size block is kept in `spareBlock` for the next append, otherwise freed.
///
/// Lazy first block: a new queue allocates nothing beyond itself. The first enqueue allocates
/// the first block and publishes it twice: in `firstBlock` (by compare-and-swap from `nil`, so
/// exactly one block wins) and then as `tailBlock`. A producer that read `tailBlock` as `nil`
/// took its index before the first block became the tail, so the first block cannot be
/// recycled before that producer's element is dequeued (the argument above), and it
/// walks from `firstBlock`. The consumer starts from `firstBlock` too. (A first-block winner
/// preempted between its two compare-and-swaps leaves `tailBlock` at `nil` for that long: other
/// producers then walk from `firstBlock` and no block can be released, like any producer that
/// stalls between claiming a slot and writing it.)
///
/// The queue owns its blocks: `deinit` frees them along with every element still queued.
///
/// ## Halves
/// The queue's state is two non-copyable halves, `MPSCQueueTail` (the producers' fields) and
/// `MPSCQueueHead` (the consumer's), so that an owner can embed them with other fields between
/// them, keeping the consumer's fields off the producers' cache lines without padding. An actor
/// embeds both in its cell (no queue object per actor); this class holds them with padding
/// between, for everyone else.
///
/// Thread-safety: `enqueue` from any thread; `dequeue` and `isEmpty` from one consumer at a time
/// (a caller that hands the consumer role between threads must do so with a happens-before
/// edge, as the actor run loop's activation counter does).
package final class MPSCQueue<Element> {
    // MARK: Producer side

    @usableFromInline
    let tail = MPSCQueueTail<Element>()

    /// Keeps the consumer's fields off the producers' cache line(s).
    @usableFromInline
    let _padding: CacheLinePadding = CacheLinePadding()

    // MARK: Consumer side (touched only by the single consumer)

    @usableFromInline
    @exclusivity(unchecked)
    var head = MPSCQueueHead<Element>()

    /// Creates an empty queue. It allocates no block until the first `enqueue`.
    package init() {}

    deinit {
        head.releaseAll(tail)
    }

    /// Appends `element`. Lock-free for producers; safe from any thread.
    @inlinable
    package func enqueue(_ element: consuming Element) {
        tail.enqueue(element)
    }

    /// Removes and returns the oldest element, or `nil` when the queue is empty.
    ///
    /// Consumer only. If a producer has taken the next position but not yet written it, waits
    /// (spinning, then yielding the thread) for it to finish rather than reporting a non-empty
    /// queue as empty.
    @inlinable
    package func dequeue() -> Element? {
        head.dequeue(tail)
    }

    /// Whether the queue holds no element and no enqueue is in progress. Consumer only.
    @inlinable
    package var isEmpty: Bool {
        head.isEmpty(tail)
    }
}

/// One array of slots: a header, then `capacity` slots of (element, written flag), in one
/// allocation. Each flag sits right after its element, so a producer and a consumer share a
/// cache line only when they work within a few slots of each other (with a separate flag
/// array they shared the flags' line for every element of the block). A slot's element is
/// initialised exactly when its flag is set and it has not been dequeued yet.
@usableFromInline
struct MPSCQueueBlock<Element>: ~Copyable {
    @usableFromInline
    typealias Pointer = UnsafeMutablePointer<MPSCQueueBlock<Element>>

    /// The next block, appended by a producer with a compare-and-swap from `nil`.
    @usableFromInline
    let next: Atomic<Pointer?>
    /// A later block of the list that a producer found by walking from here: a shortcut for
    /// producers that start here while this block cannot be passed (a producer that took
    /// a position in it is still writing). Reset when the block is recycled.
    @usableFromInline
    let jump: Atomic<Pointer?>
    /// Set once `tailBlock` has moved past this block (with `observedTail` written first).
    @usableFromInline
    let released: Atomic<Bool>
    /// `tailIndex` just after `tailBlock` moved past this block.
    @usableFromInline
    let observedTail: Atomic<Int>
    /// The position of the first slot. Written before the block is published (the
    /// releasing compare-and-swap on the previous block's `next`), then read-only.
    @usableFromInline
    var start: Int
    /// Number of slots.
    @usableFromInline
    let capacity: Int
    /// `capacity` slots of `slotStride` bytes: the element, then its written flag (set with
    /// release by the producer after writing the element).
    @usableFromInline
    let slots: UnsafeMutableRawPointer

    /// Slots in the largest blocks (a power of two).
    @inlinable
    static var maximumCapacity: Int { 32 }

    /// Slots in the queue's first block.
    @inlinable
    static var firstCapacity: Int { 2 }

    /// The written flag of slot `offset`.
    @inlinable
    func written(_ offset: Int) -> UnsafeMutablePointer<Atomic<Bool>> {
        (slots + (offset &* Self.slotStride &+ Self.flagOffset)).assumingMemoryBound(to: Atomic<Bool>.self)
    }

    /// The element of slot `offset`.
    @inlinable
    func element(_ offset: Int) -> UnsafeMutablePointer<Element> {
        (slots + offset &* Self.slotStride).assumingMemoryBound(to: Element.self)
    }

    @usableFromInline
    init(start: Int, capacity: Int, slots: UnsafeMutableRawPointer) {
        self.next = Atomic(nil)
        self.jump = Atomic(nil)
        self.released = Atomic(false)
        self.observedTail = Atomic(0)
        self.start = start
        self.capacity = capacity
        self.slots = slots
    }

    /// Whether every slot has been written.
    @inlinable
    func isFullyWritten() -> Bool {
        for offset in 0..<capacity where !written(offset).pointee.load(ordering: .acquiring) {
            return false
        }
        return true
    }

    // MARK: Block memory

    /// Bytes from a slot's start to its written flag (the element comes first).
    @inlinable
    static var flagOffset: Int { MemoryLayout<Element>.size }

    /// Bytes per slot: the element, its flag, padding to the element's alignment.
    @inlinable
    static var slotStride: Int {
        let alignment = MemoryLayout<Element>.alignment
        return (flagOffset + MemoryLayout<Atomic<Bool>>.size + alignment - 1) / alignment * alignment
    }

    /// Bytes from the block's start to its first slot.
    @inlinable
    static var slotsOffset: Int {
        let alignment = slotAlignment
        return (MemoryLayout<Self>.stride + alignment - 1) / alignment * alignment
    }

    @inlinable
    static var slotAlignment: Int { Swift.max(MemoryLayout<Element>.alignment, MemoryLayout<Atomic<Bool>>.alignment) }

    /// The alignment the block's memory needs.
    @inlinable
    static var blockAlignment: Int { Swift.max(MemoryLayout<Self>.alignment, slotAlignment) }

    /// Whether `malloc`'s alignment (16 bytes on every platform we build for) is enough: then
    /// blocks come from `malloc` directly. `UnsafeMutableRawPointer.allocate` goes through the
    /// runtime's aligned allocation (`posix_memalign` on Linux) even for default alignment,
    /// which costs more per block, and every actor has one (see docs/Performance.md).
    @inlinable
    static var usesMalloc: Bool { blockAlignment <= 16 }

    @inlinable
    static func allocate(start: Int, capacity: Int) -> Pointer {
        let byteCount = slotsOffset + capacity * slotStride
        let raw: UnsafeMutableRawPointer
        if usesMalloc {
            // Out of memory traps, as Swift's own allocation does.
            guard let memory = malloc(byteCount) else { fatalError("MPSCQueue: out of memory") }
            raw = memory
        } else {
            raw = UnsafeMutableRawPointer.allocate(byteCount: byteCount, alignment: blockAlignment)
        }
        let slots = raw + slotsOffset
        for offset in 0..<capacity {
            let slot = slots + offset * slotStride
            slot.bindMemory(to: Element.self, capacity: 1)
            (slot + flagOffset).bindMemory(to: Atomic<Bool>.self, capacity: 1).initialize(to: Atomic(false))
        }
        let block = raw.bindMemory(to: Self.self, capacity: 1)
        block.initialize(to: Self(start: start, capacity: capacity, slots: slots))
        return block
    }

    /// Frees a block whose elements have all been moved out or deinitialised.
    @inlinable
    static func deallocate(_ block: Pointer) {
        for offset in 0..<block.pointee.capacity {
            block.pointee.written(offset).deinitialize(count: 1)
        }
        block.deinitialize(count: 1)
        if usesMalloc {
            free(block)
        } else {
            UnsafeMutableRawPointer(block).deallocate()
        }
    }
}

/// The producers' half of an MPSC queue (see `MPSCQueue`): safe to use from any thread.
@usableFromInline
struct MPSCQueueTail<Element>: ~Copyable {
    @usableFromInline
    typealias Block = MPSCQueueBlock<Element>

    /// The next position to hand out. Every `enqueue` takes one with fetch-and-add.
    @usableFromInline
    let tailIndex = Atomic<Int>(0)

    /// A block at or before the block of every position not yet handed out; producers walk
    /// forward from it. `nil` until the first block is published; then only moves forward, by
    /// compare-and-swap, past fully written blocks.
    @usableFromInline
    let tailBlock = Atomic<UnsafeMutableRawPointer?>(nil)

    /// The first block, once allocated (see "Lazy first block" in `MPSCQueue`). Read only by
    /// producers that found `tailBlock` still `nil`, and by the consumer before its first block.
    @usableFromInline
    let firstBlock = Atomic<UnsafeMutableRawPointer?>(nil)

    /// One recycled full-size block, ready for the next append (exchange-based hand-off:
    /// whoever swaps it out owns it).
    @usableFromInline
    let spareBlock = Atomic<UnsafeMutableRawPointer?>(nil)

    @inlinable
    init() {}

    /// `raw` as a block pointer. The block pointers above are stored untyped: an `Atomic` of a
    /// type that depends on `Element` is destroyed through its generic metadata (a run-time
    /// look-up) in an owner's unspecialised `deinit`, as the actor cell's is.
    @inlinable
    static func block(_ raw: UnsafeMutableRawPointer?) -> Block.Pointer? {
        raw?.assumingMemoryBound(to: Block.self)
    }

    /// Appends `element` and returns its position (the count of elements enqueued before it,
    /// which is the consumer's `headIndex` when it dequeues this one). Lock-free; safe from any
    /// thread.
    @inlinable
    @discardableResult
    func enqueue(_ element: consuming Element) -> Int {
        let index = tailIndex.wrappingAdd(1, ordering: .sequentiallyConsistent).oldValue
        var block = Self.block(tailBlock.load(ordering: .sequentiallyConsistent)) ?? publishFirstBlock()
        if index &- block.pointee.start >= block.pointee.capacity {
            block = findBlock(holding: index, from: block)
        }
        let slot = index &- block.pointee.start
        block.pointee.element(slot).initialize(to: element)
        block.pointee.written(slot).pointee.store(true, ordering: .releasing)
        return index
    }

    // MARK: Slow paths

    /// The first block, allocating and publishing it if no producer has yet. Called by a
    /// producer that read `tailBlock` as `nil` after taking its index. Inlinable (specialised
    /// for `Element`) although it is a slow path: it runs once per actor, on its first message,
    /// and generic code would look up the block's type metadata on every call.
    @inlinable
    @inline(never)
    func publishFirstBlock() -> Block.Pointer {
        if let first = Self.block(firstBlock.load(ordering: .acquiring)) { return first }
        let fresh = Block.allocate(start: 0, capacity: Block.firstCapacity)
        let (exchanged, winner) = firstBlock.compareExchange(
            expected: nil, desired: UnsafeMutableRawPointer(fresh), ordering: .acquiringAndReleasing)
        guard exchanged else {
            Block.deallocate(fresh)
            return Self.block(winner)!
        }
        // `tailBlock` leaves `nil` only here; until it does, producers come here and walk
        // from `firstBlock`.
        _ = tailBlock.compareExchange(expected: nil, desired: UnsafeMutableRawPointer(fresh), ordering: .sequentiallyConsistent)
        return fresh
    }

    /// Walks from `start` (the `tailBlock` read after taking `index`) to the block holding
    /// position `index`, appending blocks where the list ends. On the way it moves `tailBlock`
    /// past fully written blocks and releases them; where it cannot (a producer is still writing
    /// into the block, possibly preempted), it follows the block's `jump` shortcut instead of
    /// walking every block since, and leaves its own block there as the next shortcut.
    ///
    /// Every block reached this way is at or after `start`, so none can be recycled before
    /// this producer's element is dequeued (see the type's discussion of reclamation).
    @inlinable
    func findBlock(holding index: Int, from start: Block.Pointer) -> Block.Pointer {
        var block = start
        // Checking whether a block is fully written reads all its slots; while a preempted
        // producer pins `tailBlock`, every walker paid for that check (docs/Performance.md has
        // the profile). One position in 8 checks: the tail still moves within 8 enqueues of the
        // block being written, and the others go straight to the `jump` shortcut.
        var mayMoveTail = index & 7 == 0
        while index &- block.pointee.start >= block.pointee.capacity {
            if mayMoveTail {
                if block.pointee.isFullyWritten() {
                    let next = block.pointee.next.load(ordering: .acquiring) ?? append(after: block)
                    if tailBlock.compareExchange(
                        expected: UnsafeMutableRawPointer(block), desired: UnsafeMutableRawPointer(next),
                        ordering: .sequentiallyConsistent
                    ).exchanged {
                        // Every producer that may still hold `block` took its index before this
                        // read (sequentially consistent add, load and swap), so below this value.
                        let observed = tailIndex.wrappingAdd(0, ordering: .sequentiallyConsistent).oldValue
                        block.pointee.observedTail.store(observed, ordering: .relaxed)
                        block.pointee.released.store(true, ordering: .releasing)
                    } else {
                        mayMoveTail = false
                    }
                    block = next
                    continue
                }
                mayMoveTail = false
            }
            if let shortcut = block.pointee.jump.load(ordering: .acquiring),
               shortcut != block, index &- shortcut.pointee.start >= 0 {
                block = shortcut
                if index &- block.pointee.start < block.pointee.capacity { break }
            }
            block = block.pointee.next.load(ordering: .acquiring) ?? append(after: block)
        }
        if block != start {
            let previous = start.pointee.jump.load(ordering: .acquiring)
            if previous == nil || previous!.pointee.start < block.pointee.start {
                start.pointee.jump.store(block, ordering: .releasing)
            }
        }
        return block
    }

    /// Appends a new block after `block` (or returns the one another producer appended first).
    @inlinable
    func append(after block: Block.Pointer) -> Block.Pointer {
        let capacity = Swift.min(block.pointee.capacity &* 2, Block.maximumCapacity)
        let start = block.pointee.start &+ block.pointee.capacity
        let fresh: Block.Pointer
        if capacity == Block.maximumCapacity, let spare = Self.block(spareBlock.exchange(nil, ordering: .acquiring)) {
            spare.pointee.start = start
            fresh = spare
        } else {
            fresh = Block.allocate(start: start, capacity: capacity)
        }
        let (exchanged, winner) = block.pointee.next.compareExchange(
            expected: nil, desired: fresh, ordering: .acquiringAndReleasing
        )
        if exchanged { return fresh }
        // Another producer appended first; ours was never published.
        keepOrFree(fresh)
        return winner!
    }

    /// Keeps an unpublished, reset block as the spare if it is full-size and the spare slot is
    /// empty; frees it otherwise.
    @inlinable
    func keepOrFree(_ block: Block.Pointer) {
        if block.pointee.capacity == Block.maximumCapacity,
           spareBlock.compareExchange(expected: nil, desired: UnsafeMutableRawPointer(block), ordering: .releasing).exchanged {
            return
        }
        Block.deallocate(block)
    }
}

/// The consumer's half of an MPSC queue (see `MPSCQueue`): used by one consumer at a time,
/// always with the same `MPSCQueueTail`.
@usableFromInline
struct MPSCQueueHead<Element>: ~Copyable {
    @usableFromInline
    typealias Block = MPSCQueueBlock<Element>

    /// The position of the oldest element not yet dequeued.
    @usableFromInline
    var headIndex = 0

    /// The block holding `headIndex` (or the block before it, at a block boundary); `nil`
    /// until the consumer first finds the first block.
    @usableFromInline
    var headBlock: Block.Pointer?

    /// The oldest block not yet recycled; blocks from here up to `headBlock` are consumed and
    /// wait until no producer can still hold them. `nil` while `headBlock` is.
    @usableFromInline
    var freeHead: Block.Pointer?

    /// The last value of `tailIndex` the consumer read: positions below it are taken, so the
    /// consumer can wait for them without reading `tailIndex` again (it may fall behind
    /// `headIndex`, since written slots are dequeued without reading `tailIndex`).
    @usableFromInline
    var knownTail = 0

    @inlinable
    init() {}

    /// Removes and returns the oldest element, or `nil` when the queue is empty; waits for a
    /// producer that has taken the next position but not written it yet.
    @inlinable
    mutating func dequeue(_ tail: borrowing MPSCQueueTail<Element>) -> Element? {
        var spins = 0
        while true {
            if let block = headBlock {
                let slot = headIndex &- block.pointee.start
                if slot < block.pointee.capacity {
                    if block.pointee.written(slot).pointee.load(ordering: .acquiring) {
                        headIndex &+= 1
                        return block.pointee.element(slot).move()
                    }
                } else if let next = block.pointee.next.load(ordering: .acquiring) {
                    headBlock = next
                    recycleConsumedBlocks(tail)
                    continue
                }
            } else if let first = MPSCQueueTail<Element>.block(tail.firstBlock.load(ordering: .acquiring)) {
                headBlock = first
                freeHead = first
                continue
            }
            // Not written yet: empty, or a producer is between taking the position and writing
            // it. Read the producers' counter only when the last value read is used up, so
            // waiting for a known producer does not pull their cache line away every spin.
            if headIndex >= knownTail {
                knownTail = tail.tailIndex.load(ordering: .acquiring)
                if knownTail == headIndex { return nil }
            }
            spins &+= 1
            if spins > 64 { sched_yield() }
        }
    }

    /// Whether the next element is known to be there (written in the head block): a peek at
    /// the slot the next `dequeue` reads, without reading the producers' counter. `false` says
    /// nothing (the queue may be empty, or the element in a later block or being written).
    @inlinable
    func nextIsWritten() -> Bool {
        guard let block = headBlock else { return false }
        let slot = headIndex &- block.pointee.start
        return slot < block.pointee.capacity && block.pointee.written(slot).pointee.load(ordering: .relaxed)
    }

    /// Whether the queue holds no element and no enqueue is in progress.
    @inlinable
    func isEmpty(_ tail: borrowing MPSCQueueTail<Element>) -> Bool {
        tail.tailIndex.load(ordering: .acquiring) == headIndex
    }

    /// Recycles consumed blocks that no producer can hold any more: one full-size block as
    /// the tail's spare, the rest freed.
    @inlinable
    mutating func recycleConsumedBlocks(_ tail: borrowing MPSCQueueTail<Element>) {
        while let block = freeHead, block != headBlock {
            guard block.pointee.released.load(ordering: .acquiring),
                  block.pointee.observedTail.load(ordering: .relaxed) <= headIndex
            else { return }
            freeHead = block.pointee.next.load(ordering: .acquiring)!
            // Reset for reuse: every element was moved out by `dequeue`.
            for offset in 0..<block.pointee.capacity {
                block.pointee.written(offset).pointee.store(false, ordering: .relaxed)
            }
            block.pointee.next.store(nil, ordering: .relaxed)
            block.pointee.jump.store(nil, ordering: .relaxed)
            block.pointee.released.store(false, ordering: .relaxed)
            tail.keepOrFree(block)
        }
    }

    /// Frees every block and every element still queued. Call once, from the owner's `deinit`,
    /// when no producer can be running.
    @inlinable
    mutating func releaseAll(_ tail: borrowing MPSCQueueTail<Element>) {
        // Every flagged slot at or after `headIndex` holds an element.
        var block: Block.Pointer? = freeHead ?? MPSCQueueTail<Element>.block(tail.firstBlock.load(ordering: .acquiring))
        while let current = block {
            let start = current.pointee.start
            for offset in 0..<current.pointee.capacity
            where start + offset >= headIndex && current.pointee.written(offset).pointee.load(ordering: .acquiring) {
                current.pointee.element(offset).deinitialize(count: 1)
            }
            block = current.pointee.next.load(ordering: .acquiring)
            Block.deallocate(current)
        }
        if let spare = MPSCQueueTail<Element>.block(tail.spareBlock.exchange(nil, ordering: .acquiring)) {
            Block.deallocate(spare)
        }
        headBlock = nil
        freeHead = nil
    }
}

/// 128 bytes of nothing: two cache lines (the adjacent-line prefetcher pulls pairs), placed
/// between fields written by different threads.
@usableFromInline
struct CacheLinePadding: Sendable {
    @usableFromInline
    let bytes: (Int, Int, Int, Int, Int, Int, Int, Int, Int, Int, Int, Int, Int, Int, Int, Int) =
        (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)

    @usableFromInline
    init() {}
}

// The halves are atomics and the consumer's head (see the type's discussion); an element is
// handed from its producer to the consumer by the release store / acquire load of its slot's
// flag; `head` is touched only by the single consumer (handed over with a happens-before edge).
extension MPSCQueue: @unchecked Sendable where Element: Sendable {}
