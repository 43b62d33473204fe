import Synchronization

/// What a pool router's ref and its actor share: the routees and the routing logic's state, so
/// that a sender routes on its own thread, straight into a routee's mailbox (no hop through the
/// router's mailbox, as Akka's classic routers do), while the router's actor spawns, retires and
/// removes routees.
///
/// Messages sent before the router's actor has spawned its first routees wait in the core and
/// are routed, in order, the moment they exist (in the same locked section), so nothing sent
/// later overtakes them.
///
/// Locking: every stored field is protected by `lock` (so none needs a dynamic exclusivity
/// check), except `size` (a property with its own lock, set only by the router's actor) and
/// the atomics. A sender holds `lock` while it tells the routee, so a routee taken out of the
/// routing gets nothing after the router saw it leave: a shrink never loses a message in flight.
/// Dead letters and drops of the pool's own are published after the lock is released. Routees
/// on an `ImmediateScheduler` would run inside the lock: their runs are deferred until it is
/// released (`Trampoline.deferringRuns`). Should the same thread still come back while holding
/// it (a routee's bounded mailbox publishing a drop to an observer that tells the pool), `lock`
/// detects it and the nested call goes on without locking: the outer call is then inside a
/// routee's `tell`, and what it does afterwards (counting for the resizer) does not depend on
/// state the nested call changes.
@usableFromInline
// Every mutable field is protected by `lock` (see above).
final class _PoolRouterCore<Message: Sendable>: @unchecked Sendable {
    @usableFromInline let lock = Lock(detectingRecursion: ())
    @usableFromInline let state: RouterState<Message>
    /// Whether the router's actor has spawned its first routees; before that, messages wait in
    /// `waiting`.
    @usableFromInline @exclusivity(unchecked) var isStarted = false
    /// Whether the router's actor has stopped: messages are then dead letters naming it.
    @usableFromInline @exclusivity(unchecked) var isStopped = false
    /// Messages sent before the first routees existed, in order; routed when they do.
    @usableFromInline @exclusivity(unchecked) var waiting: [Message] = []
    /// Messages routed since the last resizer sample.
    @usableFromInline @exclusivity(unchecked) var routedSinceSample = 0
    /// Whether a sample has been asked of the router's actor and not yet taken.
    @usableFromInline @exclusivity(unchecked) var isSampleRequested = false
    /// Whether the routees run on an `ImmediateScheduler` (inline, on the sending thread); set
    /// by the router's actor when it spawns them, read without the lock.
    @usableFromInline let routeesRunInlineFlag = Atomic<Bool>(false)
    /// Messages between two resizer samples; `Int.max` without a resizer.
    @usableFromInline let messagesPerResize: Int
    /// The routees taking messages (retiring ones not counted); set by the router's actor.
    @usableFromInline let size = MutableProperty(0)

    // MARK: Work pulling (a balancing pool)

    /// Whether routees pull their messages from `queue` (a balancing pool) instead of being
    /// picked by the routing logic.
    @usableFromInline let isBalancing: Bool
    /// Messages waiting for a routee to be free, oldest first from `queueHead`.
    @usableFromInline @exclusivity(unchecked) var queue: [Message] = []
    @usableFromInline @exclusivity(unchecked) var queueHead = 0
    /// At most this many messages wait in `queue`; `tell` drops more, `send` waits for room.
    @usableFromInline let queueCapacity: Int
    /// Routees with nothing to do, waiting for their next message.
    @usableFromInline @exclusivity(unchecked) var idle: [ActorRef<Message>] = []
    /// Senders suspended in `send(_:)` until `queue` has room (its own lock).
    @usableFromInline let roomWaiters = RoomWaiters()

    @inlinable
    init(logic: RoutingLogic<Message>, broadcast: (@Sendable (Message) -> Bool)?, messagesPerResize: Int, balancingCapacity: Int?) {
        state = RouterState(logic: logic, broadcast: broadcast, randomSeed: 0)
        self.messagesPerResize = messagesPerResize
        isBalancing = balancingCapacity != nil
        queueCapacity = balancingCapacity ?? 0
    }

    /// Messages waiting in `queue`. Under `lock`.
    @inlinable
    var queued: Int { queue.count - queueHead }

    // MARK: The senders' side

    /// Routes `message` on the calling thread (see the type's documentation).
    @inlinable
    func tell(_ message: Message, router: ActorRef<_RouterCommand<Message>>) -> TellResult {
        if routeesRunInlineFlag.load(ordering: .relaxed) { return tellDeferringInlineRuns(message, router: router) }
        return tellNow(message, router: router)
    }

