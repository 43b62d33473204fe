import Testing
@testable import Mailbox

// `SignalProducer.actorSource(spawningIn:…)`: a producer whose every start spawns an actor and
// sends what it is told (Akka's `ActorSource.actorRef` / `actorRefWithBackpressure`).

enum Feed: Sendable, Equatable {
    case tick(Int)
    case end
    case broken(Int)
}

extension SignalProducer where Value == Feed, Error == TestError {
    /// A source completed by `.end` and failed by `.broken(code)`, recording each spawned ref.
    static func feed(in system: ActorSystem, name: String? = nil, props: Props = Props(), refs: Locked<[ActorRef<Feed>]>) -> SignalProducer {
        actorSource(
            spawningIn: system, name: name, props: props,
            completeOn: { $0 == .end },
            failOn: { message in
                if case let .broken(code) = message { return TestError(code: code) }
                return nil
            },
            onSpawn: { refs.append($0) })
    }
}

@Suite("Bridges: SignalProducer.actorSource")
struct ActorSourceTests {
    @Test func eachStart_spawnsItsOwnActor_andSendsItsMessagesInOrder() throws {
        let (system, scheduler) = makeTestSystem()
        let refs = Locked<[ActorRef<Feed>]>([])
        let source = SignalProducer<Feed, TestError>.feed(in: system, refs: refs)
        #expect(refs.snapshot.isEmpty)               // cold: nothing spawned before a start
        let first = EventRecorder<Feed, TestError>()
        let second = EventRecorder<Feed, TestError>()
        source.start(first.observer)
        source.start(second.observer)
        #expect(refs.snapshot.count == 2)
        #expect(refs.snapshot[0] != refs.snapshot[1])
        for tick in 1...3 { refs.snapshot[0].tell(.tick(tick)) }
        refs.snapshot[1].tell(.tick(10))
        scheduler.runDue()
        #expect(first.values == [.tick(1), .tick(2), .tick(3)])
        #expect(second.values == [.tick(10)])
        #expect(system.topLevelActors.count == 2)
    }

    @Test func aCompletionMessage_completesTheRun_stopsTheActor_andWhatFollowsIsADeadLetter() throws {
        let (system, scheduler) = makeTestSystem()
        let refs = Locked<[ActorRef<Feed>]>([])
        let run = EventRecorder<Feed, TestError>()
        SignalProducer<Feed, TestError>.feed(in: system, refs: refs).start(run.observer)
        let ref = try #require(refs.snapshot.first)
        ref.tell(.tick(1))
        ref.tell(.end)
        ref.tell(.tick(2))                           // queued behind the end
        let deadLetters = system.deadLetterCount
        scheduler.runDue()
        #expect(run.values == [.tick(1)])
        #expect(run.isCompleted)
        #expect(system.deadLetterCount == deadLetters + 1)
        #expect(ref.tell(.tick(3)) == .dropped(.recipientTerminated))
        #expect(system.topLevelActors.isEmpty)
    }

    @Test func aFailureMessage_failsTheRunWithTheMatchedError() throws {
        let (system, scheduler) = makeTestSystem()
        let refs = Locked<[ActorRef<Feed>]>([])
        let run = EventRecorder<Feed, TestError>()
        SignalProducer<Feed, TestError>.feed(in: system, refs: refs).start(run.observer)
        refs.snapshot[0].tell(.tick(1))
        refs.snapshot[0].tell(.broken(42))
        scheduler.runDue()
        #expect(run.values == [.tick(1)])
        #expect(run.error == TestError(code: 42))
        #expect(system.topLevelActors.isEmpty)
    }

    @Test func disposingTheRun_stopsTheActor() throws {
        let (system, scheduler) = makeTestSystem()
        let refs = Locked<[ActorRef<Feed>]>([])
        let run = EventRecorder<Feed, TestError>()
        let disposable = SignalProducer<Feed, TestError>.feed(in: system, refs: refs).start(run.observer)
        let ref = refs.snapshot[0]
        ref.tell(.tick(1))
        scheduler.runDue()
        ref.tell(.tick(2))                           // queued when the run is disposed
        disposable.dispose()
        #expect(run.isInterrupted)
        scheduler.runDue()
        #expect(run.values == [.tick(1)])
        #expect(system.topLevelActors.isEmpty)
        #expect(ref.tell(.tick(3)) == .dropped(.recipientTerminated))
    }

    @Test func theActorStoppingAtShutdown_completesTheRun() async throws {
        let (system, scheduler) = makeTestSystem()
        let refs = Locked<[ActorRef<Feed>]>([])
        let run = EventRecorder<Feed, TestError>()
        SignalProducer<Feed, TestError>.feed(in: system, refs: refs).start(run.observer)
        refs.snapshot[0].tell(.tick(1))
        scheduler.runDue()
        system.beginShutdown()
        scheduler.runDue()
        #expect(run.values == [.tick(1)])
        #expect(run.isCompleted)
        #expect(await system.shutdown().isClean)
    }

    @Test func theMailboxIsTheBuffer_aBoundedOneDropsPerItsPolicy() throws {
        let (system, scheduler) = makeTestSystem()
        let refs = Locked<[ActorRef<Feed>]>([])
        let run = EventRecorder<Feed, TestError>()
        let props = Props(mailbox: .bounded(capacity: 2, overflow: .dropNewest))
        SignalProducer<Feed, TestError>.feed(in: system, props: props, refs: refs).start(run.observer)
        let results = (1...5).map { refs.snapshot[0].tell(.tick($0)) }
        scheduler.runDue()
        #expect(run.values == [.tick(1), .tick(2)])
        #expect(results.filter { !$0.isEnqueued }.count == 3)
        #expect(system.droppedCount == 3)
    }

