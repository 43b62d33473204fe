import Foundation

/// How a pool router grows and shrinks with its load (Akka's `DefaultResizer`, in Mailbox's
/// words). Attach one with `PoolRouter.withResizer(_:)`.
///
/// Every `messagesPerResize` messages routed, the router counts its *busy* routees — those with
/// at least `pressureThreshold` messages queued or in hand — and applies `change(size:busy:)`:
///
/// ```
/// all routees busy                       -> grow by ceil(rampupRate × size)
/// busy / size < backoffThreshold         -> shrink by ceil(backoffRate × size)
/// otherwise                              -> keep the size
/// then clamp to lowerBound...upperBound, and wait `cooldown` before the next change
/// ```
///
/// The gap between "all busy" and `backoffThreshold`, the sampling interval and the cool-down
/// keep a pool from flapping. A pool with no traffic keeps its size (as in Akka, sampling is
/// driven by messages). A routee removed by a shrink is taken out of the routing at once and
/// stopped once its mailbox is empty: it finishes every message it accepted, in order.
///
/// Thread-safety: a value.
public struct Resizer: Sendable, Equatable {
    /// The fewest routees the pool keeps.
    public let lowerBound: Int
    /// The most routees the pool ever has.
    public let upperBound: Int
    /// A routee with at least this many messages queued or in hand counts as busy (1: any
    /// message, the one it is handling included; 2: at least one waiting). In a balancing pool
    /// (one message per routee at a time) a routee is busy while it holds a message, and the
    /// pool is fully busy only while at least this many messages wait in its queue.
    public let pressureThreshold: Int
    /// When every routee is busy, the pool grows by `ceil(rampupRate × size)`.
    public let rampupRate: Double
    /// When fewer than this fraction of the routees are busy, the pool shrinks (0 never shrinks).
    public let backoffThreshold: Double
    /// Shrinking removes `ceil(backoffRate × size)` routees (Akka: `floor(-backoffRate × size)`).
    public let backoffRate: Double
    /// The router samples its routees once per this many messages routed.
    public let messagesPerResize: Int
    /// The least time between two resizes, on the router's scheduler clock (virtual on a
    /// `TestScheduler`).
    public let cooldown: Duration

    /// A resizer; the defaults are Akka's.
    ///
    /// - Precondition: `1 <= lowerBound <= upperBound`, `pressureThreshold >= 1`,
    ///   `0 < rampupRate <= 1000`, `0 <= backoffThreshold < 1`, `0 <= backoffRate <= 1`,
    ///   `messagesPerResize >= 1` and `cooldown >= .zero` (construction-time errors).
    public init(
        lowerBound: Int = 1,
        upperBound: Int = 10,
        pressureThreshold: Int = 1,
        rampupRate: Double = 0.2,
        backoffThreshold: Double = 0.3,
        backoffRate: Double = 0.1,
        messagesPerResize: Int = 10,
        cooldown: Duration = .zero
    ) {
        precondition(lowerBound >= 1 && lowerBound <= upperBound, "a resizer needs 1 <= lowerBound <= upperBound, not \(lowerBound)...\(upperBound)")
        precondition(pressureThreshold >= 1, "pressureThreshold must be at least 1, not \(pressureThreshold)")
        precondition(rampupRate > 0 && rampupRate <= 1_000, "rampupRate must be in 0<..1000, not \(rampupRate)")
        precondition(backoffThreshold >= 0 && backoffThreshold < 1, "backoffThreshold must be in 0..<1, not \(backoffThreshold)")
        precondition(backoffRate >= 0 && backoffRate <= 1, "backoffRate must be in 0...1, not \(backoffRate)")
        precondition(messagesPerResize >= 1, "messagesPerResize must be at least 1, not \(messagesPerResize)")
        precondition(cooldown >= .zero, "cooldown must not be negative, not \(cooldown)")
        self.lowerBound = lowerBound
        self.upperBound = upperBound
        self.pressureThreshold = pressureThreshold
        self.rampupRate = rampupRate
        self.backoffThreshold = backoffThreshold
        self.backoffRate = backoffRate
        self.messagesPerResize = messagesPerResize
        self.cooldown = cooldown
    }

    /// How many routees to add (positive) or remove (negative) for a pool of `size` routees of
    /// which `busy` are busy; the result keeps the pool within its bounds.
    public func change(size: Int, busy: Int) -> Int {
        var proposed = size
        if size > 0, busy >= size {
            proposed += Int((rampupRate * Double(size)).rounded(.up))
        } else if size > 0, backoffRate > 0, Double(busy) / Double(size) < backoffThreshold {
            proposed -= Int((backoffRate * Double(size)).rounded(.up))
        }
        return min(max(proposed, lowerBound), upperBound) - size
    }

    /// The size a pool asked for `size` routees starts with: `size` within the bounds.
    public func initialSize(_ size: Int) -> Int {
        min(max(size, lowerBound), upperBound)
    }

    /// Whether `cooldown` has passed since the last resize (at `last`, nil if none yet).
    @usableFromInline
    func isCooledDown(since last: Date?, at now: Date) -> Bool {
        guard let last else { return true }
        return now.timeIntervalSince(last) >= cooldown.timeInterval
    }
}
