import Dispatch
import Testing
@testable import Mailbox

// `SignalProducer.drain(into:…)`: a producer drained into an actor with back-pressure (Akka's
// `ActorSink.actorRefWithBackpressure`). Deterministic on a `TestScheduler` unless the test
// says otherwise.

struct DrainAck: Sendable {}

enum DrainMessage: Sendable {
    case start(ackTo: ActorRef<DrainAck>)
    case value(Int, ackTo: ActorRef<DrainAck>)
    case done
    case failed(DrainError<TestError>)
}

/// The actor side of a drain under test: a log of what it was told ("init", "1", "done",
/// "failed: …") and the latest ack ref, so the test decides when to acknowledge.
final class DrainProbe: Sendable {
    let log = Inbox<String>()
    let ackTo = Locked<ActorRef<DrainAck>?>(nil)

    /// Acknowledges through the latest ack ref (as the actor would).
    @discardableResult
    func ack() -> TellResult? {
        ackTo.snapshot?.tell(DrainAck())
    }

    /// Records every message; acks at once when `autoAck` (from inside the handler); stops on
    /// value `stopOn`.
    func behavior(autoAck: Bool = false, stopOn: Int? = nil) -> Behavior<DrainMessage> {
        .receiveMessage { [self] message in
            switch message {
            case let .start(ackTo):
                log.record("init")
                ackTo_(ackTo, autoAck)
            case let .value(value, ackTo):
                log.record("\(value)")
                if value == stopOn { return .stopped }
                ackTo_(ackTo, autoAck)
            case .done:
                log.record("done")
            case let .failed(error):
                log.record("failed: \(error.drainFailure?.code.description ?? "\(error)")")
            }
            return .same
        }
    }

    private func ackTo_(_ ref: ActorRef<DrainAck>, _ autoAck: Bool) {
        ackTo.withLock { $0 = ref }
        if autoAck { ref.tell(DrainAck()) }
    }
}

extension SignalProducer where Value == Int, Error == TestError {
    /// This producer drained into `target` with the `DrainMessage` protocol.
    func drainForTest(
        into target: ActorRef<DrainMessage>, bufferLimit: Int = 1_024, overflow: DrainOverflow = .fail
    ) -> SignalProducer<Int, DrainError<TestError>> {
        drain(
            into: target, bufferLimit: bufferLimit, overflow: overflow,
            onInit: { .start(ackTo: $0) },
            makeMessage: { ackTo, value in .value(value, ackTo: ackTo) },
            onComplete: .done,
            onFailure: { .failed($0) })
    }
}

/// A producer forwarding a pipe, which records whether its run has ended.
func observedPipe() -> (producer: SignalProducer<Int, TestError>, input: Signal<Int, TestError>.Observer, ended: Locked<Bool>) {
    let (signal, input) = Signal<Int, TestError>.pipe()
    let ended = Locked(false)
    let producer = SignalProducer<Int, TestError> { observer, lifetime in
        lifetime.observeEnded { ended.withLock { $0 = true } }
        lifetime += signal.observe(observer)
    }
    return (producer, input, ended)
}

@Suite("Bridges: producer.drain(into:) with back-pressure")
struct DrainIntoActorTests {
    @Test func drain_tellsInitFirst_andNoValueBeforeTheFirstAck() throws {
        let (system, scheduler) = makeTestSystem()
        let probe = DrainProbe()
        let sink = try system.spawn(probe.behavior(), name: "sink")
        let (upstream, input, _) = observedPipe()
        upstream.drainForTest(into: sink).start()
        input.send(value: 1)
        input.send(value: 2)
        scheduler.runDue()
        #expect(probe.log.values == ["init"])
        probe.ack()
        scheduler.runDue()
        #expect(probe.log.values == ["init", "1"])
    }

