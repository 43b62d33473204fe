import Dispatch
import Foundation
import Mailbox
import Synchronization

// Supervision benchmarks:
//
//   restart-latency     N   a Supervisor's child fails N times, one at a time; latency from the
//                           throw to the restarted child handling its next message (p50, p99);
//                           the same for a `supervise(_:).onFailure(.restart)` rule alone
//   failure-throughput  W N a one-for-one tree of W workers handles N messages, 1% of which
//                           throw; baseline: the same tree, no failures, same run

extension BenchmarkRegistry {
    static let supervision: [Benchmark] = [
        Benchmark(
            "restart-latency",
            summary: "a supervised child fails N times on the default pool; microseconds from the throw to the restarted child's next message (p50, p99), for a Supervisor child and for a supervise rule",
            parameters: [.init("N", default: 20_000, minimum: 10)]
        ) { sizes in
            restartLatency(failures: sizes[0])
        },
        Benchmark(
            "failure-throughput",
            summary: "a one-for-one Supervisor of W workers handles N messages of which 1% throw; baseline: the same tree without failures (ratio = time with failures / time without)",
            parameters: [.init("W", default: 4), .init("N", default: 2_000_000, minimum: 100)]
        ) { sizes in
            failureThroughput(workers: sizes[0], total: sizes[1])
        },
    ]
}

enum FailingWork: Sendable {
    /// Throw, recording when.
    case fail
    /// Record the time since the last throw.
    case probe
    /// Handle a value (throwing on every 100th when `failing`).
    case value(Int)
}

struct InjectedBenchmarkFailure: Error {}

/// Samples of restart latency, written by the probing actor, read by the driver after each.
final class LatencySamples: Sendable {
    let failedAt = Atomic<UInt64>(0)
    private let samples = Mutex<[Double]>([])
    let arrived = DispatchSemaphore(value: 0)

    func record() {
        let nanoseconds = MonotonicClock.nanoseconds() - failedAt.load(ordering: .acquiring)
        samples.withLock { $0.append(Double(nanoseconds) / 1_000) }
        arrived.signal()
    }

    var all: [Double] { samples.withLock { $0 } }
}

func latencyChild(_ samples: LatencySamples) -> Behavior<FailingWork> {
    .setup { _ in
        .receiveMessage { message in
            switch message {
            case .fail:
                samples.failedAt.store(MonotonicClock.nanoseconds(), ordering: .releasing)
                throw InjectedBenchmarkFailure()
            case .probe:
                samples.record()
            case .value:
                break
            }
            return .same
        }
    }
}

func percentile(_ values: [Double], _ fraction: Double) -> Double {
    guard !values.isEmpty else { return 0 }
    let sorted = values.sorted()
    return sorted[min(sorted.count - 1, Int((Double(sorted.count) * fraction).rounded(.down)))]
}

func restartLatency(failures: Int) -> BenchmarkResult {
    func measure(_ child: ActorRef<FailingWork>, _ samples: LatencySamples) -> Bool {
        for _ in 0..<failures {
            child.tell(.fail)
            child.tell(.probe)
            guard samples.arrived.wait(timeout: .now() + .seconds(10)) == .success else { return false }
        }
        return true
    }
    return withBenchSystem("restart-latency") { system in
        let treeSamples = LatencySamples()
        let tree = try! system.spawn(Supervisor.behavior(
            strategy: .oneForOne, intensity: failures * 2, period: .seconds(3_600),
            children: [ChildSpec(id: "child") { latencyChild(treeSamples) }]), name: "tree")
        let childRef = askChild(of: tree)
        let ruleSamples = LatencySamples()
        let ruled = try! system.spawn(
            .supervise(latencyChild(ruleSamples)).onFailure(SupervisorStrategy.restart.withLogging(false)), name: "ruled")
        let start = MonotonicClock.nanoseconds()
        let treeOK = childRef.map { measure($0, treeSamples) } ?? false
        let ruleOK = measure(ruled, ruleSamples)
        let seconds = Double(MonotonicClock.nanoseconds() - start) / 1e9
        let tree50 = percentile(treeSamples.all, 0.5), tree99 = percentile(treeSamples.all, 0.99)
        var result = BenchmarkResult(seconds: seconds, msgs: failures * 2, ok: treeOK && ruleOK && treeSamples.all.count == failures)
        result.extra.append(("p50_us", .double(tree50, decimals: 2)))
        result.extra.append(("p99_us", .double(tree99, decimals: 2)))
        result.extra.append(("p999_us", .double(percentile(treeSamples.all, 0.999), decimals: 2)))
        result.extra.append(("rule_p50_us", .double(percentile(ruleSamples.all, 0.5), decimals: 2)))
        result.extra.append(("rule_p99_us", .double(percentile(ruleSamples.all, 0.99), decimals: 2)))
        result.extra.append(("target_p99_us", .int(100)))
        return result
    }
}

