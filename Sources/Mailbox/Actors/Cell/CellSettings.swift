/// What a new cell takes from its `Props` and its system, resolved out of line (and not
/// generic) so that the cell's inlinable initialiser stays small.
@usableFromInline
struct CellSettings {
    /// `Int.max` when unbounded.
    @usableFromInline let capacity: Int
    @usableFromInline let overflow: OverflowPolicy
    /// Where senders suspend for room (`backpressure` on a bounded mailbox only).
    @usableFromInline let roomWaiters: RoomWaiters?
    /// The scheduler, unless it is the system's own pool (which the system keeps alive).
    @usableFromInline let customScheduler: (any Scheduler)?
    /// The scheduler when it is a pool (unretained: see `ActorCell.poolReference`).
    @usableFromInline let pool: Unmanaged<PoolScheduler>?
    @usableFromInline let runLength: Int32
    @usableFromInline let stashCapacity: Int
    @usableFromInline let idleHook: (@Sendable (ObjectIdentifier) -> Void)?

    /// `props` resolved against `system`'s defaults. `props` has passed `ActorSystem.checkProps`.
    @usableFromInline
    init(props: Props, system: ActorSystem) {
        switch props.mailbox {
        case .unbounded:
            capacity = .max
            overflow = .dropNewest
        case let .bounded(capacity, overflow):
            // `ActorSystem.checkProps` refused anything else before the cell was made.
            precondition(capacity > 0, "a bounded mailbox needs a positive capacity, not \(capacity)")
            self.capacity = capacity
            self.overflow = overflow
        }
        roomWaiters = overflow == .backpressure && capacity != .max ? RoomWaiters() : nil
        if let scheduler = props.scheduler ?? system.configuration.scheduler {
            customScheduler = scheduler
            pool = (scheduler as? PoolScheduler).map { Unmanaged.passUnretained($0) }
        } else {
            customScheduler = nil
            pool = system.poolReference!
        }
        runLength = Int32(clamping: props.runLength ?? system.configuration.runLength)
        stashCapacity = props.stashCapacity
        idleHook = props.idleHook
    }
}
