import Foundation

/// A small, fast, seedable random number generator (Steele, Lea & Flood's SplitMix64), so a
/// randomised test can be replayed exactly from its seed.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// The seed for a randomised test: `MAILBOX_TEST_SEED` from the environment when set (to replay
/// a failure), a fresh random one otherwise. Printed either way, with the test's name, so any
/// failure can be replayed.
func testSeed(_ name: String = #function) -> UInt64 {
    let seed: UInt64
    if let text = ProcessInfo.processInfo.environment["MAILBOX_TEST_SEED"], let value = UInt64(text) {
        seed = value
    } else {
        seed = UInt64.random(in: .min ... .max)
    }
    print("\(name): seed \(seed) (replay with MAILBOX_TEST_SEED=\(seed))")
    return seed
}
