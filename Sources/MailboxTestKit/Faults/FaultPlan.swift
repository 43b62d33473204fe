import Mailbox
/// When a fault rule fires, counted in *hits*: the n-th time code under test passes a named
/// point (1-based, counted per point by a `FaultInjector` or a `FaultyScheduler`).
///
/// Every trigger is a pure function of the hit number, the point's name and the plan's seed,
/// so a run replays exactly from its seed, whatever other points were hit in between.
public struct FaultTrigger: Sendable, Hashable, CustomStringConvertible {
    private enum Kind: Hashable {
        case hits(Set<Int>)
        case fromHit(Int)
        case everyNthHit(Int)
        case probability(Double)
    }

    private let kind: Kind

    private init(_ kind: Kind) {
        self.kind = kind
    }

    /// Fires at hit `k` only (1-based).
    public static func atHit(_ k: Int) -> FaultTrigger {
        precondition(k >= 1, "hits are counted from 1, not \(k)")
        return FaultTrigger(.hits([k]))
    }

    /// Fires at each of `hits` (1-based).
    public static func atHits(_ hits: some Sequence<Int>) -> FaultTrigger {
        let set = Set(hits)
        precondition(set.allSatisfy { $0 >= 1 }, "hits are counted from 1: \(set.sorted())")
        return FaultTrigger(.hits(set))
    }

    /// Fires at hit `k` and every later hit ("fail the 2nd..nth setup": `.fromHit(2)`).
    public static func fromHit(_ k: Int) -> FaultTrigger {
        precondition(k >= 1, "hits are counted from 1, not \(k)")
        return FaultTrigger(.fromHit(k))
    }

    /// Fires at every hit.
    public static var always: FaultTrigger { .fromHit(1) }

    /// Fires at hits n, 2n, 3n, …
    public static func everyNthHit(_ n: Int) -> FaultTrigger {
        precondition(n >= 1, "everyNthHit needs n of at least 1, not \(n)")
        return FaultTrigger(.everyNthHit(n))
    }

    /// Fires at each hit with probability `p`, decided by the plan's seed, the point's name and
    /// the hit number: the same seed fires at the same hits, every run.
    public static func withProbability(_ p: Double) -> FaultTrigger {
        precondition((0 ... 1).contains(p), "a probability is between 0 and 1, not \(p)")
        return FaultTrigger(.probability(p))
    }

    /// Whether the trigger fires at `hit` of `point` under `seed`.
    public func fires(atHit hit: Int, of point: String, seed: UInt64) -> Bool {
        switch kind {
        case let .hits(hits):
            return hits.contains(hit)
        case let .fromHit(first):
            return hit >= first
        case let .everyNthHit(n):
            return hit % n == 0
        case let .probability(p):
            // One independent draw per (seed, point, hit), in [0, 1).
            let bits = SplitMix64.mix(SplitMix64.mix(seed ^ SeededRandom.stableHash(point)) &+ UInt64(truncatingIfNeeded: hit))
            return Double(bits >> 11) * 0x1p-53 < p
        }
    }

    public var description: String {
        switch kind {
        case let .hits(hits): return hits.count == 1 ? "at hit \(hits.first!)" : "at hits \(hits.sorted())"
        case let .fromHit(k): return k == 1 ? "always" : "from hit \(k)"
        case let .everyNthHit(n): return "every \(n) hits"
        case let .probability(p): return "with probability \(p)"
        }
    }
}

/// What a fault rule does when it fires.
public struct FaultEffect: Sendable, Hashable, CustomStringConvertible {
    private enum Kind: Hashable {
        case fail
        case delay(Duration)
        case stall(Duration)
    }

    private let kind: Kind

    private init(_ kind: Kind) {
        self.kind = kind
    }

    /// Throw an `InjectedFault` from `FaultInjector.check(_:)`.
    public static let fail = FaultEffect(.fail)

    /// For a `FaultyScheduler`: run this one action `duration` later than asked.
    public static func delay(_ duration: Duration) -> FaultEffect { FaultEffect(.delay(duration)) }

    /// For a `FaultyScheduler`: hold back this action and every action scheduled in the next
    /// `duration`, releasing them, in order, when it has passed.
    public static func stall(_ duration: Duration) -> FaultEffect { FaultEffect(.stall(duration)) }

    /// Whether this is `.fail`.
    public var isFailure: Bool { kind == .fail }

    /// The delay, if this is `.delay`.
    public var delay: Duration? {
        if case let .delay(duration) = kind { return duration }
        return nil
    }

    /// The stall's length, if this is `.stall`.
    public var stall: Duration? {
        if case let .stall(duration) = kind { return duration }
        return nil
    }

