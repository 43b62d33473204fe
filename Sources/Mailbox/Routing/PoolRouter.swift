import Foundation

/// A router that spawns its routees as its children (Akka Typed's pool router).
///
/// The router spawns `size` routees named `routee-0`, `routee-1`, … when it starts, each running
/// a fresh behavior from the factory, supervised with the pool's routee strategy (default
/// `.restart`: a failing routee is restarted in place and keeps its mailbox). A routee that stops
/// (by itself, or because its strategy stopped it) is removed from the pool; when the last one is
/// gone the router stops. Stopping the router stops its routees.
///
/// ```
/// let workers = try system.spawn(Routers.pool(size: 4) { worker() }.withRandomRouting(), name: "workers")
/// workers.tell(.job(1))
/// ```
///
/// Bounded mailboxes: the router's own mailbox is the spawn's `props`; each routee's is
/// `withRouteeProps`. A message the router cannot place (no routee left) is a dead letter naming
/// the router (reason `.noRecipient`); one a full routee mailbox refuses is a drop naming the
/// routee.
///
/// Thread-safety: a value, configured before spawning; the router runs as an ordinary actor.
public struct PoolRouter<Message: Sendable>: Sendable {
    @usableFromInline let size: Int
    @usableFromInline let makeRoutee: @Sendable () -> Behavior<Message>
    @usableFromInline var logic: RoutingLogic<Message> = .roundRobin
    @usableFromInline var broadcast: (@Sendable (Message) -> Bool)?
    @usableFromInline var routeeProps = Props()
    @usableFromInline var routeeStrategy: SupervisorStrategy = .restart
    @usableFromInline var resizer: Resizer?
    /// The shared queue's capacity of a balancing pool; nil for routing by logic.
    @usableFromInline var balancingCapacity: Int?

    @usableFromInline
    init(size: Int, makeRoutee: @escaping @Sendable () -> Behavior<Message>) {
        self.size = size
        self.makeRoutee = makeRoutee
    }

    /// Routes each message to the next routee in turn (the default).
    public func withRoundRobinRouting() -> PoolRouter {
        with(logic: .roundRobin)
    }

    /// Routes each message to a routee at random (seeded: the same choices every run).
    public func withRandomRouting(seed: UInt64? = nil) -> PoolRouter {
        with(logic: .random(seed: seed))
    }

    /// Routes each message by consistent hashing of the key `key` extracts from it.
    public func withConsistentHashingRouting(virtualNodesFactor: Int = 10, key: @escaping @Sendable (Message) -> String) -> PoolRouter {
        with(logic: .consistentHashing(virtualNodesFactor: virtualNodesFactor, key: key))
    }

    /// Routes with `logic`.
    public func with(logic: RoutingLogic<Message>) -> PoolRouter {
        var copy = self
        copy.logic = logic
        return copy
    }

    /// Sends the messages for which `predicate` holds to every routee instead of one.
    public func withBroadcastPredicate(_ predicate: @escaping @Sendable (Message) -> Bool) -> PoolRouter {
        var copy = self
        copy.broadcast = predicate
        return copy
    }

    /// The props each routee is spawned with (its mailbox, scheduler, …).
    public func withRouteeProps(_ props: Props) -> PoolRouter {
        var copy = self
        copy.routeeProps = props
        return copy
    }

    /// How a failing routee is supervised (default `.restart`). With `.stop` a failing routee
    /// leaves the pool.
    public func withRouteeSupervision(_ strategy: SupervisorStrategy) -> PoolRouter {
        var copy = self
        copy.routeeStrategy = strategy
        return copy
    }

    /// Routes each message to the routee with the fewest messages queued or in hand.
    public func withSmallestMailboxRouting() -> PoolRouter {
        with(logic: .smallestMailbox)
    }

    /// Grows and shrinks the pool with its load, within the resizer's bounds (see `Resizer`).
    /// The pool starts with `size` routees clamped to the bounds.
    public func withResizer(_ resizer: Resizer) -> PoolRouter {
        var copy = self
        copy.resizer = resizer
        return copy
    }

