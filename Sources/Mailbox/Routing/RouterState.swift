/// The routees of one router and the state of its routing logic. A group router keeps it inside
/// its actor (used only from its mailbox run, no lock); a pool router under its core's lock.
/// Either way accesses never overlap, so the `var`s skip the dynamic exclusivity check (four
/// checks per message otherwise; docs/Performance.md, Routing). `@inlinable` throughout, so
/// that it is specialised for the message type where the router is made.
@usableFromInline
final class RouterState<Message: Sendable> {
    @usableFromInline @exclusivity(unchecked) var routees: [ActorRef<Message>] = []
    /// The routees' targets, unretained (`routees` keeps them alive): read per message without
    /// a retain and a release.
    @usableFromInline @exclusivity(unchecked) var targets: [Unmanaged<ActorRefTarget<Message>>] = []
    @usableFromInline let logic: RoutingLogic<Message>
    @usableFromInline let broadcast: (@Sendable (Message) -> Bool)?
    @usableFromInline @exclusivity(unchecked) var next = 0
    @usableFromInline @exclusivity(unchecked) var randomState: UInt64
    /// The consistent-hashing ring: points sorted by hash, each naming a routee's index.
    @usableFromInline @exclusivity(unchecked) var ring: [RingPoint] = []
    /// Round-robin with no broadcast predicate: the common case, routed without looking at the
    /// logic or the predicate.
    @usableFromInline let isPlainRoundRobin: Bool

    @usableFromInline
    struct RingPoint {
        @usableFromInline let hash: UInt64
        @usableFromInline let routee: Int

        @inlinable
        init(hash: UInt64, routee: Int) {
            self.hash = hash
            self.routee = routee
        }
    }

    @inlinable
    init(logic: RoutingLogic<Message>, broadcast: (@Sendable (Message) -> Bool)?, randomSeed: UInt64) {
        self.logic = logic
        self.broadcast = broadcast
        if case .roundRobin = logic.kind, broadcast == nil {
            isPlainRoundRobin = true
        } else {
            isPlainRoundRobin = false
        }
        if case let .random(seed?) = logic.kind {
            randomState = seed
        } else {
            randomState = randomSeed
        }
    }

    /// Replaces the routees (kept in the given order) and rebuilds the ring.
    @inlinable
    func setRoutees(_ newRoutees: [ActorRef<Message>]) {
        routees = newRoutees
        targets = newRoutees.map { Unmanaged.passUnretained($0.target) }
        if next >= routees.count { next = 0 }
        guard case let .consistentHashing(factor, _) = logic.kind else { return }
        ring = _consistentHashingRing(identities: routees.map(\.address.description), virtualNodesFactor: factor)
            .map { RingPoint(hash: $0.hash, routee: $0.routee) }
    }

    /// Uses `seed` for unseeded random routing (the system's source of randomness, known only
    /// once the router runs).
    @inlinable
    func reseed(_ seed: UInt64) {
        if case .random(nil) = logic.kind { randomState = seed }
    }

    /// Removes `ref` if it is a routee; returns whether it was.
    @inlinable
    func remove(_ ref: AnyActorRef) -> Bool {
        guard let index = routees.firstIndex(where: { $0.asAny == ref }) else { return false }
        var remaining = routees
        remaining.remove(at: index)
        setRoutees(remaining)
        return true
    }

    /// Sends `message` to the routee(s) the logic picks: what the routee's `tell` returned
    /// (`.enqueued` for a broadcast), or nil if there is no routee.
    @inlinable
    func route(_ message: Message) -> TellResult? {
        let count = routees.count
        guard count > 0 else { return nil }
        let index: Int
        if isPlainRoundRobin {
            index = next
            next = index + 1 == count ? 0 : index + 1
        } else {
            if let broadcast, broadcast(message) {
                for routee in routees { routee.tell(message) }
                return .enqueued
            }
            index = pick(message)
        }
        // As `ActorRef.tell`, on the unretained target: no retain and release per message.
        return targets[index]._withUnsafeGuaranteedRef { target in
            if target.isActorCell {
                return unsafeDowncast(target, to: ActorCell<Message>.self).tellCell(message)
            }
            return target.tell(message)
        }
    }

    @inlinable
    func pick(_ message: Message) -> Int {
        switch logic.kind {
        case .roundRobin:
            let index = next
            next = next + 1 == routees.count ? 0 : next + 1
            return index
        case .random:
            return Int(_routerRandom(&randomState) % UInt64(routees.count))
        case let .consistentHashing(_, key):
            let hash = _routerHash(key(message))
            // The first point at or after the key's hash, wrapping round.
            var low = 0
            var high = ring.count
            while low < high {
                let middle = (low + high) / 2
                if ring[middle].hash < hash { low = middle + 1 } else { high = middle }
            }
            return ring[low == ring.count ? 0 : low].routee
        case .smallestMailbox:
            // From the routee after the last pick, so that ties (an idle pool) rotate.
            let count = routees.count
            var index = next < count ? next : 0
            var best = index
            var bestDepth = Int.max
            for _ in 0..<count {
                let depth = routees[index].target.mailboxDepth
                if depth < bestDepth {
                    best = index
                    bestDepth = depth
                    if depth == 0 { break }
                }
                index = index + 1 == count ? 0 : index + 1
            }
            next = best + 1 == count ? 0 : best + 1
            return best
        }
    }
}

/// The next value of a SplitMix64 sequence whose state is `state`.
@usableFromInline
func _routerRandom(_ state: inout UInt64) -> UInt64 {
    state &+= SplitMix64.increment
    return SplitMix64.mix(state)
}

/// FNV-1a, then SplitMix64's finaliser: stable across runs and processes (Swift's `Hasher` is
/// seeded per process), and well spread.
@usableFromInline
func _routerHash(_ text: String) -> UInt64 {
    var value: UInt64 = 0xcbf2_9ce4_8422_2325
    for byte in text.utf8 {
        value = (value ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
    }
    return SplitMix64.mix(value)
}

/// The points of a consistent-hashing ring, sorted by hash: `virtualNodesFactor` per routee,
/// each derived from the routee's identity alone, so that a departure moves only its keys.
@usableFromInline
func _consistentHashingRing(identities: [String], virtualNodesFactor: Int) -> [(hash: UInt64, routee: Int)] {
    var ring: [(hash: UInt64, routee: Int)] = []
    ring.reserveCapacity(identities.count * virtualNodesFactor)
    for (index, identity) in identities.enumerated() {
        for node in 0..<virtualNodesFactor {
            ring.append((_routerHash("\(identity)#\(node)"), index))
        }
    }
    ring.sort { $0.hash < $1.hash }
    return ring
}