    /// `tell` for routees on an `ImmediateScheduler`: their runs (and whatever they tell) wait
    /// until the lock is released, instead of running inside it.
    @usableFromInline
    func tellDeferringInlineRuns(_ message: Message, router: ActorRef<_RouterCommand<Message>>) -> TellResult {
        Trampoline.deferringRuns { tellNow(message, router: router) }
    }

    @inlinable
    func tellNow(_ message: Message, router: ActorRef<_RouterCommand<Message>>) -> TellResult {
        // Never nil when dropping for lack of room.
        attempt(message, router: router, dropWhenFull: true) ?? .dropped(.mailboxFull(.dropNewest))
    }

    /// Routes `message`, or keeps it, or refuses it; a balancing pool whose queue is full drops
    /// it, or with `dropWhenFull` false returns nil without dropping it (for `send`).
    @inlinable
    func attempt(_ message: Message, router: ActorRef<_RouterCommand<Message>>, dropWhenFull: Bool) -> TellResult? {
        let locked = lock.lockUnlessHeldByCurrentThread()
        var result: TellResult = .enqueued
        // A refusal of ours, published once the lock is released (observers of dead letters and
        // drops are user code).
        var refusal: DeadLetter.Reason?
        if !isStarted {
            refusal = keepUntilStarted(message, router: router)
        } else if isBalancing {
            if let routee = takeIdleRoutee() {
                result = routee.tell(message)
            } else if state.routees.isEmpty {
                refusal = isStopped ? .recipientTerminated : .noRecipient
            } else if queued < queueCapacity {
                enqueue(message)
            } else if dropWhenFull {
                refusal = .mailboxFull(.dropNewest)
            } else {
                if locked { lock.unlock() }
                return nil
            }
        } else if let routed = state.route(message) {
            result = routed
        } else {
            // No routee left: the router has stopped, or is stopping with its last routee.
            refusal = isStopped ? .recipientTerminated : .noRecipient
        }
        if refusal == nil, messagesPerResize != .max, !isStopped {
            routedSinceSample += 1
            if routedSinceSample >= messagesPerResize, !isSampleRequested {
                routedSinceSample = 0
                isSampleRequested = true
                router.tell(.sample)
            }
        }
        if locked { lock.unlock() }
        guard let refusal else { return result }
        return refuse(message, reason: refusal, router: router)
    }

    /// An idle routee of a balancing pool, taken off the idle list. Under `lock`.
    @inlinable
    func takeIdleRoutee() -> ActorRef<Message>? {
        while let routee = idle.popLast() {
            if !routee.target.hasTerminated { return routee }
        }
        return nil
    }

    /// Publishes `message` as undelivered, naming the pool. Not under `lock`.
    @usableFromInline
    func refuse(_ message: Message, reason: DeadLetter.Reason, router: ActorRef<_RouterCommand<Message>>) -> TellResult {
        router.target.system.publishUndelivered(message, to: router.address, reason: reason)
        return .dropped(reason)
    }

    @inlinable
    func enqueue(_ message: Message) {
        if queueHead > 0, queueHead == queue.count {
            queue.removeAll(keepingCapacity: true)
            queueHead = 0
        }
        queue.append(message)
    }

    /// The oldest waiting message, if any. Under `lock`.
    @inlinable
    func dequeue() -> Message? {
        guard queueHead < queue.count else { return nil }
        let message = queue[queueHead]
        queueHead += 1
        if queueHead >= 1_024, queueHead * 2 >= queue.count {
            queue.removeFirst(queueHead)
            queueHead = 0
        }
        return message
    }

    /// `send(_:)` for a balancing pool: hands the message over if there is room, else returns
    /// nil without dropping it.
    @usableFromInline
    func offer(_ message: Message, router: ActorRef<_RouterCommand<Message>>) -> TellResult? {
        if routeesRunInlineFlag.load(ordering: .relaxed) {
            return Trampoline.deferringRuns { attempt(message, router: router, dropWhenFull: false) }
        }
        return attempt(message, router: router, dropWhenFull: false)
    }

