/// A small, fast, seedable random number generator (Steele, Lea & Flood's SplitMix64): the same
/// seed gives the same sequence on every platform and every run. The one implementation of it in
/// the package: the system's seeded back-off jitter, the test kit's `SeededRandom` and the tests
/// use it.
///
/// Thread-safety: a value type; each copy has its own state. (`ActorSystem` shares one sequence
/// between threads by advancing an `Atomic` state with `increment` and scrambling it with `mix`.)
package struct SplitMix64: RandomNumberGenerator, Sendable {
    /// The golden-ratio step added to the state for each value.
    package static let increment: UInt64 = 0x9E37_79B9_7F4A_7C15

    private var state: UInt64

    /// A generator whose sequence is determined by `seed` alone.
    package init(seed: UInt64) {
        state = seed
    }

    /// The next 64 random bits.
    package mutating func next() -> UInt64 {
        state &+= Self.increment
        return Self.mix(state)
    }

    /// SplitMix64's finaliser: a bijective scramble of 64 bits.
    @inlinable
    package static func mix(_ value: UInt64) -> UInt64 {
        var z = value
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A uniformly distributed `Double` in `0..<1` from 64 random bits (their top 53).
    @inlinable
    package static func unit(_ bits: UInt64) -> Double {
        Double(bits >> 11) / Double(1 << 53)
    }
}
