import Synchronization

/// What only some actors need: a bounded mailbox (its capacity, overflow policy, count of
/// queued user messages and suspended senders) or a scheduler other than the system's own pool.
/// An actor with neither (the common case) has no options object, which keeps 32 bytes out of
/// every other cell.
///
/// Thread-safety: immutable but for `userCount`, an atomic that senders and the mailbox run
/// share, and `roomWaiters`, which has its own lock.
@usableFromInline
final class CellOptions: Sendable {
    /// The scheduler, unless it is the system's own pool (which the system keeps alive).
    @usableFromInline
    let customScheduler: (any Scheduler)?
    /// `Int.max` when the mailbox is unbounded.
    @usableFromInline
    let capacity: Int
    @usableFromInline
    let overflow: OverflowPolicy
    /// User messages queued; maintained only for bounded mailboxes.
    @usableFromInline
    let userCount = Atomic<Int>(0)
    /// Senders suspended in `send(_:)` waiting for room (`backpressure` only).
    @usableFromInline
    let roomWaiters: RoomWaiters?

    init(customScheduler: (any Scheduler)?, capacity: Int, overflow: OverflowPolicy) {
        self.customScheduler = customScheduler
        self.capacity = capacity
        self.overflow = overflow
        roomWaiters = overflow == .backpressure && capacity != .max ? RoomWaiters() : nil
    }

    /// Whether the mailbox is bounded.
    @inlinable
    var isBounded: Bool { capacity != .max }
}
