import Dispatch
import Foundation
import Mailbox
import Synchronization

// Actor benchmarks, run by the peers harness (../shared/peers/README.md) with these names and
// positional sizes, and the same counting rule (one message = one one-way delivery):
//
//   pingpong        N            2 actors bounce one message; N one-way messages in total
//   pingpong-pairs  P N          P independent pairs, N messages in total (N/P each)
//   fanin           K N          K senders each send N/K messages to one counting receiver
//   threadring      R N          R actors in a ring pass one token N times
//   skynet          LEAVES DIV   tree of actors, DIV children each; check the leaf sum
//   spawn           N            create N live actors, then stop each and wait until all are gone
//
// Each runs the same program with Swift native actors (`actor` + `await`, the way a Swift user
// writes it, as in ../shared/peers/swift-native) in the same process: that is the baseline.

extension BenchmarkRegistry {
    static let actors: [Benchmark] = [
        Benchmark(
            "pingpong",
            summary: "2 actors bounce one message N times (N one-way messages); baseline: a Swift actor awaiting another's method (1 await = 2 messages)",
            parameters: [.init("N", default: 10_000_000, minimum: 2)]
        ) { sizes in
            pingPongPairs(pairs: 1, total: sizes[0], bench: "pingpong")
        },
        Benchmark(
            "pingpong-pairs",
            summary: "P independent pairs bounce a message, N one-way messages in total; baseline: P Swift actor pairs",
            parameters: [.init("P", default: 4), .init("N", default: 20_000_000, minimum: 2)]
        ) { sizes in
            pingPongPairs(pairs: sizes[0], total: sizes[1], bench: "pingpong-pairs")
        },
        Benchmark(
            "fanin",
            summary: "K senders each tell N/K messages to one counting receiver; baseline: K Swift actors awaiting Counter.inc()",
            parameters: [.init("K", default: 16), .init("N", default: 4_000_000)]
        ) { sizes in
            fanIn(senders: sizes[0], total: sizes[1])
        },
        Benchmark(
            "threadring",
            summary: "R actors in a ring pass a token N times; baseline: Swift actors passing it with Task { await next.pass() }",
            parameters: [.init("R", default: 503, minimum: 2), .init("N", default: 3_000_000)]
        ) { sizes in
            threadRing(ring: sizes[0], passes: sizes[1])
        },
        Benchmark(
            "skynet",
            summary: "a tree of actors with DIV children each down to LEAVES leaves; leaves reply their number, parents sum; baseline: a Swift actor per node, a TaskGroup per parent",
            parameters: [.init("LEAVES", default: 1_000_000), .init("DIV", default: 10, minimum: 2)]
        ) { sizes in
            skynet(leaves: sizes[0], divisor: sizes[1])
        },
        Benchmark(
            "spawn",
            summary: "create N actors that stay alive, then stop each with a message and wait until all are gone; baseline: N Swift actors",
            parameters: [.init("N", default: 1_000_000)]
        ) { sizes in
            spawnActors(count: sizes[0])
        },
    ]
}

// MARK: - Shared

/// Runs `body` on the Swift concurrency pool and blocks the calling (main) thread until it
/// returns: the benchmarks' entry points are synchronous.
func runBlocking<T: Sendable>(_ body: @escaping @Sendable () async -> T) -> T {
    let box = BlockingResult<T>()
    let done = DispatchSemaphore(value: 0)
    Task {
        box.value = await body()
        done.signal()
    }
    done.wait()
    return box.value!
}

// Written by the task before `done.signal()`, read by the caller after `done.wait()`: the
// semaphore orders the two accesses.
final class BlockingResult<T>: @unchecked Sendable {
    var value: T?
}

/// A fresh system on the default pool, shut down (and its threads joined) after `body`.
func withBenchSystem<T>(_ name: String, _ body: (ActorSystem) throws -> T) rethrows -> T {
    let system = ActorSystem(name: name, configuration: .init(logHandler: nil))
    defer { _ = runBlocking { await system.shutdown() } }
    return try body(system)
}

/// Counts down from `count`; `wait()` returns once it reaches zero.
final class Countdown: Sendable {
    private let remaining: Atomic<Int>
    private let done = DispatchSemaphore(value: 0)