    /// The router's actor: spawns the routees, resizes, retires and removes them (messages go
    /// from their senders straight to the routees, see `_PoolRouterCore`). Inlinable, so that
    /// the routees' runs are specialised where the pool is spawned.
    @inlinable
    func routerBehavior(core: _PoolRouterCore<Message>) -> Behavior<_RouterCommand<Message>> {
        let router = self
        return .setup { context in
            var spawned = 0
            var routeeProps = router.routeeProps
            if router.balancingCapacity != nil {
                // A routee that has emptied its mailbox pulls the next waiting message.
                routeeProps.idleHook = { [weak core] identity in core?.routeeIsIdle(identity) }
            }
            func spawnRoutees(_ count: Int) throws -> [ActorRef<Message>] {
                var routees: [ActorRef<Message>] = []
                for _ in 0..<count {
                    let routee = try context.spawn(
                        Behavior<Message>.supervise(router.makeRoutee()).onFailure(router.routeeStrategy),
                        name: "routee-\(spawned)", props: routeeProps)
                    spawned += 1
                    if spawned == 1 { core.noteScheduler(of: routee) }
                    context.watch(routee)
                    routees.append(routee)
                }
                return routees
            }
            core.start(with: try spawnRoutees(router.resizer?.initialSize(router.size) ?? router.size),
                       randomSeed: context.system.nextRandomSeed())
            // Routees out of the routing, stopped once their mailboxes are empty; those told to
            // stop; how long until the next look at them (doubling up to 64 ms while one is busy).
            var retiring: [ActorRef<Message>] = []
            var stopping: Set<AnyActorRef> = []
            var retireCheckDelay = Duration.milliseconds(1)
            var lastResize: Date?

            return Behavior<_RouterCommand<Message>>.receive { context, command in
                switch command {
                case .sample:
                    guard let resizer = router.resizer else { break }
                    let (size, busy) = core.sample(busyAt: resizer.pressureThreshold)
                    let now = context.scheduler.currentDate
                    guard resizer.isCooledDown(since: lastResize, at: now) else { break }
                    let change = resizer.change(size: size, busy: busy)
                    guard change != 0 else { break }
                    lastResize = now
                    if change > 0 {
                        core.add(try spawnRoutees(change))
                    } else {
                        retiring += core.retire(-change)
                        retireCheckDelay = .milliseconds(1)
                        context.timers.startSingleTimer(key: "retire", message: .retireCheck, delay: .zero)
                    }
                    core.publish(PoolResized(router: context.address, from: size, to: size + change, busy: busy), in: context.system)
                case .retireCheck:
                    // A retired routee gets nothing new; once its mailbox is empty it has handled
                    // everything it accepted, and stops. Checked again until all have.
                    var waiting = false
                    for routee in retiring where !stopping.contains(routee.asAny) {
                        if routee.target.mailboxDepth == 0 {
                            stopping.insert(routee.asAny)
                            try context.stop(routee)
                        } else {
                            waiting = true
                        }
                    }
                    if waiting {
                        context.timers.startSingleTimer(key: "retire", message: .retireCheck, delay: retireCheckDelay)
                        retireCheckDelay = min(retireCheckDelay * 2, .milliseconds(64))
                    }
                }
                return .same
            }.receiveLifecycle { _, event in
                switch event {
                case let .terminated(ref):
                    let remaining: Int
                    if let index = retiring.firstIndex(where: { $0.asAny == ref }) {
                        retiring.remove(at: index)
                        stopping.remove(ref)
                        remaining = core.activeCount
                    } else {
                        remaining = core.remove(ref) ?? core.activeCount
                    }
                    // The last routee gone (retiring ones included): the router stops.
                    return remaining == 0 && retiring.isEmpty ? .stopped : .same
                case .postStop:
                    core.stop(context.address, in: context.system)
                    return .same
                default:
                    return .unhandled
                }
            }
        }
    }
}