    @Test func drain_sendsEachValueOnlyAfterTheAckOfThePrevious_inOrder_andEmitsAckedValues() throws {
        let (system, scheduler) = makeTestSystem()
        let probe = DrainProbe()
        let sink = try system.spawn(probe.behavior(), name: "sink")
        let (upstream, input, _) = observedPipe()
        let outcome = EventRecorder<Int, DrainError<TestError>>()
        upstream.drainForTest(into: sink).start(outcome.observer)
        for value in 1...3 { input.send(value: value) }
        scheduler.runDue()
        probe.ack()                                  // the init
        scheduler.runDue()
        #expect(probe.log.values == ["init", "1"])
        #expect(outcome.values == [])                // 1 is not acknowledged yet
        probe.ack()
        scheduler.runDue()
        #expect(probe.log.values == ["init", "1", "2"])
        #expect(outcome.values == [1])
        probe.ack()
        scheduler.runDue()
        probe.ack()
        scheduler.runDue()
        #expect(probe.log.values == ["init", "1", "2", "3"])
        #expect(outcome.values == [1, 2, 3])
        #expect(!outcome.hasTerminated)
    }

    @Test func spareAcks_areRememberedAsDemandForOneValue_notCounted() throws {
        let (system, scheduler) = makeTestSystem()
        let probe = DrainProbe()
        let sink = try system.spawn(probe.behavior(), name: "sink")
        let (upstream, input, _) = observedPipe()
        upstream.drainForTest(into: sink).start()
        scheduler.runDue()
        probe.ack()                                  // the init
        probe.ack()                                  // spare: nothing awaits an ack
        probe.ack()                                  // spare again
        input.send(value: 1)                         // sent at once: the actor asked for one
        input.send(value: 2)                         // waits: demand was one, not three
        scheduler.runDue()
        #expect(probe.log.values == ["init", "1"])
    }

    @Test func completion_isToldOnlyAfterTheLastValueIsAcked() throws {
        let (system, scheduler) = makeTestSystem()
        let probe = DrainProbe()
        let sink = try system.spawn(probe.behavior(), name: "sink")
        let (upstream, input, _) = observedPipe()
        let outcome = EventRecorder<Int, DrainError<TestError>>()
        upstream.drainForTest(into: sink).start(outcome.observer)
        input.send(value: 1)
        input.send(value: 2)
        input.sendCompleted()
        scheduler.runDue()
        probe.ack()                                  // the init
        scheduler.runDue()
        probe.ack()
        scheduler.runDue()
        #expect(probe.log.values == ["init", "1", "2"])
        #expect(!outcome.hasTerminated)              // 2 awaits its ack
        probe.ack()
        scheduler.runDue()
        #expect(probe.log.values == ["init", "1", "2", "done"])
        #expect(outcome.values == [1, 2])
        #expect(outcome.isCompleted)
    }

    @Test func anUpstreamCompletingWhileTheLastValueAwaitsItsAck_completesAfterThatAck() throws {
        // Akka tells `onCompleteMessage` at once here (the mailbox keeps it behind the value);
        // Mailbox waits for the ack, so the actor never sees the end before it is done.
        let (system, scheduler) = makeTestSystem()
        let probe = DrainProbe()
        let sink = try system.spawn(probe.behavior(), name: "sink")
        let (upstream, input, _) = observedPipe()
        let outcome = EventRecorder<Int, DrainError<TestError>>()
        upstream.drainForTest(into: sink).start(outcome.observer)
        scheduler.runDue()
        probe.ack()
        input.send(value: 1)                         // told at once: the actor asked
        input.sendCompleted()
        scheduler.runDue()
        #expect(probe.log.values == ["init", "1"])
        #expect(!outcome.hasTerminated)
        probe.ack()
        scheduler.runDue()
        #expect(probe.log.values == ["init", "1", "done"])
        #expect(outcome.isCompleted)
    }

    @Test func anEmptyUpstream_completesAfterTheInitIsAcked() throws {
        let (system, scheduler) = makeTestSystem()
        let probe = DrainProbe()
        let sink = try system.spawn(probe.behavior(), name: "sink")
        let outcome = EventRecorder<Int, DrainError<TestError>>()
        SignalProducer<Int, TestError>.empty.drainForTest(into: sink).start(outcome.observer)
        scheduler.runDue()
        #expect(probe.log.values == ["init"])
        #expect(!outcome.hasTerminated)
        probe.ack()
        scheduler.runDue()
        #expect(probe.log.values == ["init", "done"])
        #expect(outcome.isCompleted)
    }

