import Mailbox

// Routing benchmarks, each against a same-run baseline:
//
//   router-round-robin  N   N messages through a round-robin pool router to 4 routees;
//                           baseline: the same sender telling 4 actors in turn, directly
//   router-hashing      N   N messages through a consistent-hashing pool router to 4 routees
//                           (key: the message modulo 1,024, as a string);
//                           baseline: the round-robin pool router
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