    /// A balancing pool's routee has emptied its mailbox: it takes the oldest waiting message,
    /// or waits for the next. Called on the routee's thread after its run, with its identity
    /// (it may already be another run's, or have terminated). Inlinable: specialised where the
    /// pool is made, as it runs once per message.
    @inlinable
    func routeeIsIdle(_ identity: ObjectIdentifier) {
        let locked = lock.lockUnlessHeldByCurrentThread()
        var freedRoom = false
        // Only a routee with nothing queued or in hand, seen under the lock every hand-over takes,
        // is idle: a notice from a run that ended before its latest message came is stale.
        if let index = state.routees.firstIndex(where: { ObjectIdentifier($0.target) == identity }),
           state.routees[index].target.mailboxDepth == 0, !state.routees[index].target.hasTerminated {
            let routee = state.routees[index]
            if let message = dequeue() {
                // Listed idle too (a run of system messages only ended): take it off, so that it
                // holds one message at a time.
                if !idle.isEmpty { idle.removeAll { $0 == routee } }
                routee.tell(message)
                freedRoom = true
            } else if !idle.contains(routee) {
                idle.append(routee)
            }
        }
        if locked { lock.unlock() }
        if freedRoom, roomWaiters.waitingCount > 0 { roomWaiters.resumeOne() }
    }

    /// A message sent before the first routees exist: kept for them (nil), or refused if the
    /// router has stopped (or failed before it started: what waited is refused too, here, under
    /// the lock — the router is gone, so no observer can be waiting for this pool). Under `lock`.
    @usableFromInline
    func keepUntilStarted(_ message: Message, router: ActorRef<_RouterCommand<Message>>) -> DeadLetter.Reason? {
        if isStopped { return .recipientTerminated }
        if !router.target.hasTerminated {
            waiting.append(message)
            return nil
        }
        isStopped = true
        let system = router.target.system
        for waiter in waiting { system.publishUndelivered(waiter, to: router.address, reason: .recipientTerminated) }
        waiting = []
        return .recipientTerminated
    }

    // MARK: The router's side (inside its actor's mailbox run; not inlined: rare)

    /// Locks unless this thread holds the lock already (a routee inline on this thread).
    @inlinable
    func withLock<T>(_ body: () -> T) -> T {
        let locked = lock.lockUnlessHeldByCurrentThread()
        defer { if locked { lock.unlock() } }
        return body()
    }

    /// The first routees are in place: the messages that waited for them are routed, in order,
    /// and every message from now on is routed by its sender.
    @inlinable
    func start(with routees: [ActorRef<Message>], randomSeed: UInt64) {
        withLock {
            state.reseed(randomSeed)
            state.setRoutees(routees)
            isStarted = true
            idle = isBalancing ? routees.reversed() : []
            for message in waiting {
                if isBalancing {
                    if let routee = idle.popLast() { routee.tell(message) } else { enqueue(message) }
                } else {
                    _ = state.route(message)
                }
            }
            waiting = []
        }
        size.value = routees.count
    }

    /// The number of routees and how many have at least `threshold` messages queued or in hand.
    ///
    /// In a balancing pool a routee holds at most one message, so a routee counts as busy when it
    /// holds one, and the pool counts as fully busy only while messages also wait in its queue:
    /// routees that all happen to be working with nothing waiting are keeping up.
    @usableFromInline
    func sample(busyAt threshold: Int) -> (size: Int, busy: Int) {
        withLock {
            isSampleRequested = false
            let size = state.routees.count
            if isBalancing {
                let working = state.routees.reduce(0) { $0 + ($1.target.mailboxDepth > 0 ? 1 : 0) }
                return (size, queued >= threshold ? working : min(working, size - 1))
            }
            let busy = state.routees.reduce(0) { $0 + ($1.target.mailboxDepth >= threshold ? 1 : 0) }
            return (size, busy)
        }
    }

    /// Notes whether `routee` runs inline (an `ImmediateScheduler`).
    @usableFromInline
    func noteScheduler(of routee: ActorRef<Message>) {
        if let cell = routee.target as? ActorCell<Message>, cell.scheduler is ImmediateScheduler {
            routeesRunInlineFlag.store(true, ordering: .relaxed)
        }
    }

    /// Adds routees at the end.
    @inlinable
    func add(_ routees: [ActorRef<Message>]) {
        let (count, taken) = withLock {
            state.setRoutees(state.routees + routees)
            var taken = 0
            if isBalancing {
                // New routees take waiting messages first, then wait for more.
                for routee in routees {
                    if let message = dequeue() {
                        routee.tell(message)
                        taken += 1
                    } else {
                        idle.append(routee)
                    }
                }
            }
            return (state.routees.count, taken)
        }
        // Each message taken from a full queue makes room for a suspended `send`.
        for _ in 0..<taken where roomWaiters.waitingCount > 0 { roomWaiters.resumeOne() }
        size.value = count
    }

    /// The routees taking messages.
    @usableFromInline
    var activeCount: Int { withLock { state.routees.count } }

