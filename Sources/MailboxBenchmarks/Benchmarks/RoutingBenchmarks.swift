import Dispatch
import Foundation
import Mailbox
import Synchronization

// Routing benchmarks, each against a same-run baseline:
//
//   router-round-robin  N   N messages through a round-robin pool router to 4 routees;
//                           baseline: the same sender telling 4 actors in turn, directly
//   router-hashing      N   N messages through a consistent-hashing pool router to 4 routees
//                           (key: the message modulo 1,024, as a string);
//                           baseline: the round-robin pool router
//   balancing-pool      N P N tasks (every 10th 20x longer, CPU-bound) through a balancing pool of P
//                           routees; baseline: a round-robin pool of P
//   elastic-burst       MS  a balancing pool with a resizer (1...4) under 1x -> 10x -> 1x offered load,
//                           MS milliseconds of burst; baseline: a fixed pool of 1 (the lower bound);
//                           ratio = p99 latency during the burst, ours / baseline; the size timeline
//   scale-2-cores       P N pingpong-pairs P N on a default pool of 2 workers; baseline: 1 worker;
//                           speedup = baseline / ours
//
// Every routee counts each message on one shared countdown, so both sides pay the same.
// Rounds alternate ours and the baseline; medians are reported (`interleavedMedians`).

extension BenchmarkRegistry {
    static let routing: [Benchmark] = [
        Benchmark(
            "router-round-robin",
            summary: "N messages through a round-robin pool router to 4 routees; baseline: direct tells to 4 actors in turn",
            parameters: [.init("N", default: 4_000_000)]
        ) { sizes in
            routerRoundRobin(count: sizes[0])
        },
        Benchmark(
            "router-hashing",
            summary: "N messages through a consistent-hashing pool router to 4 routees; baseline: the round-robin pool router",
            parameters: [.init("N", default: 2_000_000)]
        ) { sizes in
            routerHashing(count: sizes[0])
        },
        Benchmark(
            "balancing-pool",
            summary: "N CPU-bound tasks, every 10th 20x longer, through a balancing pool of P routees; baseline: a round-robin pool of P",
            parameters: [.init("N", default: 20_000), .init("P", default: ProcessInfo.processInfo.activeProcessorCount)]
        ) { sizes in
            balancingPool(tasks: sizes[0], routees: sizes[1])
        },
        Benchmark(
            "elastic-burst",
            summary: "a resizing pool (1...4) under 1x -> 10x -> 1x offered load for MS ms of burst: p99 latency in the burst; baseline: a fixed pool of 1",
            parameters: [.init("MS", default: 500, minimum: 50)]
        ) { sizes in
            elasticBurst(burstMilliseconds: sizes[0])
        },
        Benchmark(
            "scale-2-cores",
            summary: "pingpong-pairs P N on the default pool with 2 workers; baseline: 1 worker (speedup = baseline / ours)",
            parameters: [.init("P", default: 64), .init("N", default: 8_000_000, minimum: 2)]
        ) { sizes in
            scaleTwoCores(pairs: sizes[0], total: sizes[1])
        },
    ]
}

/// Arrives at `done` for each message.
private func countingRoutee(_ done: Countdown) -> Behavior<Int> {
    .receiveMessage { _ in
        done.arrive()
        return .same
    }
}

/// Sends `count` messages through `router` (spawned fresh) and waits until all are handled.
private func timeRouter(_ system: ActorSystem, name: String, count: Int, _ makeRouter: (Countdown) -> PoolRouter<Int>) -> Double {
    let done = Countdown(count)
    let router = try! system.spawn(makeRouter(done), name: name)
    // Steady-state routing: the routees exist before the clock starts (the baseline's actors do).
    while router.poolSize?.value == 0 { usleep(100) }
    return MonotonicClock.measure {
        for value in 0..<count { router.tell(value) }
        done.wait()
    }.seconds
}

func routerRoundRobin(count: Int) -> BenchmarkResult {
    withBenchSystem("router-round-robin") { system in
        var round = 0
        let medians = interleavedMedians(
            rounds: comparisonRounds,
            ours: {
                round += 1
                return timeRouter(system, name: "pool\(round)", count: count) { done in
                    Routers.pool(size: 4) { countingRoutee(done) }
                }
            },
            baseline: {
                round += 1
                let done = Countdown(count)
                let actors = (0..<4).map { try! system.spawn(countingRoutee(done), name: "direct\(round)-\($0)") }
                return MonotonicClock.measure {
                    for value in 0..<count { actors[value & 3].tell(value) }
                    done.wait()
                }.seconds
            }
        )
        return BenchmarkResult(seconds: medians.ours, msgs: count, baseline: .init(name: "direct-tells", seconds: medians.baseline), ok: true)
    }
}