    @Test func upstreamFailure_isToldAtOnce_mapped_andFailsTheDrain() throws {
        let (system, scheduler) = makeTestSystem()
        let probe = DrainProbe()
        let sink = try system.spawn(probe.behavior(), name: "sink")
        let (upstream, input, _) = observedPipe()
        let outcome = EventRecorder<Int, DrainError<TestError>>()
        let told = Locked<[DrainError<TestError>]>([])
        upstream.drain(
            into: sink, onInit: { .start(ackTo: $0) }, makeMessage: { .value($1, ackTo: $0) }, onComplete: .done,
            onFailure: { error in
                told.append(error)
                return .failed(error)
            }
        ).start(outcome.observer)
        scheduler.runDue()
        probe.ack()
        input.send(value: 1)                         // sent, awaiting its ack
        input.send(value: 2)                         // buffered
        input.send(error: TestError(code: 7))        // told at once; 2 is discarded, as in Akka
        scheduler.runDue()
        #expect(probe.log.values == ["init", "1", "failed: producer failed: TestError(code: 7)"])
        #expect(told.snapshot == [.producerFailed(TestError(code: 7))])
        #expect(outcome.error == .producerFailed(TestError(code: 7)))
        #expect(outcome.values == [])
    }

    @Test func disposingTheDrain_stopsSending_interruptsTheUpstream_andTellsTheActorInterrupted() throws {
        let (system, scheduler) = makeTestSystem()
        let probe = DrainProbe()
        let sink = try system.spawn(probe.behavior(), name: "sink")
        let (upstream, input, ended) = observedPipe()
        let outcome = EventRecorder<Int, DrainError<TestError>>()
        let drain = upstream.drainForTest(into: sink).start(outcome.observer)
        scheduler.runDue()
        probe.ack()
        input.send(value: 1)
        input.send(value: 2)                         // buffered
        scheduler.runDue()
        drain.dispose()
        #expect(ended.snapshot)                      // the upstream run was interrupted
        #expect(outcome.isInterrupted)
        let deadLetters = system.deadLetterCount
        #expect(probe.ack() == .dropped(.noRecipient))   // the ack of 1 comes too late
        input.send(value: 3)
        scheduler.runDue()
        // 2 and 3 were never told; the actor hears of the end, but not as a completion.
        #expect(probe.log.values == ["init", "1", "failed: interrupted"])
        #expect(system.deadLetterCount == deadLetters + 1)
    }

    @Test func anInterruptedUpstream_tellsTheActorInterrupted_andInterruptsTheDrain() throws {
        let (system, scheduler) = makeTestSystem()
        let probe = DrainProbe()
        let sink = try system.spawn(probe.behavior(), name: "sink")
        let (upstream, input, _) = observedPipe()
        let outcome = EventRecorder<Int, DrainError<TestError>>()
        upstream.drainForTest(into: sink).start(outcome.observer)
        input.sendInterrupted()
        scheduler.runDue()
        #expect(probe.log.values == ["init", "failed: interrupted"])
        #expect(outcome.isInterrupted)
    }

    @Test func theTargetTerminating_interruptsTheUpstream_andFailsTheDrain() throws {
        let (system, scheduler) = makeTestSystem()
        let probe = DrainProbe()
        let sink = try system.spawn(probe.behavior(autoAck: true, stopOn: 2), name: "sink")
        let (upstream, input, ended) = observedPipe()
        let outcome = EventRecorder<Int, DrainError<TestError>>()
        upstream.drainForTest(into: sink).start(outcome.observer)
        scheduler.runDue()
        input.send(value: 1)
        scheduler.runDue()
        #expect(!ended.snapshot)
        input.send(value: 2)                         // the actor stops on it
        input.send(value: 3)                         // buffered, never told
        scheduler.runDue()
        #expect(ended.snapshot)
        #expect(outcome.values == [1])
        #expect(outcome.error?.drainFailure?.code == .targetTerminated)
        #expect(outcome.error?.drainFailure?.target == sink.address)
        #expect(probe.log.values == ["init", "1", "2"])
    }

    @Test func drainingIntoATerminatedActor_failsAtOnce_withoutStartingTheUpstream() throws {
        let (system, scheduler) = makeTestSystem()
        let sink = try system.spawn(Behavior<DrainMessage>.receiveMessage { _ in .stopped }, name: "gone")
        sink.tell(.done)
        scheduler.runDue()
        let started = Locked(false)
        let upstream = SignalProducer<Int, TestError> { _, _ in started.withLock { $0 = true } }
        let outcome = EventRecorder<Int, DrainError<TestError>>()
        upstream.drainForTest(into: sink).start(outcome.observer)
        scheduler.runDue()
        #expect(outcome.error?.drainFailure?.code == .targetTerminated)
        #expect(!started.snapshot)
    }

