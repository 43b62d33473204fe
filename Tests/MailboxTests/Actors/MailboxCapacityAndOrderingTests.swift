import Dispatch
import Foundation
import Testing
@testable import Mailbox

@Suite("Mailboxes: capacity, overflow, ordering, schedulers")
struct MailboxCapacityAndOrderingTests {
    /// The drops published, as "message reason"; a drop published as a dead letter would be
    /// missing here (and counted twice).
    func drops(_ events: Inbox<ActorSystemEvent>) -> [String] {
        events.values.compactMap { event in
            if case let .dropped(drop) = event { return "\(drop.message) \(drop.reason)" }
            return nil
        }
    }

    func deadLetters(_ events: Inbox<ActorSystemEvent>) -> [String] {
        events.values.compactMap { event in
            if case let .deadLetter(letter) = event { return "\(letter.message) \(letter.reason)" }
            return nil
        }
    }

    @Test func boundedDropNewest_refusesTheNewMessage_andPublishesIt() throws {
        let events = Inbox<ActorSystemEvent>()
        let (system, scheduler) = makeTestSystem(events: events)
        let seen = Inbox<Int>()
        let ref = try system.spawn(recording(seen), name: "small", props: Props(mailbox: .bounded(capacity: 2, overflow: .dropNewest)))
        scheduler.runDue()
        #expect(ref.tell(1) == .enqueued)
        #expect(ref.tell(2) == .enqueued)
        #expect(ref.tell(3) == .dropped(.mailboxFull(.dropNewest)))
        scheduler.runDue()
        #expect(seen.values == [1, 2])
        #expect(drops(events) == ["3 mailbox full (dropNewest)"])
        #expect(deadLetters(events).isEmpty, "a drop is not also a dead letter")
        #expect(system.droppedCount == 1)
        #expect(system.deadLetterCount == 0)
        #expect(ref.tell(4) == .enqueued, "room is freed as messages are handled")
    }

    @Test func boundedFail_reportsToTheSender() throws {
        let (system, scheduler) = makeTestSystem()
        let ref = try system.spawn(Behavior<Int>.ignore, name: "strict", props: Props(mailbox: .bounded(capacity: 1, overflow: .fail)))
        scheduler.runDue()
        #expect(ref.tell(1).isEnqueued)
        #expect(!ref.tell(2).isEnqueued)
        #expect(system.droppedCount == 1)
        #expect(system.deadLetterCount == 0)
    }

