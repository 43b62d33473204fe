// What one run does (immutable, shared by all workers) and the state the workers share with the
// coordinating main thread (atomics and one gate).
#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import struct Mailbox.LockedValueBox

/// The benchmark modes (`chat-bench <mode>`).
enum Mode: String, Sendable, CaseIterable {
    case burst
    case paced
    case slowConsumer = "slow-consumer"
    case idle
}

/// Everything a worker needs to know about the run. Immutable; safe to share.
struct Plan: Sendable {
    var mode: Mode
    var family: Int32
    var address: sockaddr_storage
    var addressLength: socklen_t
    /// Healthy clients (they send in the chat modes); ids 0..<clients.
    var clients: Int
    /// Slow consumers (slow-consumer mode); ids clients..<clients+slow.
    var slow: Int
    var channels: Int
    /// Messages each healthy client sends.
    var messagesPerClient: Int
    /// Paced mode: messages per second per client.
    var rate: Double
    var threads: Int
    /// At most this many connections of one worker between connect and registration.
    var connectWindowPerWorker: Int
    var runId: String
    var password: String?
    var oper: (name: String, password: String)?
    var userModes: String?
    /// Burst mode: lines a sender writes per turn before the others get theirs.
    var burstBatch: Int
    /// SO_RCVBUF of slow consumers (small, so the server's queue fills quickly).
    var slowReceiveBuffer: Int32
    /// Bytes of filler appended to every PRIVMSG after the timestamp (0 = none).
    var padding: Int

    var nickPrefix: String { "b" + runId }
    func nick(_ id: Int) -> String { nickPrefix + String(id) }
    func channelName(_ k: Int) -> String { "#b\(runId)c\(k)" }
    /// The channel of client `id` (healthy i joins i % K; slow j joins j % K).
    func channel(of id: Int) -> Int { id < clients ? id % channels : (id - clients) % channels }
    /// Healthy members of channel `k`.
    func healthyMembers(_ k: Int) -> Int { clients > k ? (clients - k + channels - 1) / channels : 0 }
    /// Slow members of channel `k`.
    func slowMembers(_ k: Int) -> Int { slow > k ? (slow - k + channels - 1) / channels : 0 }
    /// Sender slots per channel (the largest healthy membership): a sender's slot is id / K.
    var senderSlots: Int { healthyMembers(0) }
    /// Deliveries the run must see: every healthy member except the sender gets every message.
    var expectedDeliveries: Int {
        guard mode != .idle else { return 0 }
        var total = 0
        for k in 0..<channels {
            let n = healthyMembers(k)
            total += n * max(0, n - 1) * messagesPerClient
        }
        return total
    }
}

/// Run phases, stored in `Shared.phase`.
enum Phase {
    static let setup = 0
    static let running = 1
    static let stopping = 2
}

/// State shared by the workers and the main thread: atomics plus one gate the main thread waits
/// on. Thread-safe by construction (atomics, and a gate/box with their own mutexes).
final class Shared: Sendable {
    let phase = Atomic<Int>(Phase.setup)
    /// Clients past the barrier (chat modes) or registered (idle).
    let ready = Atomic<Int>(0)
    /// Clients that failed before the measured phase, or healthy ones that dropped during it.
    let failed = Atomic<Int>(0)
    /// Unique deliveries so far.
    let delivered = Atomic<Int>(0)
    /// CLOCK_MONOTONIC ns when the measured phase started.
    let startNs = Atomic<UInt64>(0)
    /// CLOCK_MONOTONIC ns of the delivery that completed the run (0 if none did).
    let completedNs = Atomic<UInt64>(0)
    let gate = PThreadGate()
    let firstError = LockedValueBox<String?>(nil)
    let needReady: Int
    let expected: Int

    init(needReady: Int, expected: Int) {
        self.needReady = needReady
        self.expected = expected
    }

    /// Records the first error text of the run (later ones are only counted).
    func noteError(_ text: String) {
        firstError.withLockedValue { if $0 == nil { $0 = text } }
    }

    func fail(_ text: String) {
        noteError(text)
        failed.wrappingAdd(1, ordering: .sequentiallyConsistent)
        gate.broadcast()
    }
}

/// What one worker measured; merged by the main thread after the workers are joined.
struct WorkerResult: Sendable {
    var latenciesNs: [UInt64] = []
    var unique = 0
    var duplicated = 0
    var reordered = 0
    /// PRIVMSGs that were not ours or not for this receiver's channel.
    var unexpected = 0
    var sent = 0
    var errorReplies = 0
    var disconnected = 0
    /// Slow consumers (ids) whose QUIT a healthy client saw.
    var slowQuitSeen: Set<Int> = []
    /// Slow consumers (ids) whose socket this worker found closed by the server at the end.
    var slowClosed: Set<Int> = []
    /// Bytes the slow consumers found waiting for them when they finally read, at the end.
    var slowBytesRead = 0
    var pingsAnswered = 0
    var lastDeliveryNs: UInt64 = 0
}