func routerHashing(count: Int) -> BenchmarkResult {
    withBenchSystem("router-hashing") { system in
        var round = 0
        let medians = interleavedMedians(
            rounds: comparisonRounds,
            ours: {
                round += 1
                return timeRouter(system, name: "hashing\(round)", count: count) { done in
                    Routers.pool(size: 4) { countingRoutee(done) }.withConsistentHashingRouting { String($0 & 1023) }
                }
            },
            baseline: {
                round += 1
                return timeRouter(system, name: "roundrobin\(round)", count: count) { done in
                    Routers.pool(size: 4) { countingRoutee(done) }
                }
            }
        )
        return BenchmarkResult(seconds: medians.ours, msgs: count, baseline: .init(name: "round-robin-router", seconds: medians.baseline), ok: true)
    }
}

// MARK: - balancing-pool

/// Keeps the optimiser from dropping the busy work.
private let workSink = Atomic<UInt64>(0)

/// CPU-bound work of about `units` (an LCG step each), no sleeping.
@inline(never)
private func busyWork(_ units: Int) {
    var x = UInt64(truncatingIfNeeded: units) | 1
    for _ in 0..<(units * 400) { x = x &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407 }
    if x == 0 { workSink.store(x, ordering: .relaxed) }
}

/// Task `index` costs 20 units if it is a tenth task, else 1.
private func taskUnits(_ index: Int) -> Int { index % 10 == 0 ? 20 : 1 }

private func worker(_ done: Countdown, unit: Int) -> Behavior<Int> {
    .receiveMessage { index in
        busyWork(taskUnits(index) * unit)
        done.arrive()
        return .same
    }
}

func balancingPool(tasks: Int, routees: Int) -> BenchmarkResult {
    withBenchSystem("balancing-pool") { system in
        let unit = unitsFor(microseconds: 2)   // a short task takes ~2 µs, a long one ~40 µs
        var round = 0
        func run(_ pool: PoolRouter<Int>, _ done: Countdown) -> Double {
            round += 1
            let ref = try! system.spawn(pool, name: "pool\(round)")
            while ref.poolSize?.value == 0 { usleep(100) }
            return MonotonicClock.measure {
                for index in 0..<tasks { ref.tell(index) }
                done.wait()
            }.seconds
        }
        let medians = interleavedMedians(
            rounds: comparisonRounds,
            ours: {
                let done = Countdown(tasks)
                return run(Routers.balancingPool(size: routees, queueCapacity: tasks) { worker(done, unit: unit) }, done)
            },
            baseline: {
                let done = Countdown(tasks)
                return run(Routers.pool(size: routees) { worker(done, unit: unit) }, done)
            }
        )
        var result = BenchmarkResult(seconds: medians.ours, msgs: tasks, baseline: .init(name: "round-robin-pool", seconds: medians.baseline), ok: true)
        result.extra.append(("routees", .int(routees)))
        return result
    }
}

// MARK: - elastic-burst

/// When each message of a burst run was sent and handled (by index), and how many were handled.
/// Each slot is written by one thread (the sender, or the routee that handled that index) and
/// read after `handled` (release/acquire) says every message was.
private final class BurstProbe: @unchecked Sendable {  // slots: one writer each, read after `handled`
    let sentAt: UnsafeMutableBufferPointer<UInt64>
    let handledAt: UnsafeMutableBufferPointer<UInt64>
    let handled = Atomic<Int>(0)

    init(capacity: Int) {
        sentAt = .allocate(capacity: capacity)
        handledAt = .allocate(capacity: capacity)
    }

    deinit {
        sentAt.deallocate()
        handledAt.deallocate()
    }
}

/// The busy-work units that take about `microseconds` here (measured now).
private func unitsFor(microseconds: Double) -> Int {
    let trial = 200
    let start = MonotonicClock.nanoseconds()
    for _ in 0..<trial { busyWork(1) }
    let perUnit = Double(MonotonicClock.nanoseconds() - start) / 1_000 / Double(trial)
    return max(1, Int((microseconds / perUnit).rounded()))
}

/// Sends at `rate` messages per second for `milliseconds`, in 1 ms batches, from index `first`;
/// returns the next index.
private func offer(_ pool: ActorRef<Int>, probe: BurstProbe, rate: Int, milliseconds: Int, from first: Int) -> Int {
    var index = first
    let start = MonotonicClock.nanoseconds()
    for tick in 0..<milliseconds {
        let due = min(first + rate * (tick + 1) / 1_000, probe.sentAt.count)
        while index < due {
            probe.sentAt[index] = MonotonicClock.nanoseconds()
            pool.tell(index)
            index += 1
        }
        let next = start + UInt64(tick + 1) * 1_000_000
        let now = MonotonicClock.nanoseconds()
        if next > now { usleep(UInt32((next - now) / 1_000)) }
    }
    return index
}