    @Test func overflowFail_tellsTheActor_failsTheDrain_andStopsASynchronousUpstream() throws {
        let (system, scheduler) = makeTestSystem()
        let probe = DrainProbe()
        let sink = try system.spawn(probe.behavior(), name: "sink")
        let pushed = Locked(0)
        let upstream = SignalProducer<Int, TestError> { observer, lifetime in
            for value in 1...100 where !lifetime.hasEnded {
                pushed.increment()
                observer.send(value: value)
            }
            observer.sendCompleted()
        }
        let outcome = EventRecorder<Int, DrainError<TestError>>()
        upstream.drainForTest(into: sink, bufferLimit: 3).start(outcome.observer)
        scheduler.runDue()
        // Nothing was acked: 1, 2, 3 fill the buffer, 4 overflows, the upstream stops there.
        #expect(pushed.snapshot == 4)
        #expect(outcome.error?.drainFailure?.code == .bufferOverflow)
        #expect(outcome.error?.drainFailure?.bufferLimit == 3)
        #expect(probe.log.values == ["init", "failed: bufferOverflow"])
    }

    @Test func overflowDropNewest_keepsTheBufferedValues() throws {
        let (system, scheduler) = makeTestSystem()
        let probe = DrainProbe()
        let sink = try system.spawn(probe.behavior(), name: "sink")
        let outcome = EventRecorder<Int, DrainError<TestError>>()
        SignalProducer<Int, TestError>(1...6).drainForTest(into: sink, bufferLimit: 2, overflow: .dropNewest).start(outcome.observer)
        for _ in 0..<4 {
            scheduler.runDue()
            probe.ack()
        }
        scheduler.runDue()
        #expect(probe.log.values == ["init", "1", "2", "done"])
        #expect(outcome.values == [1, 2])
        #expect(outcome.isCompleted)
    }

    @Test func overflowDropOldest_keepsTheNewestValues() throws {
        let (system, scheduler) = makeTestSystem()
        let probe = DrainProbe()
        let sink = try system.spawn(probe.behavior(), name: "sink")
        let outcome = EventRecorder<Int, DrainError<TestError>>()
        SignalProducer<Int, TestError>(1...6).drainForTest(into: sink, bufferLimit: 2, overflow: .dropOldest).start(outcome.observer)
        for _ in 0..<4 {
            scheduler.runDue()
            probe.ack()
        }
        scheduler.runDue()
        #expect(probe.log.values == ["init", "5", "6", "done"])
        #expect(outcome.values == [5, 6])
    }

    @Test func bufferLimitZero_sendsOnlyWhatArrivesWhileTheActorAsks() throws {
        let (system, scheduler) = makeTestSystem()
        let probe = DrainProbe()
        let sink = try system.spawn(probe.behavior(), name: "sink")
        let (upstream, input, _) = observedPipe()
        upstream.drainForTest(into: sink, bufferLimit: 0, overflow: .dropNewest).start()
        input.send(value: 1)                         // the init awaits its ack: dropped
        probe.ack()
        scheduler.runDue()
        probe.ack()
        input.send(value: 2)                         // the actor asks: sent
        input.send(value: 3)                         // 2 awaits its ack: dropped
        scheduler.runDue()
        #expect(probe.log.values == ["init", "2"])
    }

    @Test func aRefusedMessage_endsTheDrainAsNotDelivered() throws {
        let (system, scheduler) = makeTestSystem()
        let probe = DrainProbe()
        let sink = try system.spawn(probe.behavior(), name: "small",
                                    props: Props(mailbox: .bounded(capacity: 1, overflow: .dropNewest)))
        sink.tell(.done)                             // fills the mailbox
        let started = Locked(false)
        let upstream = SignalProducer<Int, TestError> { _, _ in started.withLock { $0 = true } }
        let outcome = EventRecorder<Int, DrainError<TestError>>()
        upstream.drainForTest(into: sink).start(outcome.observer)
        let failure = outcome.error?.drainFailure
        #expect(failure?.code == .notDelivered)
        #expect(failure?.deliveryFailure == .mailboxFull(.dropNewest))
        #expect(!started.snapshot)                   // the init was refused: nothing to drain
        scheduler.runDue()
        #expect(probe.log.values == ["done"])      // neither the init nor the failure fitted
    }

