import Testing
@testable import Mailbox

@Suite("Bridges: ref <~ source")
struct BindingToActorTests {
    @Test func bindSignal_tellsEachValue_andEndsWhenTheActorTerminates() throws {
        let (system, scheduler) = makeTestSystem()
        let received = Inbox<Int>()
        let ref = try system.spawn(Behavior<Int>.receiveMessage { value in
            received.record(value)
            return value < 0 ? .stopped : .same
        }, name: "sink")
        let (signal, input) = Signal<Int, Never>.pipe()
        let binding = ref <~ signal
        #expect(binding != nil)
        input.send(value: 1)
        input.send(value: 2)
        scheduler.runDue()
        #expect(received.values == [1, 2])
        input.send(value: -1)                  // the actor stops on this one
        scheduler.runDue()
        let deadLetters = system.deadLetterCount
        input.send(value: 3)                   // the binding has ended: not told, so no dead letter
        scheduler.runDue()
        #expect(received.values == [1, 2, -1])
        #expect(system.deadLetterCount == deadLetters)
    }

    @Test func bindProducer_runIsInterruptedWhenTheActorTerminates() throws {
        let (system, scheduler) = makeTestSystem()
        let ref = try system.spawn(Behavior<Int>.receiveMessage { $0 < 0 ? .stopped : .same }, name: "sink")
        let ended = Locked(false)
        let (signal, input) = Signal<Int, Never>.pipe()
        let producer = SignalProducer<Int, Never> { observer, lifetime in
            lifetime.observeEnded { ended.withLock { $0 = true } }
            lifetime += signal.observe(observer)
        }
        ref <~ producer
        input.send(value: 1)
        scheduler.runDue()
        #expect(!ended.snapshot)
        input.send(value: -1)
        scheduler.runDue()
        #expect(ended.snapshot)
    }

    @Test func bindProperty_tellsTheCurrentValueFirst_thenEachChange() throws {
        let (system, scheduler) = makeTestSystem()
        let received = Inbox<String>()
        let ref = try system.spawn(recording(received), name: "sink")
        let name = MutableProperty("Ada")
        ref <~ name
        name.value = "Grace"
        scheduler.runDue()
        #expect(received.values == ["Ada", "Grace"])
    }

    @Test func bindingEnds_whenTheSourceEnds_orIsDisposed_andTheActorKeepsRunning() throws {
        let (system, scheduler) = makeTestSystem()
        let received = Inbox<Int>()
        let ref = try system.spawn(recording(received), name: "sink")
        let (first, firstInput) = Signal<Int, Never>.pipe()
        let (second, secondInput) = Signal<Int, Never>.pipe()
        ref <~ first
        let binding = ref <~ second
        firstInput.send(value: 1)
        firstInput.sendCompleted()
        firstInput.send(value: 2)              // after completion: nothing
        secondInput.send(value: 10)
        binding?.dispose()
        secondInput.send(value: 11)            // after disposal: not told
        ref.tell(100)                          // the actor still runs
        scheduler.runDue()
        #expect(received.values == [1, 10, 100])
    }

    @Test func bindingToATerminatedActor_endsAtOnce() throws {
        let (system, scheduler) = makeTestSystem()
        let ref = try system.spawn(Behavior<Int>.receiveMessage { _ in .stopped }, name: "brief")
        ref.tell(0)
        scheduler.runDue()
        let ended = Locked(false)
        ref <~ SignalProducer<Int, Never> { _, lifetime in
            lifetime.observeEnded { ended.withLock { $0 = true } }
        }
        scheduler.runDue()
        #expect(ended.snapshot)
    }

    @Test func boundedMailbox_dropNewest_dropsValuesThatFindItFull() throws {
        let (system, scheduler) = makeTestSystem()
        let received = Inbox<Int>()
        let letters = Inbox<DeadLetter.Reason>()
        system.drops.observeValues { letters.record($0.reason) }
        let ref = try system.spawn(recording(received), name: "small", props: Props(mailbox: .bounded(capacity: 2, overflow: .dropNewest)))
        scheduler.runDue()                     // started
        let (signal, input) = Signal<Int, Never>.pipe()
        ref <~ signal
        for value in 1...5 { input.send(value: value) }
        scheduler.runDue()
        #expect(received.values == [1, 2])
        #expect(system.droppedCount == 3)
        #expect(letters.values == Array(repeating: .mailboxFull(.dropNewest), count: 3))
    }

    @Test func boundedMailbox_dropOldest_keepsTheNewestValues() throws {
        let (system, scheduler) = makeTestSystem()
        let received = Inbox<Int>()
        let ref = try system.spawn(recording(received), name: "small", props: Props(mailbox: .bounded(capacity: 2, overflow: .dropOldest)))
        scheduler.runDue()
        let (signal, input) = Signal<Int, Never>.pipe()
        ref <~ signal
        for value in 1...5 { input.send(value: value) }
        scheduler.runDue()
        #expect(received.values == [4, 5])
        #expect(system.droppedCount == 3)
    }

    /// Many threads send through one binding to an actor on the pool: every value arrives,
    /// each sender's values in order.
    @Test func bindSignal_fromManyThreads_deliversEveryValue() async throws {
        let system = ActorSystem(name: "bind-mt", configuration: .init(logHandler: nil))
        let received = Inbox<Int>()
        let ref = try system.spawn(recording(received), name: "sink")
        let (signal, input) = Signal<Int, Never>.pipe()
        ref <~ signal
        let senders = 4, perSender = 500
        await withTaskGroup(of: Void.self) { group in
            for sender in 0..<senders {
                group.addTask {
                    for index in 0..<perSender { input.send(value: sender * perSender + index) }
                }
            }
        }
        #expect(await received.waitForCount(senders * perSender))
        let values = received.values
        for sender in 0..<senders {
            let mine = values.filter { $0 / perSender == sender }
            #expect(mine == Array(sender * perSender..<(sender + 1) * perSender))
        }
        await system.shutdown()
    }
}
