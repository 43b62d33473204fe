import Dispatch
import Mailbox
import Synchronization

// Bridge benchmarks (actors ↔ streams), each against a same-run baseline without the bridge:
//
//   bind-tell       N   `ref <~ signal`, N values sent through the signal to a counting actor;
//                       baseline: the same actor told N messages in a plain `tell` loop
//   store-dispatch  N   N `dispatch`es to a Store<Int, Int> with one observer of `store.state`;
//                       baseline: a hand-written actor with the same reducer, told N messages
//   ask-producer    N   N sequential asks, each `try await ref.askProducer(…).first()`;
//                       baseline: N sequential `try await ref.ask(…)`
//
// Each alternates rounds of ours and the baseline and reports medians (`interleavedMedians`).

extension BenchmarkRegistry {
    static let bridges: [Benchmark] = [
        Benchmark(
            "bind-tell",
            summary: "N values through `ref <~ signal` to a counting actor; baseline: the same actor told N messages in a tell loop",
            parameters: [.init("N", default: 5_000_000)]
        ) { sizes in
            bindTell(count: sizes[0])
        },
        Benchmark(
            "store-dispatch",
            summary: "N dispatches to a Store with one observer of store.state; baseline: an actor with the same reducer told N messages",
            parameters: [.init("N", default: 2_000_000)]
        ) { sizes in
            storeDispatch(count: sizes[0])
        },
        Benchmark(
            "ask-producer",
            summary: "N sequential asks as `askProducer(…).first()`; baseline: N sequential `async` asks",
            parameters: [.init("N", default: 200_000)]
        ) { sizes in
            askProducer(count: sizes[0])
        },
    ]
}

// MARK: - bind-tell

/// Counts messages; arrives at `done` after the `expected`-th.
func countingReceiver(expected: Int, done: Countdown) -> Behavior<Int> {
    .setup { _ in
        var received = 0
        return .receiveMessage { _ in
            received &+= 1
            if received == expected { done.arrive() }
            return .same
        }
    }
}

func bindTell(count: Int) -> BenchmarkResult {
    withBenchSystem("bind-tell") { system in
        var round = 0
        let medians = interleavedMedians(
            rounds: comparisonRounds,
            ours: {
                round += 1
                let done = Countdown(1)
                let ref = try! system.spawn(countingReceiver(expected: count, done: done), name: "bound\(round)")
                let (signal, input) = Signal<Int, Never>.pipe()
                ref <~ signal
                let seconds = MonotonicClock.measure {
                    for value in 0..<count { input.send(value: value) }
                    done.wait()
                }.seconds
                input.sendCompleted()
                return seconds
            },
            baseline: {
                round += 1
                let done = Countdown(1)
                let ref = try! system.spawn(countingReceiver(expected: count, done: done), name: "told\(round)")
                return MonotonicClock.measure {
                    for value in 0..<count { ref.tell(value) }
                    done.wait()
                }.seconds
            }
        )
        return BenchmarkResult(seconds: medians.ours, msgs: count, baseline: .init(name: "tell-loop", seconds: medians.baseline), ok: true)
    }
}

// MARK: - store-dispatch

func storeDispatch(count: Int) -> BenchmarkResult {
    withBenchSystem("store-dispatch") { system in
        var round = 0
        let reducer: @Sendable (Int, Int) -> Int = { state, input in state &+ input }
        let medians = interleavedMedians(
            rounds: comparisonRounds,
            ours: {
                round += 1
                let done = Countdown(1)
                let store = try! Store<Int, Int>(system: system, name: "store\(round)", initialState: 0, reducer: reducer)
                store.state.signal.observeValues { if $0 == count { done.arrive() } }
                let seconds = MonotonicClock.measure {
                    for _ in 0..<count { store.dispatch(1) }
                    done.wait()
                }.seconds
                store.stop()
                return seconds
            },
            baseline: {
                round += 1
                let done = Countdown(1)
                let ref = try! system.spawn(Behavior<Int>.setup { _ in
                    var state = 0
                    return .receiveMessage { input in
                        state = reducer(state, input)
                        if state == count { done.arrive() }
                        return .same
                    }
                }, name: "reducer\(round)")
                return MonotonicClock.measure {
                    for _ in 0..<count { ref.tell(1) }
                    done.wait()
                }.seconds
            }
        )
        return BenchmarkResult(seconds: medians.ours, msgs: count, baseline: .init(name: "reducer-actor", seconds: medians.baseline), ok: true)
    }
}

// MARK: - ask-producer

enum EchoMessage: Sendable {
    case echo(Int, replyTo: ActorRef<Int>)
}

func askProducer(count: Int) -> BenchmarkResult {
    withBenchSystem("ask-producer") { system in
        let echo = try! system.spawn(Behavior<EchoMessage>.receiveMessage { message in
            guard case let .echo(value, replyTo) = message else { return .same }
            replyTo.tell(value)
            return .same
        }, name: "echo")
        let ok = Atomic<Bool>(true)
        let medians = interleavedMedians(
            rounds: comparisonRounds,
            ours: {
                runBlocking {
                    let start = MonotonicClock.nanoseconds()
                    for value in 0..<count {
                        let reply = try? await echo.askProducer(timeout: .seconds(10)) { EchoMessage.echo(value, replyTo: $0) }.first()
                        if reply != value { ok.store(false, ordering: .relaxed) }
                    }
                    return Double(MonotonicClock.nanoseconds() - start) / 1e9
                }
            },
            baseline: {
                runBlocking {
                    let start = MonotonicClock.nanoseconds()
                    for value in 0..<count {
                        let reply = try? await echo.ask(timeout: .seconds(10)) { EchoMessage.echo(value, replyTo: $0) }
                        if reply != value { ok.store(false, ordering: .relaxed) }
                    }
                    return Double(MonotonicClock.nanoseconds() - start) / 1e9
                }
            }
        )
        return BenchmarkResult(seconds: medians.ours, msgs: count, baseline: .init(name: "async-ask", seconds: medians.baseline), ok: ok.load(ordering: .relaxed))
    }
}