    /// Takes the `count` newest routees out of the routing and returns them.
    @usableFromInline
    func retire(_ count: Int) -> [ActorRef<Message>] {
        let (retired, remaining) = withLock {
            let retired = Array(state.routees.suffix(count))
            state.setRoutees(Array(state.routees.dropLast(count)))
            idle.removeAll { retired.contains($0) }
            return (retired, state.routees.count)
        }
        size.value = remaining
        return retired
    }

    /// Takes a terminated routee out of the routing; returns the routees left, or nil if `ref`
    /// was not routed to.
    @usableFromInline
    func remove(_ ref: AnyActorRef) -> Int? {
        let remaining: Int? = withLock {
            idle.removeAll { $0.asAny == ref }
            return state.remove(ref) ? state.routees.count : nil
        }
        if let remaining { size.value = remaining }
        return remaining
    }

    /// The router's actor has stopped: what still waits for a first routee is undeliverable.
    @usableFromInline
    func stop(_ router: ActorAddress, in system: ActorSystem) {
        let undelivered: [Message] = withLock {
            isStopped = true
            state.setRoutees([])
            idle = []
            defer {
                waiting = []
                queue = []
                queueHead = 0
            }
            return waiting + queue[queueHead...]
        }
        for message in undelivered { system.publishUndelivered(message, to: router, reason: .recipientTerminated) }
        roomWaiters.recipientTerminated { system.publishUndelivered($0, to: router, reason: .recipientTerminated) }
        size.value = 0
    }

    /// Publishes a resize.
    @usableFromInline
    func publish(_ resize: PoolResized, in system: ActorSystem) {
        system.publish(.poolResized(resize))
    }
}

/// What a pool router's actor handles (internal: the pool's ref takes `Message`).
@usableFromInline
enum _RouterCommand<Message: Sendable>: Sendable, CustomStringConvertible {
    /// Take a resizer sample.
    case sample
    /// See whether retired routees have emptied their mailboxes.
    case retireCheck

    @usableFromInline
    var description: String {
        switch self {
        case .sample: return "resizer sample"
        case .retireCheck: return "retire check"
        }
    }
}

/// A pool router's ref target: `tell` routes on the sender's thread through the core; watching,
/// stopping and comparing the ref address the router's actor.
@usableFromInline
// Immutable after init (the core has its own lock).
final class _PoolRouterTarget<Message: Sendable>: ActorRefTarget<Message>, @unchecked Sendable {
    let router: ActorRefTarget<_RouterCommand<Message>>
    let core: _PoolRouterCore<Message>
    /// `core.tell`, formed where the pool was spawned: specialised for `Message` there.
    let route: (Message) -> TellResult

    @usableFromInline
    init(router: ActorRef<_RouterCommand<Message>>, core: _PoolRouterCore<Message>, route: @escaping (Message) -> TellResult) {
        self.router = router.target
        self.core = core
        self.route = route
        super.init(address: router.address, system: router.target.system)
    }

    override func tell(_ message: Message) -> TellResult {
        route(message)
    }

    /// A balancing pool waits while its queue is full; other pools tell.
    override func send(_ message: Message) async throws {
        guard core.isBalancing else {
            // A message is routed at once: `tell`, throwing what it refused.
            if case let .dropped(reason) = tell(message) { throw SendError(recipient: address, reason: reason) }
            return
        }
        let router = ActorRef(self.router)
        while true {
            if let result = core.offer(message, router: router) {
                if case let .dropped(reason) = result { throw SendError(recipient: address, reason: reason) }
                return
            }
            do {
                try await core.roomWaiters.wait(for: message) { [core] in core.withLock { core.queued < core.queueCapacity || core.isStopped } }
            } catch is RoomWaiters.RecipientTerminated {
                throw SendError(recipient: address, reason: .recipientTerminated)
            }
        }
    }

    override var watchedTarget: AnyTarget { router }

    override var actorTarget: AnyTarget { router }

    override func sendSystem(_ message: SystemMessage) {
        router.sendSystem(message)
    }
}

extension ActorRef {
    /// For a pool router's ref (from `spawn(_:name:props:)` with a `PoolRouter`): its number of
    /// routees taking messages, following every resize and every routee that leaves; nil for any
    /// other ref. Retired routees still finishing their mailboxes are not counted.
    ///
    /// Thread-safety: a property; observers run on the thread of the router's actor (which is
    /// a sender's thread when the router runs on an `ImmediateScheduler`).
    public var poolSize: Property<Int>? {
        (target as? _PoolRouterTarget<Message>).map { Property(capturing: $0.core.size) }
    }
}
