import Dispatch
import Foundation
import Testing
@testable import Mailbox

// Every snippet of docs/Mailboxes.md, as a test, plus the tests its "Guarantees" cite that live
// here. Keep them in sync: `snippetsOfTheDoc_appearInTheseTests` fails if a snippet changes
// without its test. (`Recorder` is from SchedulersDocTests.swift; `logging(into:)` and
// `greeter(greeting:)` from ActorsDocTests.swift.)

/// A new system on a new `TestScheduler`, as every snippet of the doc assumes.
func docTestSystem() -> (ActorSystem, TestScheduler, Recorder) {
    let scheduler = TestScheduler()
    let system = ActorSystem(name: "guide", configuration: .init(scheduler: scheduler, logHandler: nil))
    return (system, scheduler, Recorder())
}

@Suite("docs/Mailboxes.md")
struct MailboxesDocTests {
    // MARK: Props

    @Test func props_everyParameter() throws {
        let props = Props(
            mailbox: .bounded(capacity: 100, overflow: .dropNewest),   // default: .unbounded
            scheduler: QueueScheduler(name: "com.example.io"),         // default: the system's scheduler
            runLength: 16,                                             // default: the system's (64)
            stashCapacity: 50                                          // default: 1,000
        )
        #expect(props.mailbox == .bounded(capacity: 100, overflow: .dropNewest))
        #expect(props.scheduler is QueueScheduler)
        #expect(props.runLength == 16)
        #expect(props.stashCapacity == 50)
        let defaults = Props()
        #expect(defaults.mailbox == .unbounded)
        #expect(defaults.scheduler == nil)
        #expect(defaults.runLength == nil)
        #expect(defaults.stashCapacity == 1_000)
        #expect(ActorSystem.Configuration().runLength == 64)
    }

    // MARK: Capacity and overflow

    @Test func dropNewest() throws {
        let (system, scheduler, log) = docTestSystem()
        let drops = Recorder()
        system.drops.observeValues { drops.record("\($0.message) \($0.reason)") }
        let small: ActorRef<Int> = try system.spawn(logging(into: log), name: "small", props: Props(mailbox: .bounded(capacity: 2, overflow: .dropNewest)))
        small.tell(1)                             // .enqueued
        small.tell(2)                             // .enqueued
        small.tell(3)                             // .dropped(.mailboxFull(.dropNewest)): published as a Dropped
        #expect(drops.all == ["3 mailbox full (dropNewest)"])
        #expect(system.deadLetterCount == 0)
        scheduler.advance(by: .nanoseconds(0))    // log.all == ["1", "2"]; system.droppedCount == 1
        #expect(log.all == ["1", "2"])
        #expect(system.droppedCount == 1)
        small.tell(4)                             // .enqueued: handling made room
        scheduler.advance(by: .nanoseconds(0))
        #expect(log.all == ["1", "2", "4"])
        #expect(system.droppedCount == 1)
    }

    @Test func dropOldest_dropsWhenTheActorNextRuns() throws {
        let (system, scheduler, log) = docTestSystem()
        let drops = Recorder()
        system.drops.observeValues { drops.record("\($0.message) \($0.reason)") }
        let latest: ActorRef<Int> = try system.spawn(logging(into: log), name: "latest", props: Props(mailbox: .bounded(capacity: 2, overflow: .dropOldest)))
        for reading in 1...4 {
            latest.tell(reading)                  // .enqueued, every time
        }
        // system.droppedCount == 0: nothing is dropped until the actor runs
        #expect(system.droppedCount == 0)
        #expect(drops.all == [])
        scheduler.advance(by: .nanoseconds(0))    // log.all == ["3", "4"]; system.droppedCount == 2
        #expect(log.all == ["3", "4"])
        #expect(system.droppedCount == 2)
        #expect(drops.all == ["1 mailbox full (dropOldest)", "2 mailbox full (dropOldest)"])
    }

    @Test func fail_sendThrows() async throws {
        let (system, _, log) = docTestSystem()
        let strict: ActorRef<Int> = try system.spawn(logging(into: log), name: "strict", props: Props(mailbox: .bounded(capacity: 1, overflow: .fail)))
        try await strict.send(1)
        do {
            try await strict.send(2)
            Issue.record("the second send was accepted by a full mailbox")
        } catch let error as SendError {
            // error.reason == .mailboxFull(.fail)
            #expect(error.reason == .mailboxFull(.fail))
            // "\(error)" == "message to /user/strict not delivered: mailbox full (fail)"
            #expect("\(error)" == "message to /user/strict not delivered: mailbox full (fail)")
        }
        #expect(strict.tell(3) == .dropped(.mailboxFull(.fail)))
        #expect(system.droppedCount == 2)
    }

