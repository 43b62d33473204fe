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

    /// The router as a behavior, for `spawn`.
    @inlinable
    public var behavior: Behavior<Message> {
        let router = self
        return .setup { context in
            let state = RouterState(logic: router.logic, broadcast: router.broadcast, randomSeed: context.system.nextRandomSeed())
            var routees: [ActorRef<Message>] = []
            for index in 0..<router.size {
                let routee = try context.spawn(
                    Behavior<Message>.supervise(router.makeRoutee()).onFailure(router.routeeStrategy),
                    name: "routee-\(index)", props: router.routeeProps)
                context.watch(routee)
                routees.append(routee)
            }
            state.setRoutees(routees)
            return Behavior<Message>.receive { context, message in
                if !state.route(message) {
                    context.system.publishUndelivered(message, to: context.address, reason: .noRecipient)
                }
                return .same
            }.receiveLifecycle { _, event in
                guard case let .terminated(ref) = event else { return .unhandled }
                _ = state.remove(ref)
                return state.routees.isEmpty ? .stopped : .same
            }
        }
    }
}
