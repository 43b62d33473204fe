/// What a new cell takes from its `Props` and its system, resolved out of line (and not
/// generic) so that the cell's inlinable initialiser stays small.
@usableFromInline
struct CellSettings {
    /// A bounded mailbox or a scheduler other than the system's pool; `nil` for neither.
    @usableFromInline let options: CellOptions?
    /// The scheduler when it is a pool (unretained: see `ActorCell.poolReference`).
    @usableFromInline let pool: Unmanaged<PoolScheduler>?
    @usableFromInline let runLength: Int32
    @usableFromInline let stashCapacity: Int
    @usableFromInline let idleHook: (@Sendable (ObjectIdentifier) -> Void)?

    /// `props` resolved against `system`'s defaults. `props` has passed `ActorSystem.checkProps`.
    @usableFromInline
    init(props: Props, system: ActorSystem) {
        let capacity: Int
        let overflow: OverflowPolicy
        switch props.mailbox {
        case .unbounded:
            capacity = .max
            overflow = .dropNewest
        case let .bounded(bound, policy):
            // `ActorSystem.checkProps` refused anything else before the cell was made.
            precondition(bound > 0, "a bounded mailbox needs a positive capacity, not \(bound)")
            capacity = bound
            overflow = policy
        }
        let customScheduler = props.scheduler ?? system.configuration.scheduler
        if let customScheduler {
            pool = (customScheduler as? PoolScheduler).map { Unmanaged.passUnretained($0) }
        } else {
            pool = system.poolReference!
        }
        options = customScheduler != nil || capacity != .max
            ? CellOptions(customScheduler: customScheduler, capacity: capacity, overflow: overflow)
            : nil
        runLength = Int32(clamping: props.runLength ?? system.configuration.runLength)
        stashCapacity = props.stashCapacity
        idleHook = props.idleHook
    }
}