    @Test func eachStart_isItsOwnConversation_withItsOwnAckRef() throws {
        let (system, scheduler) = makeTestSystem()
        let refs = Locked<[ActorRef<DrainAck>]>([])
        let sink = try system.spawn(Behavior<DrainMessage>.receiveMessage { message in
            if case let .start(ackTo) = message { refs.append(ackTo) }
            return .same
        }, name: "sink")
        let drain = SignalProducer<Int, TestError>(value: 1).drainForTest(into: sink)
        drain.start()
        drain.start()
        scheduler.runDue()
        #expect(refs.snapshot.count == 2)
        #expect(refs.snapshot.first != refs.snapshot.last)
    }

    // MARK: Re-entrance

    @Test func anActorAckingSynchronouslyInsideTheTell_neitherDeadlocksNorRecurses() throws {
        // On an `ImmediateScheduler` the actor runs inside the drain's `tell` and acknowledges
        // from there: the ack re-enters the drain on the same thread, which must queue it.
        let system = ActorSystem(name: "inline", configuration: .init(scheduler: ImmediateScheduler(), logHandler: nil))
        let probe = DrainProbe()
        let sink = try system.spawn(probe.behavior(autoAck: true), name: "sink")
        let outcome = EventRecorder<Int, DrainError<TestError>>()
        SignalProducer<Int, TestError>(1...200).drainForTest(into: sink, bufferLimit: 1).start(outcome.observer)
        #expect(outcome.values == Array(1...200))
        #expect(outcome.isCompleted)
        #expect(probe.log.values == ["init"] + (1...200).map { "\($0)" } + ["done"])
    }

    @Test func anObserverOfTheDrain_mayDisposeItAndTellTheActor_fromInsideAnEvent() throws {
        let system = ActorSystem(name: "inline", configuration: .init(scheduler: ImmediateScheduler(), logHandler: nil))
        let probe = DrainProbe()
        let sink = try system.spawn(probe.behavior(autoAck: true), name: "sink")
        let (upstream, input, ended) = observedPipe()
        let seen = Locked<[Int]>([])
        upstream.drainForTest(into: sink)
            .take(first: 2)                          // disposes the drain inside the 2nd value
            .startWithResult { result in
                if case let .success(value) = result {
                    seen.append(value)
                    sink.tell(.done)                 // re-enters the actor from the drain's event
                }
            }
        for value in 1...4 { input.send(value: value) }
        #expect(seen.snapshot == [1, 2])
        #expect(ended.snapshot)
        #expect(probe.log.values == ["init", "1", "done", "2", "done", "failed: interrupted"])
    }

    // MARK: Threads

    @Test func manyValuesFromAnotherThread_toAnActorOnThePool_arriveInOrder_andComplete() async throws {
        let system = ActorSystem(name: "pool", configuration: .init(poolWorkerCount: 2, logHandler: nil))
        let probe = DrainProbe()
        let sink = try system.spawn(probe.behavior(autoAck: true), name: "sink")
        let (upstream, input, _) = observedPipe()
        let values = Inbox<Int>()
        let finished = AsyncGate()
        upstream.drainForTest(into: sink, bufferLimit: 10_000).start { event in
            switch event {
            case let .value(value): values.record(value)
            case .completed: finished.open(true)
            case .failed, .interrupted: finished.open(false)
            }
        }
        let count = 5_000
        DispatchQueue.global().async {
            for value in 1...count { input.send(value: value) }
            input.sendCompleted()
        }
        #expect(await finished.wait())
        #expect(values.values == Array(1...count))
        #expect(await probe.log.waitForCount(count + 2))
        #expect(probe.log.values.last == "done")
        #expect(probe.log.values.count == count + 2)
        await system.shutdown()
    }

    // MARK: Preconditions

    @Test func aNegativeBufferLimit_isAPreconditionFailure() async {
        await #expect(processExitsWith: .failure) {
            let system = ActorSystem(name: "p", configuration: .init(scheduler: TestScheduler(), logHandler: nil))
            let sink = try system.spawn(Behavior<DrainMessage>.ignore, name: "sink")
            _ = SignalProducer<Int, TestError>.empty.drainForTest(into: sink, bufferLimit: -1)
        }
    }
}
