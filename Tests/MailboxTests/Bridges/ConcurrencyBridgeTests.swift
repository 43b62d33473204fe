import Testing
@testable import Mailbox

@Suite("Bridges: async/await and AsyncSequence")
struct ConcurrencyBridgeTests {
    @Test func forAwaitOverSignalValues_getsEachValue_andEndsWithTheSignal() async {
        let (signal, input) = Signal<Int, Never>.pipe()
        let values = signal.values             // observes from here on
        input.send(value: 1)
        input.send(value: 2)
        input.send(value: 3)
        input.sendCompleted()
        var seen: [Int] = []
        for await value in values { seen.append(value) }
        #expect(seen == [1, 2, 3])
    }

    @Test func failingSignalValues_throwTheError() async {
        let (signal, input) = Signal<Int, TestError>.pipe()
        let values = signal.values
        input.send(value: 1)
        input.send(error: TestError())
        var seen: [Int] = []
        await #expect(throws: TestError.self) {
            for try await value in values { seen.append(value) }
        }
        #expect(seen == [1])
    }

    @Test func signalValues_defaultBufferIsBounded_keepingTheNewest() async {
        let (signal, input) = Signal<Int, Never>.pipe()
        let values = signal.values
        for value in 0..<(StreamValues.defaultBufferLimit + 100) { input.send(value: value) }
        input.sendCompleted()
        var seen: [Int] = []
        for await value in values { seen.append(value) }
        #expect(seen.count == StreamValues.defaultBufferLimit)
        #expect(seen.first == 100)
        #expect(seen.last == StreamValues.defaultBufferLimit + 99)
    }

    @Test func signalValues_withAnExplicitPolicy() async {
        let (signal, input) = Signal<Int, Never>.pipe()
        let values = signal.values(bufferingPolicy: .bufferingOldest(2))
        for value in 1...5 { input.send(value: value) }
        input.sendCompleted()
        var seen: [Int] = []
        for await value in values { seen.append(value) }
        #expect(seen == [1, 2])
    }

    @Test func cancellingTheIteration_endsTheLoop_andDetachesFromTheSignal() async {
        let torn = Inbox<Bool>()
        let input = Locked<Signal<Int, Never>.Observer?>(nil)
        // Only the sequence refers to the signal: once it detaches, the signal is torn down.
        let values = Signal<Int, Never> { observer, lifetime in
            input.withLock { $0 = observer }
            lifetime.observeEnded { torn.record(true) }
        }.values
        let received = Inbox<Int>()
        let task = Task {
            for await value in values { received.record(value) }
            return "loop ended"
        }
        input.snapshot?.send(value: 1)
        #expect(await received.waitForCount(1))
        #expect(torn.values.isEmpty)
        task.cancel()
        #expect(await task.value == "loop ended")
        #expect(await torn.waitForCount(1))
    }

    @Test func producerFirst_returnsTheFirstValue_theError_orNil() async throws {
        #expect(try await SignalProducer<Int, TestError>([4, 5]).first() == 4)
        await #expect(throws: TestError.self) { try await SignalProducer<Int, TestError>(error: TestError()).first() }
        #expect(try await SignalProducer<Int, TestError>.empty.first() == nil)
        #expect(await SignalProducer<Int, Never>(value: 9).first() == 9)
    }

    @Test func producerFirst_cancelled_interruptsTheRun_andReturnsNil() async throws {
        let ended = Inbox<Bool>()
        let never = SignalProducer<Int, TestError> { _, lifetime in
            lifetime.observeEnded { ended.record(true) }
        }
        let task = Task { try await never.first() }
        task.cancel()
        #expect(try await task.value == nil)
        #expect(await ended.waitForCount(1))
    }

    @Test func producerValues_forAwait() async throws {
        var seen: [Int] = []
        for try await value in SignalProducer<Int, TestError>([1, 2, 3]).values { seen.append(value) }
        #expect(seen == [1, 2, 3])
        var plain: [Int] = []
        for await value in SignalProducer<Int, Never>([4, 5]).values { plain.append(value) }
        #expect(plain == [4, 5])
    }

    @Test func producerFromAsyncSequence_sendsEachElement_thenCompletes() async {
        let (stream, continuation) = AsyncStream.makeStream(of: Int.self, bufferingPolicy: .bufferingOldest(16))
        for value in 1...3 { continuation.yield(value) }
        continuation.finish()
        let events = Inbox<String>()
        SignalProducer(stream).start { events.record("\($0)") }
        #expect(await events.waitForCount(4))
        #expect(events.values == ["\(Event<Int, Never>.value(1))", "\(Event<Int, Never>.value(2))", "\(Event<Int, Never>.value(3))", "\(Event<Int, Never>.completed)"])
    }

    @Test func producerFromThrowingSequence_failsWithItsError() async {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: Int.self, throwing: (any Error).self)
        continuation.yield(1)
        continuation.finish(throwing: TestError())
        let failed = Inbox<Bool>()
        SignalProducer<Int, any Error>(stream).startWithFailed { failed.record($0 is TestError) }
        #expect(await failed.waitForCount(1))
        #expect(failed.values == [true])
    }

    @Test func disposingTheProducer_cancelsTheIteration() async {
        let (stream, continuation) = AsyncStream.makeStream(of: Int.self, bufferingPolicy: .bufferingOldest(16))
        let terminations = Inbox<String>()
        continuation.onTermination = { termination in
            if case .cancelled = termination { terminations.record("cancelled") } else { terminations.record("finished") }
        }
        let received = Inbox<Int>()
        let run = SignalProducer(stream).startWithValues { received.record($0) }
        continuation.yield(1)
        #expect(await received.waitForCount(1))
        run.dispose()
        #expect(await terminations.waitForCount(1))
        #expect(terminations.values == ["cancelled"])
    }

    @Test func signalMakeStream_feedsTheSignalThroughABoundedBuffer() async {
        let (signal, continuation) = Signal<Int, Never>.makeStream()
        let events = Inbox<String>()
        signal.observe { events.record("\($0)") }
        continuation.yield(1)
        continuation.yield(2)
        continuation.finish()
        #expect(await events.waitForCount(3))
        #expect(events.values == ["\(Event<Int, Never>.value(1))", "\(Event<Int, Never>.value(2))", "\(Event<Int, Never>.completed)"])
    }

    /// Monitoring is a stream like any other: the system's events through `for await`.
    @Test func systemEvents_asAnAsyncSequence() async throws {
        let (system, scheduler) = makeTestSystem()
        let events = system.events.values
        let ref = try system.spawn(Behavior<Int>.receiveMessage { _ in .stopped }, name: "brief")
        ref.tell(1)
        ref.tell(2)
        scheduler.runDue()
        system.beginShutdown()
        scheduler.runDue()
        await system.shutdown()                // completes the events signal
        var seen: [String] = []
        for await event in events { seen.append(event.description) }
        #expect(seen == ["spawned /user/brief", "stopped /user/brief", "dead letter to /user/brief (recipient terminated): 2"])
    }
}