    init(_ count: Int) {
        remaining = Atomic(count)
    }

    func arrive() {
        if remaining.wrappingSubtract(1, ordering: .acquiringAndReleasing).newValue == 0 {
            done.signal()
        }
    }

    func wait() {
        done.wait()
    }
}

// MARK: - pingpong, pingpong-pairs

enum Rally: Sendable {
    case partner(ActorRef<Rally>)
    case ball(remaining: Int)
}

func rallyPlayer(_ finished: Countdown) -> Behavior<Rally> {
    .setup { _ in
        var partner: ActorRef<Rally>?
        return .receiveMessage { message in
            switch message {
            case let .partner(ref):
                partner = ref
            case let .ball(remaining):
                if remaining == 0 {
                    finished.arrive()
                } else {
                    partner!.tell(.ball(remaining: remaining - 1))
                }
            }
            return .same
        }
    }
}

// As ../shared/peers/swift-native writes it: both sides touch their own state, so every await
// really hops to the other actor and back (2 messages).
actor NativePonger {
    private var served = 0

    func pong(_ value: Int) -> Int {
        served &+= 1
        return value &+ 1
    }
}

actor NativePinger {
    let ponger = NativePonger()
    private var replies = 0

    func rally(_ rounds: Int) async -> Int {
        var value = 0
        for _ in 0..<rounds {
            value = await ponger.pong(value)
            replies &+= 1  // isolated to the pinger: forces the hop back
        }
        return replies == rounds ? value : -1
    }
}

func pingPongPairs(pairs: Int, total: Int, bench: String) -> BenchmarkResult {
    let perPair = total / pairs
    let messages = perPair * pairs
    let ours = withBenchSystem("pingpong") { system in
        let finished = Countdown(pairs)
        var serves: [(ActorRef<Rally>, Int)] = []
        for pair in 0..<pairs {
            let a = try! system.spawn(rallyPlayer(finished), name: "a\(pair)")
            let b = try! system.spawn(rallyPlayer(finished), name: "b\(pair)")
            a.tell(.partner(b))
            b.tell(.partner(a))
            serves.append((a, perPair))
        }
        return MonotonicClock.measure {
            // The serve is the first of each pair's `perPair` one-way messages.
            for (a, count) in serves { a.tell(.ball(remaining: count - 1)) }
            finished.wait()
        }.seconds
    }
    let (baseline, rallies) = runBlocking {
        let pingers = (0..<pairs).map { _ in NativePinger() }
        let start = MonotonicClock.nanoseconds()
        // Each rally's result is checked, so the optimiser cannot drop the awaits.
        let total = await withTaskGroup(of: Int.self) { group in
            for pinger in pingers { group.addTask { await pinger.rally(perPair / 2) } }
            var total = 0
            for await value in group { total += value }
            return total
        }
        return (Double(MonotonicClock.nanoseconds() - start) / 1e9, total)
    }
    var result = BenchmarkResult(seconds: ours, msgs: messages, baseline: .init(name: "swift-native-actors", seconds: baseline), ok: rallies == pairs * (perPair / 2))
    if bench == "pingpong-pairs" { result.extra.append(("pairs", .int(pairs))) }
    return result
}

// MARK: - fanin

actor NativeCounter {
    private(set) var count = 0
    func increment() { count += 1 }
}

actor NativeSender {
    private var sent = 0

    func send(_ count: Int, to counter: NativeCounter) async {
        for _ in 0..<count {
            await counter.increment()
            sent &+= 1  // isolated to the sender: forces the hop back
        }
    }
}

