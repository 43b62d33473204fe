/// The routees of one router and the state of its routing logic. Lives inside the router's
/// actor: used only from its mailbox run, so it needs no lock.
final class RouterState<Message: Sendable> {
    private(set) var routees: [ActorRef<Message>] = []
    private let logic: RoutingLogic<Message>
    private let broadcast: (@Sendable (Message) -> Bool)?
    private var next = 0
    private var random: SplitMix64
    /// The consistent-hashing ring: points sorted by hash, each naming a routee's index.
    private var ring: [(hash: UInt64, routee: Int)] = []

    init(logic: RoutingLogic<Message>, broadcast: (@Sendable (Message) -> Bool)?, randomSeed: UInt64) {
        self.logic = logic
        self.broadcast = broadcast
        if case let .random(seed?) = logic.kind {
            random = SplitMix64(seed: seed)
        } else {
            random = SplitMix64(seed: randomSeed)
        }
    }

    /// Replaces the routees (kept in the given order) and rebuilds the ring.
    func setRoutees(_ newRoutees: [ActorRef<Message>]) {
        routees = newRoutees
        if next >= routees.count { next = 0 }
        guard case let .consistentHashing(factor, _) = logic.kind else { return }
        ring.removeAll(keepingCapacity: true)
        for (index, routee) in routees.enumerated() {
            // A routee's points depend on its identity alone, so a departure moves only its keys.
            let identity = routee.address.description
            for node in 0..<factor {
                ring.append((Self.hash("\(identity)#\(node)"), index))
            }
        }
        ring.sort { $0.hash < $1.hash }
    }

    /// Removes `ref` if it is a routee; returns whether it was.
    func remove(_ ref: AnyActorRef) -> Bool {
        guard let index = routees.firstIndex(where: { $0.asAny == ref }) else { return false }
        var remaining = routees
        remaining.remove(at: index)
        setRoutees(remaining)
        return true
    }

    /// Sends `message` to the routee(s) the logic picks; `false` if there is no routee.
    func route(_ message: Message) -> Bool {
        guard !routees.isEmpty else { return false }
        if let broadcast, broadcast(message) {
            for routee in routees { routee.tell(message) }
            return true
        }
        routees[pick(message)].tell(message)
        return true
    }

    private func pick(_ message: Message) -> Int {
        switch logic.kind {
        case .roundRobin:
            let index = next
            next = next + 1 == routees.count ? 0 : next + 1
            return index
        case .random:
            return Int(random.next() % UInt64(routees.count))
        case let .consistentHashing(_, key):
            let hash = Self.hash(key(message))
            // The first point at or after the key's hash, wrapping round.
            var low = 0
            var high = ring.count
            while low < high {
                let middle = (low + high) / 2
                if ring[middle].hash < hash { low = middle + 1 } else { high = middle }
            }
            return ring[low == ring.count ? 0 : low].routee
        }
    }

    /// FNV-1a, then SplitMix64's finaliser: stable across runs and processes (Swift's
    /// `Hasher` is seeded per process), and well spread.
    static func hash(_ text: String) -> UInt64 {
        var value: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            value = (value ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
        }
        return SplitMix64.mix(value)
    }
}