    @Test func boundedDropOldest_dropsTheOldestQueuedMessage() throws {
        let events = Inbox<ActorSystemEvent>()
        let (system, scheduler) = makeTestSystem(events: events)
        let seen = Inbox<Int>()
        let ref = try system.spawn(recording(seen), name: "recent", props: Props(mailbox: .bounded(capacity: 3, overflow: .dropOldest)))
        scheduler.runDue()
        for value in 1...5 { #expect(ref.tell(value) == .enqueued) }
        scheduler.runDue()
        #expect(seen.values == [3, 4, 5])
        #expect(drops(events) == ["1 mailbox full (dropOldest)", "2 mailbox full (dropOldest)"])
        #expect(deadLetters(events).isEmpty)
        #expect(system.droppedCount == 2)
    }

    @Test func dropsAndDeadLetters_areSeparateStreams_andEveryMessageIsCountedOnce() throws {
        let (system, scheduler) = makeTestSystem()
        let dropped = Inbox<String>()
        let dead = Inbox<String>()
        system.drops.observeValues { dropped.record("\($0.recipient.name) \($0.message)") }
        system.deadLetters.observeValues { dead.record("\($0.recipient.name) \($0.message)") }
        let seen = Inbox<Int>()
        let small = try system.spawn(Behavior<Int>.receiveMessage { value in
            seen.record(value)
            return .stopped
        }, name: "small", props: Props(mailbox: .bounded(capacity: 1, overflow: .dropNewest)))
        scheduler.runDue()
        small.tell(1)   // handled, and the actor stops
        small.tell(2)   // dropped: the mailbox holds 1
        scheduler.runDue()
        small.tell(3)   // a dead letter: nobody to receive it
        #expect(seen.values == [1])
        #expect(dropped.values == ["small 2"])
        #expect(dead.values == ["small 3"])
        #expect(system.droppedCount == 1)
        #expect(system.deadLetterCount == 1)
        #expect(seen.values.count + system.droppedCount + system.deadLetterCount == 3)
    }

    @Test func systemMessagesAreNeverDropped_byAFullMailbox() throws {
        let (system, scheduler) = makeTestSystem()
        let postStops = Inbox<String>()
        let ref = try system.spawn(Behavior<Int>.receiveLifecycle { _, event in
            if case .postStop = event { postStops.record("stopped") }
            return .same
        }, name: "full", props: Props(mailbox: .bounded(capacity: 1, overflow: .dropNewest)))
        ref.tell(1)
        ref.tell(2)
        system.beginShutdown()
        scheduler.runDue()
        #expect(postStops.values == ["stopped"])
    }

    @Test func backpressureSend_suspendsUntilThereIsRoom() async throws {
        let (system, scheduler) = makeTestSystem()
        let seen = Inbox<Int>()
        let ref = try system.spawn(recording(seen), name: "slow", props: Props(mailbox: .bounded(capacity: 2, overflow: .backpressure)))
        scheduler.runDue()
        try await ref.send(1)
        try await ref.send(2)
        #expect(ref.tell(99) == .dropped(.mailboxFull(.backpressure)), "tell never suspends: it drops")
        let sent = Inbox<Int>()
        let sender = Task {
            try await ref.send(3)
            sent.record(3)
        }
        // The send cannot complete until the actor runs and frees a slot.
        for _ in 0..<100 { await Task.yield() }
        #expect(sent.values.isEmpty)
        scheduler.runDue()
        try await sender.value
        scheduler.runDue()
        #expect(seen.values == [1, 2, 3])
    }

    @Test func backpressureSend_isCancellable() async throws {
        let (system, scheduler) = makeTestSystem()
        let ref = try system.spawn(Behavior<Int>.ignore, name: "full", props: Props(mailbox: .bounded(capacity: 1, overflow: .backpressure)))
        scheduler.runDue()
        try await ref.send(1)
        let sender = Task { try await ref.send(2) }
        sender.cancel()
        await #expect(throws: CancellationError.self) { try await sender.value }
    }

    @Test func sendToTerminatedActor_throws() async throws {
        let (system, scheduler) = makeTestSystem()
        let ref = try system.spawn(Behavior<Int>.receiveMessage { _ in .stopped }, name: "brief")
        ref.tell(1)
        scheduler.runDue()
        let error = await #expect(throws: SendError.self) { try await ref.send(2) }
        #expect(error?.reason == .recipientTerminated)
    }

    @Test func runLength_yieldsBetweenRuns_soOtherActorsInterleave() throws {
        let (system, scheduler) = makeTestSystem()
        let order = Inbox<String>()
        let a = try system.spawn(Behavior<Int>.receiveMessage { order.record("a\($0)"); return .same }, name: "a", props: Props(runLength: 2))
        let b = try system.spawn(Behavior<Int>.receiveMessage { order.record("b\($0)"); return .same }, name: "b", props: Props(runLength: 2))
        scheduler.runDue()
        for value in 1...4 { a.tell(value); b.tell(value) }
        scheduler.runDue()
        #expect(order.values == ["a1", "a2", "b1", "b2", "a3", "a4", "b3", "b4"])
    }

    /// Per-sender FIFO, nothing lost or duplicated, with many threads telling one actor.
    func assertFIFOUnderConcurrentSenders(scheduler: (any Scheduler)?, senders: Int = 8, perSender: Int = 2_000) async throws {
        let system = ActorSystem(name: "fifo", configuration: .init(scheduler: scheduler, logHandler: nil))
        struct Stamp: Sendable { let sender: Int; let sequence: Int }
        let done = AsyncGate()
        let violations = LockedValueBox<[String]>([])
        let total = senders * perSender
        let ref = try system.spawn(Behavior<Stamp>.setup { _ in
            var next = [Int](repeating: 0, count: senders)
            var received = 0
            return .receiveMessage { stamp in
                if stamp.sequence != next[stamp.sender] {
                    violations.withLockedValue { $0.append("sender \(stamp.sender): expected \(next[stamp.sender]) got \(stamp.sequence)") }
                }
                next[stamp.sender] = stamp.sequence + 1
                received += 1
                if received == total { done.open(true) }
                return .same
            }
        }, name: "sink")
        let group = DispatchGroup()
        for sender in 0..<senders {
            DispatchQueue.global().async(group: group) {
                for sequence in 0..<perSender { ref.tell(Stamp(sender: sender, sequence: sequence)) }
            }
        }
        #expect(await done.wait(timeout: 60), "not every message arrived")
        #expect(violations.withLockedValue { $0 }.isEmpty)
        let (extra, _) = (system.deadLetterCount, 0)
        #expect(extra == 0)
    }

    @Test func fifoPerSender_onThePool() async throws {
        try await assertFIFOUnderConcurrentSenders(scheduler: nil)
    }

    @Test func fifoPerSender_onAQueueScheduler() async throws {
        try await assertFIFOUnderConcurrentSenders(scheduler: QueueScheduler(name: "fifo"))
    }

    @Test func fifoPerSender_onAnOperationQueueScheduler() async throws {
        try await assertFIFOUnderConcurrentSenders(scheduler: OperationQueueScheduler(), perSender: 500)
    }

    @Test func fifoPerSender_onTheImmediateScheduler() async throws {
        try await assertFIFOUnderConcurrentSenders(scheduler: ImmediateScheduler())
    }

    @Test func immediateScheduler_isTrampolined_noRecursion_FIFOKept() throws {
        let system = ActorSystem(name: "immediate", configuration: .init(scheduler: ImmediateScheduler(), logHandler: nil))
        // A ring of 50 actors passing a token 10,000 times would overflow the stack if each tell
        // ran the next actor nested inside the sender's run.
        let depth = LockedValueBox(0)
        let maxDepth = LockedValueBox(0)
        let finished = Inbox<Int>()
        let ring = 50
        enum Token: Sendable { case next(ActorRef<Token>), pass(Int) }
        var refs: [ActorRef<Token>] = []
        for index in 0..<ring {
            refs.append(try system.spawn(Behavior<Token>.setup { _ in
                var next: ActorRef<Token>?
                return .receiveMessage { message in
                    depth.withLockedValue { $0 += 1 }
                    maxDepth.withLockedValue { $0 = max($0, depth.withLockedValue { $0 }) }
                    defer { depth.withLockedValue { $0 -= 1 } }
                    switch message {
                    case let .next(ref): next = ref
                    case let .pass(remaining):
                        if remaining == 0 { finished.record(index) } else { next?.tell(.pass(remaining - 1)) }
                    }
                    return .same
                }
            }, name: "r\(index)"))
        }
        for index in 0..<ring { refs[index].tell(.next(refs[(index + 1) % ring])) }
        refs[0].tell(.pass(10_000))
        #expect(finished.values == [10_000 % ring])
        #expect(maxDepth.withLockedValue { $0 } == 1)
    }

    @Test func manyActorsOnThePool_allMessagesHandledOnce() async throws {
        let system = ActorSystem(name: "many", configuration: .init(logHandler: nil))
        let actors = 200, messages = 200
        let counts = LockedValueBox([Int](repeating: 0, count: actors))
        let done = AsyncGate()
        let remaining = LockedValueBox(actors * messages)
        var refs: [ActorRef<Int>] = []
        for index in 0..<actors {
            refs.append(try system.spawn(Behavior<Int>.receiveMessage { _ in
                counts.withLockedValue { $0[index] += 1 }
                if remaining.withLockedValue({ $0 -= 1; return $0 }) == 0 { done.open(true) }
                return .same
            }, name: "w\(index)"))
        }
        let snapshot = refs
        for sender in 0..<4 {
            DispatchQueue.global().async {
                for round in 0..<messages where round % 4 == sender {
                    for ref in snapshot { ref.tell(round) }
                }
            }
        }
        #expect(await done.wait(timeout: 60))
        #expect(counts.withLockedValue { $0 }.allSatisfy { $0 == messages })
    }
}