/// One run of the load step (300 ms at 1x, the burst at 10x, 1 s at 1x): the p99 latency
/// (send to handled, seconds) of the burst's messages, the pool's size every 50 ms, and its
/// size at the end.
private func burstRun(_ system: ActorSystem, name: String, burstMilliseconds: Int, serviceUnits: Int, baseRate: Int, resizer: Resizer?) -> (p99: Double, timeline: [Int], finalSize: Int) {
    let calm = 300
    let tail = 1_000
    let capacity = baseRate * (calm + tail) / 1_000 + baseRate * 10 * burstMilliseconds / 1_000 + 16
    let probe = BurstProbe(capacity: capacity)
    // A balancing pool: routees added during the burst take the waiting work at once (with
    // routing by logic, the backlog would stay in the first routee's mailbox).
    var pool = Routers.balancingPool(size: 1, queueCapacity: capacity) {
        Behavior<Int>.receiveMessage { index in
            busyWork(serviceUnits)
            probe.handledAt[index] = MonotonicClock.nanoseconds()
            probe.handled.add(1, ordering: .releasing)
            return .same
        }
    }
    if let resizer { pool = pool.withResizer(resizer) }
    let ref = try! system.spawn(pool, name: name)
    let timeline = Mutex<[Int]>([])
    let sampling = DispatchSource.makeTimerSource(queue: .global())
    sampling.schedule(deadline: .now(), repeating: .milliseconds(50))
    sampling.setEventHandler { let size = ref.poolSize?.value ?? 0; timeline.withLock { $0.append(size) } }
    sampling.resume()
    var sent = offer(ref, probe: probe, rate: baseRate, milliseconds: calm, from: 0)
    let burstStart = sent
    sent = offer(ref, probe: probe, rate: baseRate * 10, milliseconds: burstMilliseconds, from: sent)
    let burstEnd = sent
    sent = offer(ref, probe: probe, rate: baseRate, milliseconds: tail, from: sent)
    sampling.cancel()
    while probe.handled.load(ordering: .acquiring) < sent { usleep(1_000) }
    var latencies = (burstStart..<burstEnd).map { probe.handledAt[$0] &- probe.sentAt[$0] }
    latencies.sort()
    let p99 = Double(latencies[min(latencies.count - 1, latencies.count * 99 / 100)]) / 1e9
    return (p99, timeline.withLock { $0 }, ref.poolSize?.value ?? 0)
}

func elasticBurst(burstMilliseconds: Int) -> BenchmarkResult {
    withBenchSystem("elastic-burst") { system in
        // 20 µs per task: one routee serves 50,000/s. 1x offers 13 % of that, the burst 130 %:
        // more than one routee can do, less than the two cores can.
        let units = unitsFor(microseconds: 20)
        let baseRate = 6_500
        let resizer = Resizer(lowerBound: 1, upperBound: 4, pressureThreshold: 8, rampupRate: 1, messagesPerResize: 20, cooldown: .milliseconds(10))
        let started = MonotonicClock.nanoseconds()
        let elastic = burstRun(system, name: "elastic", burstMilliseconds: burstMilliseconds, serviceUnits: units, baseRate: baseRate, resizer: resizer)
        let seconds = Double(MonotonicClock.nanoseconds() - started) / 1e9
        let fixed = burstRun(system, name: "fixed", burstMilliseconds: burstMilliseconds, serviceUnits: units, baseRate: baseRate, resizer: nil)
        var result = BenchmarkResult(
            seconds: seconds, baseline: nil, ok: elastic.finalSize == resizer.lowerBound)
        result.extra.append(("ratio", .double(elastic.p99 / fixed.p99, decimals: 3)))
        result.extra.append(("p99_ms", .double(elastic.p99 * 1_000, decimals: 3)))
        result.extra.append(("baseline", .string("fixed-pool-of-1")))
        result.extra.append(("baseline_p99_ms", .double(fixed.p99 * 1_000, decimals: 3)))
        result.extra.append(("final_size", .int(elastic.finalSize)))
        result.extra.append(("size_timeline", .string(elastic.timeline.map(String.init).joined(separator: ","))))
        return result
    }
}

// MARK: - scale-2-cores

func scaleTwoCores(pairs: Int, total: Int) -> BenchmarkResult {
    func rally(workers: Int) -> Double {
        let system = ActorSystem(name: "scale\(workers)", configuration: .init(poolWorkerCount: workers, logHandler: nil))
        defer { _ = runBlocking { await system.shutdown() } }
        let perPair = total / pairs
        let finished = Countdown(pairs)
        var serves: [ActorRef<Rally>] = []
        for pair in 0..<pairs {
            let a = try! system.spawn(rallyPlayer(finished), name: "a\(pair)")
            let b = try! system.spawn(rallyPlayer(finished), name: "b\(pair)")
            a.tell(.partner(b))
            b.tell(.partner(a))
            serves.append(a)
        }
        return MonotonicClock.measure {
            for a in serves { a.tell(.ball(remaining: perPair - 1)) }
            finished.wait()
        }.seconds
    }
    let medians = interleavedMedians(rounds: comparisonRounds, ours: { rally(workers: 2) }, baseline: { rally(workers: 1) })
    var result = BenchmarkResult(seconds: medians.ours, msgs: total / pairs * pairs, baseline: .init(name: "one-worker", seconds: medians.baseline), ok: true)
    result.extra.append(("speedup", .double(medians.baseline / medians.ours, decimals: 3)))
    result.extra.append(("pairs", .int(pairs)))
    return result
}
