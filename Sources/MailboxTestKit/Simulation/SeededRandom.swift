import Mailbox

/// A small, fast, seedable random number generator (Steele, Lea & Flood's SplitMix64): the same
/// seed gives the same sequence on every platform and every run, so anything random in a test
/// can be replayed from its seed.
///
/// Thread-safety: a value type; each copy has its own state. Share one between threads only
/// behind a lock (a `Simulation` gives each body its own).
public struct SeededRandom: RandomNumberGenerator, Sendable {
    /// The seed this generator started from.
    public let seed: UInt64
    private var generator: SplitMix64

    /// A generator whose sequence is determined by `seed` alone.
    public init(seed: UInt64) {
        self.seed = seed
        self.generator = SplitMix64(seed: seed)
    }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        generator.next()
    }

    /// A stable 64-bit hash of `text` (FNV-1a over its UTF-8), unlike `Hasher`, which is seeded
    /// per process.
    static func stableHash(_ text: String) -> UInt64 {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01B3
        }
        return hash
    }
}