func fanIn(senders: Int, total: Int) -> BenchmarkResult {
    let perSender = total / senders
    let messages = perSender * senders
    let ours = withBenchSystem("fanin") { system in
        let finished = Countdown(1)
        let receiver = try! system.spawn(Behavior<Int>.setup { _ in
            var received = 0
            return .receiveMessage { _ in
                received += 1
                if received == messages { finished.arrive() }
                return .same
            }
        }, name: "receiver")
        let senderRefs = (0..<senders).map { index in
            try! system.spawn(Behavior<Int>.receiveMessage { count in
                for value in 0..<count { receiver.tell(value) }
                return .same
            }, name: "sender\(index)")
        }
        return MonotonicClock.measure {
            for sender in senderRefs { sender.tell(perSender) }
            finished.wait()
        }.seconds
    }
    let (baseline, counted) = runBlocking {
        let counter = NativeCounter()
        let nativeSenders = (0..<senders).map { _ in NativeSender() }
        let start = MonotonicClock.nanoseconds()
        await withTaskGroup(of: Void.self) { group in
            for sender in nativeSenders { group.addTask { await sender.send(perSender, to: counter) } }
        }
        let counted = await counter.count
        return (Double(MonotonicClock.nanoseconds() - start) / 1e9, counted)
    }
    var result = BenchmarkResult(seconds: ours, msgs: messages, baseline: .init(name: "swift-native-actors", seconds: baseline), ok: counted == messages)
    result.extra.append(("senders", .int(senders)))
    return result
}

// MARK: - threadring

enum RingMessage: Sendable {
    case next(ActorRef<RingMessage>)
    case token(Int)
}

actor NativeRingNode {
    private var next: NativeRingNode?
    private let finished: Countdown

    init(_ finished: Countdown) {
        self.finished = finished
    }

    func link(_ next: NativeRingNode) { self.next = next }

    func pass(_ token: Int) {
        if token == 0 {
            finished.arrive()
            return
        }
        let next = self.next!
        Task { await next.pass(token - 1) }
    }
}

func threadRing(ring: Int, passes: Int) -> BenchmarkResult {
    let ours = withBenchSystem("threadring") { system in
        let finished = Countdown(1)
        let nodes = (0..<ring).map { index in
            try! system.spawn(Behavior<RingMessage>.setup { _ in
                var next: ActorRef<RingMessage>?
                return .receiveMessage { message in
                    switch message {
                    case let .next(ref): next = ref
                    case let .token(remaining):
                        if remaining == 0 { finished.arrive() } else { next!.tell(.token(remaining - 1)) }
                    }
                    return .same
                }
            }, name: "node\(index)")
        }
        for index in 0..<ring { nodes[index].tell(.next(nodes[(index + 1) % ring])) }
        return MonotonicClock.measure {
            nodes[0].tell(.token(passes - 1))
            finished.wait()
        }.seconds
    }
    let baseline = runBlocking {
        let finished = Countdown(1)
        let nodes = (0..<ring).map { _ in NativeRingNode(finished) }
        for index in 0..<ring { await nodes[index].link(nodes[(index + 1) % ring]) }
        let start = MonotonicClock.nanoseconds()
        await nodes[0].pass(passes - 1)
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                finished.wait()
                continuation.resume()
            }
        }
        return Double(MonotonicClock.nanoseconds() - start) / 1e9
    }
    var result = BenchmarkResult(seconds: ours, msgs: passes, baseline: .init(name: "swift-native-actors", seconds: baseline), ok: true)
    result.extra.append(("ring", .int(ring)))
    return result
}

// MARK: - skynet

enum SkynetMessage: Sendable {
    case start(parent: ActorRef<SkynetMessage>?, number: Int, size: Int)
    case result(Int)
}

func skynetNode(divisor: Int, rootResult: @escaping @Sendable (Int) -> Void) -> Behavior<SkynetMessage> {
    .setup { _ in
        var parent: ActorRef<SkynetMessage>?
        var sum = 0
        var pending = 0
        func report(_ value: Int) -> Behavior<SkynetMessage> {
            if let parent { parent.tell(.result(value)) } else { rootResult(value) }
            return .stopped
        }
        return .receive { context, message in
            switch message {
            case let .start(from, number, size):
                parent = from
                if size == 1 { return report(number) }
                let childSize = size / divisor
                pending = divisor
                for index in 0..<divisor {
                    let child = try context.spawnAnonymous(skynetNode(divisor: divisor, rootResult: rootResult))
                    child.tell(.start(parent: context.myself, number: number + index * childSize, size: childSize))
                }
                return .same
            case let .result(value):
                sum += value
                pending -= 1
                return pending == 0 ? report(sum) : .same
            }
        }
    }
}