    @Test func backpressure_sendWaitsForRoom() async throws {
        let (system, scheduler, log) = docTestSystem()
        let slow: ActorRef<Int> = try system.spawn(logging(into: log), name: "slow", props: Props(mailbox: .bounded(capacity: 1, overflow: .backpressure)))
        try await slow.send(1)                      // there is room: returns at once
        let sender = Task { try await slow.send(2) } // full: suspends until the actor makes room
        // slow.tell(3) == .dropped(.mailboxFull(.backpressure)): tell never waits
        #expect(slow.tell(3) == .dropped(.mailboxFull(.backpressure)))
        scheduler.advance(by: .nanoseconds(0))      // the actor handles 1; the waiting send enqueues 2
        try await sender.value
        scheduler.advance(by: .nanoseconds(0))      // log.all == ["1", "2"]
        #expect(log.all == ["1", "2"])
        #expect(system.droppedCount == 1)
    }

    @Test func backpressure_waitingSenderFailsWhenTheActorTerminates() async throws {
        let (system, scheduler, _) = docTestSystem()
        let full = try system.spawn(Behavior<Int>.receiveMessage { _ in .stopped }, name: "full", props: Props(mailbox: .bounded(capacity: 1, overflow: .backpressure)))
        try await full.send(1)
        let sender = Task { try await full.send(2) }
        scheduler.advance(by: .nanoseconds(0))      // handles 1 and stops
        let error = await #expect(throws: SendError.self) { try await sender.value }
        #expect(error?.reason == .recipientTerminated)
    }

    // MARK: Run length

    @Test func runLength_actorsTakeTurns() throws {
        let (system, scheduler, log) = docTestSystem()
        let a: ActorRef<String> = try system.spawn(logging(into: log), name: "a", props: Props(runLength: 2))
        let b: ActorRef<String> = try system.spawn(logging(into: log), name: "b", props: Props(runLength: 2))
        for n in 1...4 {
            a.tell("a\(n)")
            b.tell("b\(n)")
        }
        scheduler.advance(by: .nanoseconds(0))    // log.all == ["a1", "a2", "b1", "b2", "a3", "a4", "b3", "b4"]
        #expect(log.all == ["a1", "a2", "b1", "b2", "a3", "a4", "b3", "b4"])
    }

    // MARK: Schedulers

    @Test func actorsOnDifferentSchedulers() async throws {
        let (system, scheduler, log) = docTestSystem()
        let onQueue = try system.spawn(greeter(greeting: "Hello"), name: "on-queue", props: Props(scheduler: QueueScheduler(name: "com.example.greeter")))
        let inline: ActorRef<String> = try system.spawn(logging(into: log), name: "inline", props: Props(scheduler: ImmediateScheduler()))
        inline.tell("handled before tell returns")        // log.all == ["handled before tell returns"]
        #expect(log.all == ["handled before tell returns"])
        onQueue.tell(.greet(name: "Ada", replyTo: inline))
        // on the queue's thread, moments later: log.all == ["handled before tell returns", "Hello, Ada!"]
        #expect(await docWaitUntil { log.all.count == 2 })
        #expect(log.all == ["handled before tell returns", "Hello, Ada!"])
        system.beginShutdown()
        scheduler.advance(by: .nanoseconds(0))
        #expect(await system.shutdown().isClean)
    }

    // MARK: Guarantees proved here

    struct Stamp: Sendable {
        let sender: Int
        let sequence: Int
    }

    /// A sink that checks per-sender FIFO and records violations; `done` opens after `total`.
    static func fifoSink(senders: Int, total: Int, violations: Recorder, done: AsyncGate) -> Behavior<Stamp> {
        .setup { _ in
            var next = [Int](repeating: 0, count: senders)
            var received = 0
            return .receiveMessage { stamp in
                if stamp.sequence != next[stamp.sender] {
                    violations.record("sender \(stamp.sender): expected \(next[stamp.sender]), got \(stamp.sequence)")
                }
                next[stamp.sender] = stamp.sequence + 1
                received += 1
                if received == total { done.open(true) }
                return .same
            }
        }
    }

    /// Guarantee 1 on virtual time: senders interleaved from synchronous code, then one advance.
    @Test func fifoPerSender_onATestScheduler() throws {
        let (system, scheduler, _) = docTestSystem()
        let violations = Recorder()
        let done = AsyncGate()
        let senders = 4, perSender = 500
        let sink = try system.spawn(Self.fifoSink(senders: senders, total: senders * perSender, violations: violations, done: done), name: "sink", props: Props(runLength: 7))
        var random = SplitMix64(seed: 42)
        var sent = [Int](repeating: 0, count: senders)
        while sent.contains(where: { $0 < perSender }) {
            let sender = Int(random.next() % UInt64(senders))
            guard sent[sender] < perSender else { continue }
            sink.tell(Stamp(sender: sender, sequence: sent[sender]))
            sent[sender] += 1
            if random.next() % 50 == 0 { scheduler.advance(by: .nanoseconds(0)) }   // runs in between
        }
        scheduler.advance(by: .nanoseconds(0))
        #expect(violations.all == [])
        #expect(system.deadLetterCount == 0)
    }

