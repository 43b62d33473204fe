/// A router over the actors registered under a `ServiceKey` with the system's receptionist
/// (Akka Typed's group router), following the listing as actors register, deregister and
/// terminate. Routees are not its children: it neither spawns nor supervises them.
///
/// While the listing is empty a message is a dead letter naming the router (reason
/// `.noRecipient`; Akka drops them the same way). Routees are ordered by path, so round-robin
/// and seeded random routing are repeatable.
///
/// Thread-safety: a value, configured before spawning; the router runs as an ordinary actor.
public struct GroupRouter<Message: Sendable>: Sendable {
    @usableFromInline let key: ServiceKey<Message>
    @usableFromInline var logic: RoutingLogic<Message> = .roundRobin

    @usableFromInline
    init(key: ServiceKey<Message>) {
        self.key = key
    }

    /// Routes each message to the next routee in turn (the default).
    public func withRoundRobinRouting() -> GroupRouter {
        with(logic: .roundRobin)
    }

    /// Routes each message to a routee at random (seeded: the same choices every run).
    public func withRandomRouting(seed: UInt64? = nil) -> GroupRouter {
        with(logic: .random(seed: seed))
    }

    /// Routes each message by consistent hashing of the key `key` extracts from it.
    public func withConsistentHashingRouting(virtualNodesFactor: Int = 10, key: @escaping @Sendable (Message) -> String) -> GroupRouter {
        with(logic: .consistentHashing(virtualNodesFactor: virtualNodesFactor, key: key))
    }

    /// Routes with `logic`.
    public func with(logic: RoutingLogic<Message>) -> GroupRouter {
        var copy = self
        copy.logic = logic
        return copy
    }

    /// The router as a behavior, for `spawn`.
    @inlinable
    public var behavior: Behavior<Message> {
        let router = self
        return .setup { context in
            let state = RouterState(logic: router.logic, broadcast: nil, randomSeed: context.system.nextRandomSeed())
            // The newest listing, written by whichever thread changes it and taken by the
            // router's run before it routes: the listing is applied in the actor, never
            // concurrently with routing.
            let latest = LockedValueBox<Set<ActorRef<Message>>?>(nil)
            let subscription = context.system.receptionist.listing(for: router.key).producer.startWithValues { refs in
                latest.withLockedValue { $0 = refs }
            }
            return Behavior<Message>.receive { context, message in
                if let refs = latest.withLockedValue({ value -> Set<ActorRef<Message>>? in
                    defer { value = nil }
                    return value
                }) {
                    state.setRoutees(refs.sorted { $0.path < $1.path })
                }
                if state.route(message) == nil {
                    context.system.publishUndelivered(message, to: context.address, reason: .noRecipient)
                }
                return .same
            }.receiveLifecycle { _, event in
                if case .postStop = event { subscription.dispose() }
                return .unhandled
            }
        }
    }
}
