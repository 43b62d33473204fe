/// Routers: one `ActorRef` that spreads messages over several actors (Akka Typed's `Routers`).
///
/// - `Routers.pool(size:_:)`: spawns `size` routees from one behavior as its children and
///   supervises them.
/// - `Routers.group(_:)`: routes to the actors registered under a `ServiceKey` with the
///   receptionist, following the listing as it changes.
///
/// Spawn either like a behavior: `try system.spawn(Routers.pool(size: 4) { worker() }, name:
/// "workers")`. The router's ref is an ordinary `ActorRef<Message>`.
///
/// Every part of a router is `@inlinable`: its code is specialised for the message type where
/// the router is made, so routing and the routees' runs cost what hand-written code would (in
/// unspecialised generic code a metadata lookup per message made a router several times slower).
///
/// Ordering: messages from one sender that go to the same routee keep their order; there is no
/// order between routees (a later message may be handled by one routee before an earlier one
/// by another).
public enum Routers {
    /// A pool of `size` routees, each running a behavior `routee` makes; see `PoolRouter`.
    ///
    /// - Precondition: `size` is positive (a construction-time error).
    @inlinable
    public static func pool<Message>(size: Int, _ routee: @escaping @Sendable () -> Behavior<Message>) -> PoolRouter<Message> {
        precondition(size > 0, "a pool router needs at least one routee, not \(size)")
        return PoolRouter(size: size, makeRoutee: routee)
    }

    /// A balancing pool (Akka's `BalancingPool`, work pulling): `size` routees from `routee`
    /// that pull their messages from one shared queue, each taking the next only when it has
    /// finished the last, so that a slow routee never holds work an idle one could do (for tasks
    /// of uneven length). At most `queueCapacity` messages wait: `tell` drops what does not fit
    /// (a `Dropped` naming the pool) and `send` suspends until there is room. No order between
    /// routees; the queue is first in, first out. Supervision, props and resizers as for `pool`.
    ///
    /// - Precondition: `size` and `queueCapacity` are positive (construction-time errors).
    @inlinable
    public static func balancingPool<Message>(
        size: Int, queueCapacity: Int = 10_000, _ routee: @escaping @Sendable () -> Behavior<Message>
    ) -> PoolRouter<Message> {
        precondition(queueCapacity > 0, "a balancing pool needs a positive queue capacity, not \(queueCapacity)")
        var pool = pool(size: size, routee)
        pool.balancingCapacity = queueCapacity
        return pool
    }

    /// A router over the actors registered under `key`; see `GroupRouter`.
    @inlinable
    public static func group<Message>(_ key: ServiceKey<Message>) -> GroupRouter<Message> {
        GroupRouter(key: key)
    }
}

extension ActorRefFactory {
    /// Spawns a pool router named `name` (with `props` for the router itself; the routees'
    /// props are the pool's `withRouteeProps`).
    ///
    /// - Throws: as `spawn(_:name:props:)`.
    ///
    /// The returned ref routes on the sender's thread, straight into a routee's mailbox; the
    /// router's own actor (at `name`, with `props`) spawns, resizes and removes the routees.
    /// Messages sent before the first routees exist wait (unbounded) and are routed in order
    /// when they do. Watching or stopping the ref watches or stops that actor. A pool holds a
    /// lock while it tells a routee: an observer of dead letters or drops that blocks on another
    /// thread which is telling the same pool can deadlock (do not block in such observers).
    @inlinable
    @discardableResult
    public func spawn<Message>(_ router: PoolRouter<Message>, name: String, props: Props = Props()) throws -> ActorRef<Message> {
        let core = _PoolRouterCore(
            logic: router.logic, broadcast: router.broadcast,
            messagesPerResize: router.resizer?.messagesPerResize ?? .max, balancingCapacity: router.balancingCapacity)
        let actor = try spawn(router.routerBehavior(core: core), name: name, props: props)
        return ActorRef(_PoolRouterTarget(router: actor, core: core) { message in core.tell(message, router: actor) })
    }

    /// Spawns a group router named `name`.
    ///
    /// - Throws: as `spawn(_:name:props:)`.
    @inlinable
    @discardableResult
    public func spawn<Message>(_ router: GroupRouter<Message>, name: String, props: Props = Props()) throws -> ActorRef<Message> {
        try spawn(router.behavior, name: name, props: props)
    }
}