    /// Guarantee 1 with actors as senders, on the pool: each sender actor tells the sink from
    /// inside its own mailbox runs (where the run-next slot is in play).
    @Test func fifoPerSender_fromActors_onThePool() async throws {
        let system = ActorSystem(name: "fifo-actors", configuration: .init(logHandler: nil))
        let violations = Recorder()
        let done = AsyncGate()
        let senders = 4, perSender = 2_000
        let sink = try system.spawn(Self.fifoSink(senders: senders, total: senders * perSender, violations: violations, done: done), name: "sink")
        for index in 0..<senders {
            let sender = try system.spawn(Behavior<Int>.receiveMessage { batch in
                for sequence in batch * 100..<(batch + 1) * 100 {
                    sink.tell(Stamp(sender: index, sequence: sequence))
                }
                return .same
            }, name: "sender\(index)")
            for batch in 0..<(perSender / 100) { sender.tell(batch) }
        }
        #expect(await done.wait(timeout: 60), "not every message arrived")
        #expect(violations.all == [])
        #expect(await system.shutdown().isClean)
        #expect(system.deadLetterCount == 0)
    }

    /// Guarantee 3: one mailbox run at a time, even where the scheduler runs actions in parallel.
    @Test func oneMessageAtATime_evenOnAWideOperationQueue() async throws {
        let wide = OperationQueueScheduler(name: "com.example.wide", maxConcurrentOperationCount: 4)
        let system = ActorSystem(name: "wide", configuration: .init(scheduler: wide, logHandler: nil))
        let probe = ConcurrencyProbe()
        let handled = Locked(0)
        let done = AsyncGate()
        let senders = 4, perSender = 500
        let ref = try system.spawn(Behavior<Int>.receiveMessage { _ in
            probe.run {
                if handled.increment() == senders * perSender { done.open(true) }
            }
            return .same
        }, name: "serial", props: Props(runLength: 3))
        for _ in 0..<senders {
            DispatchQueue.global().async {
                for value in 0..<perSender { ref.tell(value) }
            }
        }
        #expect(await done.wait(timeout: 60), "not every message was handled")
        #expect(probe.maximum == 1)
        #expect(await system.shutdown().isClean)
    }

    /// Guarantee 6: the stop (a system message) is handled before the user messages queued
    /// ahead of it, so they become dead letters instead of being handled.
    @Test func systemMessagesAreHandledBeforeQueuedUserMessages() throws {
        let (system, scheduler, log) = docTestSystem()
        let ref: ActorRef<String> = try system.spawn(logging(into: log), name: "busy", props: Props(mailbox: .bounded(capacity: 3, overflow: .dropNewest)))
        scheduler.advance(by: .nanoseconds(0))
        ref.tell("one")
        ref.tell("two")
        ref.tell("three")
        #expect(ref.tell("four") == .dropped(.mailboxFull(.dropNewest)), "the mailbox is full")
        system.beginShutdown()                    // a stop, sent after the user messages
        scheduler.advance(by: .nanoseconds(0))
        #expect(log.all == [])
        #expect(system.topLevelActors.isEmpty)
        #expect(system.deadLetterCount == 3, "the three queued messages, to a terminated actor")
        #expect(system.droppedCount == 1, "the fourth, refused by the full mailbox")
    }

    /// Guarantee 7 for every policy at once: each drop is one published `Dropped`, counted once,
    /// and no dead letter.
    @Test func everyDropIsCountedAndPublished_underEveryPolicy() throws {
        let (system, scheduler, _) = docTestSystem()
        let published = Recorder()
        system.drops.observeValues { published.record("\($0.recipient.name) \($0.message) \($0.reason)") }
        var refs: [ActorRef<Int>] = []
        for policy in [OverflowPolicy.dropNewest, .dropOldest, .fail, .backpressure] {
            refs.append(try system.spawn(Behavior<Int>.ignore, name: "\(policy)", props: Props(mailbox: .bounded(capacity: 1, overflow: policy))))
        }
        for ref in refs {
            ref.tell(1)
            ref.tell(2)
        }
        scheduler.advance(by: .nanoseconds(0))
        #expect(published.all == [
            "dropNewest 2 mailbox full (dropNewest)",
            "fail 2 mailbox full (fail)",
            "backpressure 2 mailbox full (backpressure)",
            "dropOldest 1 mailbox full (dropOldest)",
        ])
        #expect(system.droppedCount == 4)
        #expect(system.deadLetterCount == 0)
    }

    // MARK: - The doc and these tests stay in sync

    @Test func snippetsOfTheDoc_appearInTheseTests() throws {
        try docExpectSnippets(of: "docs/Mailboxes.md", count: 7, inTestFile: #filePath)
    }
}

/// Suspends (yielding the thread, never blocking it) until `condition` holds, for at most 20 seconds of real
/// time; returns whether it did.
func docWaitUntil(_ condition: () -> Bool) async -> Bool {
    let deadline = Date().addingTimeInterval(20)
    while !condition() {
        if Date() > deadline { return false }
        await Task.yield()
    }
    return true
}