actor NativeSkynetNode {
    func run(number: Int, size: Int, divisor: Int) async -> Int {
        if size == 1 { return number }
        let childSize = size / divisor
        return await withTaskGroup(of: Int.self) { group in
            for index in 0..<divisor {
                group.addTask {
                    await NativeSkynetNode().run(number: number + index * childSize, size: childSize, divisor: divisor)
                }
            }
            var sum = 0
            for await value in group { sum += value }
            return sum
        }
    }
}

func skynet(leaves: Int, divisor: Int) -> BenchmarkResult {
    // Round LEAVES down to a power of DIV, so every parent has exactly DIV children.
    var size = 1
    var nodes = 1
    while size * divisor <= leaves {
        size *= divisor
        nodes += size
    }
    let leafCount = size
    let expected = leafCount * (leafCount - 1) / 2
    let sum = Atomic<Int>(-1)
    let ours = withBenchSystem("skynet") { system in
        let finished = Countdown(1)
        let root = try! system.spawn(skynetNode(divisor: divisor) { value in
            sum.store(value, ordering: .releasing)
            finished.arrive()
        }, name: "root")
        return MonotonicClock.measure {
            root.tell(.start(parent: nil, number: 0, size: leafCount))
            finished.wait()
        }.seconds
    }
    // Our peak alone: the native baseline below holds its own tree of 1.1M actors.
    let peakOurs = ProcessStatus.peakResidentMegabytes
    ProcessStatus.resetPeakResident()
    let baseline = runBlocking {
        let start = MonotonicClock.nanoseconds()
        let value = await NativeSkynetNode().run(number: 0, size: leafCount, divisor: divisor)
        precondition(value == expected, "native skynet sum \(value) != \(expected)")
        return Double(MonotonicClock.nanoseconds() - start) / 1e9
    }
    let result = sum.load(ordering: .acquiring)
    // Every node but the root receives a start and sends a result; the root receives a start.
    var benchmark = BenchmarkResult(seconds: ours, msgs: 2 * nodes - 1, baseline: .init(name: "swift-native-actors", seconds: baseline), ok: result == expected)
    benchmark.peakOursMegabytes = peakOurs
    benchmark.extra.append(("actors", .int(nodes)))
    benchmark.extra.append(("leaves", .int(leafCount)))
    benchmark.extra.append(("result", .int(result)))
    return benchmark
}

// MARK: - spawn

actor NativeIdle {
    func stop() {}
}

func spawnActors(count: Int) -> BenchmarkResult {
    var spawnSeconds = 0.0
    var bytesPerActor = 0.0
    let ours = withBenchSystem("spawn") { system in
        let started = Countdown(count)
        let stopped = Countdown(count)
        let rssBefore = ProcessStatus.field("VmRSS") ?? 0
        let total = MonotonicClock.measure {
            var refs: [ActorRef<Int>] = []
            refs.reserveCapacity(count)
            spawnSeconds = MonotonicClock.measure {
                for _ in 0..<count {
                    refs.append(try! system.spawnAnonymous(Behavior<Int>.setup { _ in
                        started.arrive()
                        return .receiveMessage { _ in .stopped(postStop: { stopped.arrive() }) }
                    }))
                }
                started.wait()
            }.seconds
            let rssAfter = ProcessStatus.field("VmRSS") ?? 0
            bytesPerActor = Double(rssAfter - rssBefore) * 1024 / Double(count)
            for ref in refs { ref.tell(0) }
            stopped.wait()
        }
        return total.seconds
    }
    let peakOurs = ProcessStatus.peakResidentMegabytes
    ProcessStatus.resetPeakResident()
    let baseline = runBlocking {
        let start = MonotonicClock.nanoseconds()
        var actors: [NativeIdle] = []
        actors.reserveCapacity(count)
        for _ in 0..<count { actors.append(NativeIdle()) }
        for actor in actors { await actor.stop() }
        actors.removeAll()
        return Double(MonotonicClock.nanoseconds() - start) / 1e9
    }
    var result = BenchmarkResult(seconds: ours, msgs: count, baseline: .init(name: "swift-native-actors", seconds: baseline), ok: true)
    result.peakOursMegabytes = peakOurs
    result.extra.append(("actors", .int(count)))
    result.extra.append(("spawn_seconds", .double(spawnSeconds, decimals: 4)))
    result.extra.append(("bytes_per_actor", .int(Int(bytesPerActor.rounded()))))
    return result
}
