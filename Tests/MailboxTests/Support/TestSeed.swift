import Foundation

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