/// The supervisor's child, asked with a blocking wait (benchmark set-up only).
func askChild(of supervisor: ActorRef<SupervisorMessage>) -> ActorRef<FailingWork>? {
    runBlocking {
        let child = try? await supervisor.ask(timeout: .seconds(10)) { (replyTo: ActorRef<AnyActorRef?>) in
            SupervisorMessage.child(id: "child", replyTo: replyTo)
        }
        return (child ?? nil)?.typed(as: FailingWork.self)
    }
}

func failureThroughput(workers: Int, total: Int) -> BenchmarkResult {
    let perWorker = total / workers
    let messages = perWorker * workers
    let failuresPerRun = (0..<perWorker).filter { $0 % 100 == 99 }.count * workers
    /// One run: N messages through a fresh tree; returns seconds and failures seen.
    func run(failing: Bool) -> (seconds: Double, restarts: Int) {
        withBenchSystem("failure-throughput") { system in
            let finished = Countdown(messages)
            let specs = (0..<workers).map { index in
                ChildSpec(id: "w\(index)") {
                    Behavior<FailingWork>.setup { _ in
                        var handled = 0
                        return .receiveMessage { message in
                            guard case let .value(value) = message else { return .same }
                            finished.arrive()
                            if failing, value % 100 == 99 { throw InjectedBenchmarkFailure() }
                            handled &+= value
                            return .same
                        }
                    }
                }
            }
            let restarts = Atomic<Int>(0)
            system.events.observeValues { event in
                if case let .supervised(decision) = event, decision.decider == .supervisor {
                    restarts.wrappingAdd(1, ordering: .relaxed)
                }
            }
            let tree = try! system.spawn(Supervisor.behavior(
                strategy: .oneForOne, intensity: messages, period: .seconds(3_600), children: specs), name: "tree")
            let refs: [ActorRef<FailingWork>] = runBlocking {
                let children = try? await tree.ask(timeout: .seconds(10)) { (replyTo: ActorRef<[SupervisedChild]>) in
                    SupervisorMessage.whichChildren(replyTo: replyTo)
                }
                return (children ?? []).compactMap { $0.ref?.typed(as: FailingWork.self) }
            }
            precondition(refs.count == workers, "the tree did not report its workers")
            let seconds = MonotonicClock.measure {
                for value in 0..<perWorker {
                    for ref in refs { ref.tell(.value(value)) }
                }
                finished.wait()
            }.seconds
            // The last failure's decision may be published just after its message was counted.
            let deadline = MonotonicClock.nanoseconds() + 5_000_000_000
            while failing, restarts.load(ordering: .relaxed) < failuresPerRun, MonotonicClock.nanoseconds() < deadline {
                sched_yield()
            }
            return (seconds, restarts.load(ordering: .relaxed))
        }
    }
    var restartsSeen = 0
    let (ours, baseline) = interleavedMedians(rounds: comparisonRounds, ours: {
        let outcome = run(failing: true)
        restartsSeen = outcome.restarts
        return outcome.seconds
    }, baseline: {
        run(failing: false).seconds
    })
    var result = BenchmarkResult(seconds: ours, msgs: messages, baseline: .init(name: "same-tree-no-failures", seconds: baseline),
                                 ok: restartsSeen == failuresPerRun)
    result.extra.append(("workers", .int(workers)))
    result.extra.append(("failures", .int(failuresPerRun)))
    result.extra.append(("throughput_fraction", .double(baseline / ours, decimals: 3)))
    result.extra.append(("target_fraction", .double(0.8, decimals: 2)))
    return result
}
