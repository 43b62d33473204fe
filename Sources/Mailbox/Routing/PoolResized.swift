/// A pool router changed its number of routees (published as
/// `ActorSystemEvent.poolResized`): its resizer grew or shrank it.
public struct PoolResized: Sendable, Equatable, CustomStringConvertible {
    /// The pool router.
    public let router: ActorAddress
    /// Routees before the change.
    public let from: Int
    /// Routees after the change (retired routees still finishing their mailboxes not counted).
    public let to: Int
    /// Busy routees in the sample that decided the change.
    public let busy: Int

    public init(router: ActorAddress, from: Int, to: Int, busy: Int) {
        self.router = router
        self.from = from
        self.to = to
        self.busy = busy
    }

    public var description: String {
        "pool \(router.path) resized \(from) -> \(to) (\(busy) of \(from) busy)"
    }
}
