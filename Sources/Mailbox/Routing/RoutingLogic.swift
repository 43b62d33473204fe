/// How a router picks the routee for a message (Akka Typed's routing logics).
///
/// - `roundRobin`: each routee in turn (the default).
/// - `random(seed:)`: a routee at random; with a seed, the same sequence every run (tests).
/// - `consistentHashing(virtualNodesFactor:key:)`: the routee that owns the hash of the key
///   `key` extracts, on a ring with `virtualNodesFactor` points per routee; messages with the same
///   key go to the same routee while the routees do not change, and a routee's departure moves
///   only the keys it owned.
/// - `smallestMailbox`: the routee with the fewest messages queued or in hand (an idle one if
///   there is one), scanning from the routee after the last one picked so that ties rotate.
///   It reads each routee's mailbox depth, which is a snapshot: two senders at the same moment
///   may both pick the same routee.
///
/// Thread-safety: a value; its closures must be thread-safe (a pool runs them on the sender's
/// thread, under its lock; a group router in its actor).
public struct RoutingLogic<Message: Sendable>: Sendable {
    @usableFromInline
    enum Kind: Sendable {
        case roundRobin
        case random(seed: UInt64?)
        case consistentHashing(virtualNodesFactor: Int, key: @Sendable (Message) -> String)
        case smallestMailbox
    }

    @usableFromInline
    let kind: Kind

    /// Each routee in turn.
    public static var roundRobin: RoutingLogic { RoutingLogic(kind: .roundRobin) }

    /// A routee at random: seeded (the same choices every run) or from the system's source of
    /// randomness (`ActorSystem.Configuration.randomSeed`, else fresh).
    public static func random(seed: UInt64? = nil) -> RoutingLogic {
        RoutingLogic(kind: .random(seed: seed))
    }

    /// The routee with the fewest messages queued or in hand (Akka's smallest-mailbox routing).
    /// O(routees) per message.
    public static var smallestMailbox: RoutingLogic { RoutingLogic(kind: .smallestMailbox) }

    /// The routee owning the hash of `key(message)` on a consistent-hashing ring.
    ///
    /// - Precondition: `virtualNodesFactor` is positive (a construction-time error).
    public static func consistentHashing(virtualNodesFactor: Int = 10, key: @escaping @Sendable (Message) -> String) -> RoutingLogic {
        precondition(virtualNodesFactor > 0, "consistent hashing needs at least one virtual node per routee, not \(virtualNodesFactor)")
        return RoutingLogic(kind: .consistentHashing(virtualNodesFactor: virtualNodesFactor, key: key))
    }
}