    public var description: String {
        switch kind {
        case .fail: return "fail"
        case let .delay(duration): return "delay \(duration)"
        case let .stall(duration): return "stall \(duration)"
        }
    }
}

/// One rule of a `FaultPlan`: at the named point, when the trigger fires, apply the effect.
public struct FaultRule: Sendable, Hashable, CustomStringConvertible {
    /// The failpoint's name, e.g. `"handler"`, `"setup"`, `"scheduler"`.
    public let point: String
    /// When the rule fires.
    public let trigger: FaultTrigger
    /// What it does.
    public let effect: FaultEffect

    /// A rule for `point`.
    public init(point: String, trigger: FaultTrigger, effect: FaultEffect) {
        self.point = point
        self.trigger = trigger
        self.effect = effect
    }

    public var description: String { "\(point): \(effect) \(trigger)" }
}

/// A script of faults — which named failpoints fail, are delayed or stall, at which hits — built
/// from a seed, so that a run with faults replays exactly from that seed.
///
/// A plan is a failpoint design that needs no hooks in the runtime: code under test passes
/// named points by calling `FaultInjector.check(_:)` (in a handler, in `setup`, …), and a
/// `FaultyScheduler` counts its scheduled actions as hits of its own point.
///
/// ```swift
/// let plan = FaultPlan(seed: 42)
///     .failing("handler", .atHit(3))              // the 3rd message handled throws
///     .failing(FaultPlan.setup, .fromHit(2))      // every restart fails in setup
///     .failing("io", .withProbability(0.1))       // 10% of "io" hits, the same ones per seed
/// ```
///
/// When several rules of one point fire at the same hit, the first added wins.
///
/// Thread-safety: an immutable value; build it once and share it.
public struct FaultPlan: Sendable, CustomStringConvertible {
    /// The conventional point name for a behavior's `setup` (`try injector.check(FaultPlan.setup)`):
    /// its first hit is the actor's start, later hits are restarts — "fail during restart" is
    /// `.failing(FaultPlan.setup, .fromHit(2))`.
    public static let setup = "setup"
    /// The conventional point name for a message handler.
    public static let handler = "handler"
    /// The point a `FaultyScheduler` counts its scheduled actions under, unless told otherwise.
    public static let scheduler = "scheduler"

    /// The seed that decides probabilistic triggers.
    public let seed: UInt64
    /// The rules, in the order added.
    public private(set) var rules: [FaultRule]

    /// A plan with `rules` (none by default: nothing fails).
    public init(seed: UInt64 = 0, rules: [FaultRule] = []) {
        self.seed = seed
        self.rules = rules
    }

    /// This plan plus a rule.
    public func adding(_ rule: FaultRule) -> FaultPlan {
        var plan = self
        plan.rules.append(rule)
        return plan
    }

    /// This plan plus: `check(point)` throws when `trigger` fires.
    public func failing(_ point: String, _ trigger: FaultTrigger) -> FaultPlan {
        adding(FaultRule(point: point, trigger: trigger, effect: .fail))
    }

    /// This plan plus: `setup` (point `FaultPlan.setup`) throws when `trigger` fires; hit 1 is
    /// the start, so `.fromHit(2)` fails every restart.
    public func failingSetup(_ trigger: FaultTrigger) -> FaultPlan {
        failing(Self.setup, trigger)
    }

    /// This plan plus, for a `FaultyScheduler` counting under `point`: the actions whose hit
    /// fires `trigger` run `duration` late.
    public func delaying(_ point: String = FaultPlan.scheduler, by duration: Duration, _ trigger: FaultTrigger) -> FaultPlan {
        precondition(duration >= .zero, "a delay cannot be negative (\(duration))")
        return adding(FaultRule(point: point, trigger: trigger, effect: .delay(duration)))
    }

    /// This plan plus, for a `FaultyScheduler` counting under `point`: at a hit that fires
    /// `trigger`, that action and all scheduled in the following `duration` are held back until
    /// it has passed.
    public func stalling(_ point: String = FaultPlan.scheduler, for duration: Duration, _ trigger: FaultTrigger) -> FaultPlan {
        precondition(duration >= .zero, "a stall cannot be negative (\(duration))")
        return adding(FaultRule(point: point, trigger: trigger, effect: .stall(duration)))
    }

    /// The effect at `hit` of `point`: that of the first rule for `point` whose trigger fires,
    /// or `nil`.
    ///
    /// - Complexity: O(number of rules).
    public func effect(atHit hit: Int, of point: String) -> FaultEffect? {
        rules.first { $0.point == point && $0.trigger.fires(atHit: hit, of: point, seed: seed) }?.effect
    }

    public var description: String {
        "FaultPlan(seed: \(seed), rules: [\(rules.map(\.description).joined(separator: "; "))])"
    }
}