    @Test func aSpawnThatFails_interruptsTheRun_withoutCallingOnSpawn() throws {
        let (system, _) = makeTestSystem()
        let refs = Locked<[ActorRef<Feed>]>([])
        let source = SignalProducer<Feed, TestError>.feed(in: system, name: "feed", refs: refs)
        let first = EventRecorder<Feed, TestError>()
        let second = EventRecorder<Feed, TestError>()
        source.start(first.observer)
        source.start(second.observer)                // the name is taken by the first run's actor
        #expect(refs.snapshot.count == 1)
        #expect(!first.hasTerminated)
        #expect(second.isInterrupted)
    }

    @Test func theBackpressuredVariant_acksEachValueOnceItsObserversHaveSeenIt() throws {
        let (system, scheduler) = makeTestSystem()
        let seen = Locked<[Int]>([])
        let ackLog = Locked<[String]>([])
        // Runs inside the source's `tell` of the ack, so it sees what the observers had seen then.
        let acks = try system.spawn(Behavior<String>.receiveMessage { ack in
            ackLog.append("\(ack) after \(seen.snapshot)")
            return .same
        }, name: "acks", props: Props(scheduler: ImmediateScheduler()))
        let refs = Locked<[ActorRef<Int>]>([])
        let source = SignalProducer<Int, Never>.actorSource(
            spawningIn: system, acknowledgingTo: acks, with: "ack",
            completeOn: { $0 < 0 }, onSpawn: { refs.append($0) })
        source.startWithValues { seen.append($0) }
        refs.snapshot[0].tell(1)
        refs.snapshot[0].tell(2)
        refs.snapshot[0].tell(-1)                    // completion: not acked
        scheduler.runDue()
        #expect(seen.snapshot == [1, 2])
        #expect(ackLog.snapshot == ["ack after [1]", "ack after [1, 2]"])
    }

    @Test func aContextSource_spawnsAChild_andItsRunCompletesWhenTheParentStops() throws {
        let (system, scheduler) = makeTestSystem()
        let run = EventRecorder<Int, Never>()
        let childRefs = Locked<[ActorRef<Int>]>([])
        let parent = try system.spawn(Behavior<String>.receive { context, command in
            switch command {
            case "start":
                SignalProducer<Int, Never>.actorSource(
                    spawningIn: context, name: "feed", completeOn: { _ in false },
                    onSpawn: { childRefs.append($0) }
                ).start(run.observer)
                return .same
            default:
                return .stopped
            }
        }, name: "parent")
        parent.tell("start")
        scheduler.runDue()
        let child = try #require(childRefs.snapshot.first)
        #expect(child.path == "/user/parent/feed")
        child.tell(7)
        scheduler.runDue()
        #expect(run.values == [7])
        parent.tell("stop")
        scheduler.runDue()
        #expect(run.isCompleted)
    }

    // MARK: Re-entrance

    @Test func anObserverTellingTheSourceFromInsideAValue_isQueuedInOrder() throws {
        let system = ActorSystem(name: "inline", configuration: .init(scheduler: ImmediateScheduler(), logHandler: nil))
        let refs = Locked<[ActorRef<Int>]>([])
        let seen = Locked<[Int]>([])
        SignalProducer<Int, Never>.actorSource(spawningIn: system, completeOn: { $0 < 0 }, onSpawn: { refs.append($0) })
            .startWithValues { value in
                seen.append(value)
                if value < 3 { refs.snapshot[0].tell(value + 1) }   // back into the running actor
            }
        refs.snapshot[0].tell(1)
        refs.snapshot[0].tell(10)
        #expect(seen.snapshot == [1, 2, 3, 10])
    }

    @Test func anObserverDisposingTheRunFromInsideAValue_stopsTheActorBeforeTheNextMessage() throws {
        let (system, scheduler) = makeTestSystem()
        let refs = Locked<[ActorRef<Int>]>([])
        let run = EventRecorder<Int, Never>()
        SignalProducer<Int, Never>.actorSource(spawningIn: system, completeOn: { _ in false }, onSpawn: { refs.append($0) })
            .take(first: 1)
            .start(run.observer)
        for value in 1...3 { refs.snapshot[0].tell(value) }
        let deadLetters = system.deadLetterCount
        scheduler.runDue()
        #expect(run.values == [1])
        #expect(run.isCompleted)
        #expect(system.topLevelActors.isEmpty)
        #expect(system.deadLetterCount == deadLetters + 2)
    }

    // MARK: Composition

    @Test func aSourceDrainedIntoAnActor_deliversEverythingWithAcks() throws {
        let (system, scheduler) = makeTestSystem()
        let probe = DrainProbe()
        let sink = try system.spawn(probe.behavior(autoAck: true), name: "sink")
        let refs = Locked<[ActorRef<Int>]>([])
        let outcome = EventRecorder<Int, DrainError<TestError>>()
        SignalProducer<Int, TestError>.actorSource(spawningIn: system, completeOn: { $0 == 0 }, onSpawn: { refs.append($0) })
            .drainForTest(into: sink)
            .start(outcome.observer)
        for value in [5, 6, 7, 0] { refs.snapshot[0].tell(value) }
        scheduler.runDue()
        #expect(outcome.values == [5, 6, 7])
        #expect(outcome.isCompleted)
        #expect(probe.log.values == ["init", "5", "6", "7", "done"])
    }
}
