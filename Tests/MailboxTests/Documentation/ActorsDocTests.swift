import Foundation
import Testing
import Mailbox

// Every snippet of docs/Actors.md, as a test. Keep them in sync: the doc's lines appear here in
// the same order (with assertions between them), and `snippetsOfTheDoc_appearInTheseTests` fails
// if a snippet changes without its test. Declarations are at file scope; statements are in tests.
// (`Recorder` is the one of docs/Schedulers.md, in SchedulersDocTests.swift.)

// MARK: - Getting started

enum GreeterMessage: Sendable {
    case greet(name: String, replyTo: ActorRef<String>)
    case changeGreeting(String)
}

func greeter(greeting: String) -> Behavior<GreeterMessage> {
    .receiveMessage { message in
        switch message {
        case let .greet(name, replyTo):
            replyTo.tell("\(greeting), \(name)!")
            return .same                                  // keep this behavior
        case let .changeGreeting(newGreeting):
            return greeter(greeting: newGreeting)         // the behavior for the next message
        }
    }
}

/// Logs every message it receives, for the examples.
func logging<Message: Sendable>(into log: Recorder) -> Behavior<Message> {
    .receiveMessage { message in
        log.record("\(message)")
        return .same
    }
}

// MARK: - Behaviors

enum TallyMessage: Sendable {
    case add(Int)
    case report(replyTo: ActorRef<Int>)
    case reset
    case close
}

func tally(from start: Int) -> Behavior<TallyMessage> {
    .setup { _ in
        var total = start                       // the actor's state: no lock needed
        return .receiveMessage { message in
            switch message {
            case let .add(amount) where amount < 0:
                return .unhandled               // published as unhandled; the behavior stays
            case let .add(amount):
                total += amount
            case let .report(replyTo):
                replyTo.tell(total)
            case .reset:
                return tally(from: 0)           // a new behavior: its setup runs, fresh state
            case .close:
                return .stopped
            }
            return .same
        }
    }
}

func resource(log: Recorder) -> Behavior<String> {
    Behavior<String>.receiveMessage { message in
        log.record("used for \(message)")
        return message == "close" ? .stopped : .same
    }
    .receiveLifecycle { context, event in
        guard case .postStop = event else { return .unhandled }
        log.record("\(context.name) released")
        return .same
    }
}

enum AccountMessage: Sendable {
    case deposit(Int)
    case balance(replyTo: ActorRef<Int>)
}

final class Account: AbstractBehavior<AccountMessage> {
    private var balance = 0

    override func receive(_ message: AccountMessage) throws -> Behavior<AccountMessage> {
        switch message {
        case let .deposit(amount):
            balance += amount
        case let .balance(replyTo):
            replyTo.tell(balance)
        }
        return .same
    }
}

// MARK: - Failures

struct PaymentDeclined: Error {}

// MARK: - Ask and pipeToSelf

enum HostMessage: Sendable {
    case welcome(String)
    case greeted(Result<String, any Error>)
}

func host(greeter: ActorRef<GreeterMessage>, log: Recorder) -> Behavior<HostMessage> {
    .receive { context, message in
        switch message {
        case let .welcome(guest):
            context.ask(greeter, timeout: .seconds(1), { .greet(name: guest, replyTo: $0) }, map: HostMessage.greeted)
        case let .greeted(.success(greeting)):
            log.record(greeting)
        case let .greeted(.failure(error)):
            log.record("no greeting: \(error)")
        }
        return .same
    }
}

enum PageMessage: Sendable {
    case fetch(String)
    case fetched(Result<Int, any Error>)
}

func pageSizer(download: @escaping @Sendable (String) async throws -> String, log: Recorder) -> Behavior<PageMessage> {
    .receive { context, message in
        switch message {
        case let .fetch(url):
            context.pipeToSelf({ try await download(url).count }, map: PageMessage.fetched)
        case let .fetched(.success(size)):
            log.record("\(size) characters")
        case let .fetched(.failure(error)):
            log.record("failed: \(error)")
        }
        return .same
    }
}

// MARK: - Timers

enum HeartbeatMessage: Sendable {
    case beat
    case deadline
}

func heartbeat(log: Recorder) -> Behavior<HeartbeatMessage> {
    .setup { context in
        context.timers.startTimerAtFixedRate(key: "beat", message: .beat, interval: .seconds(1))
        context.timers.startSingleTimer(key: "deadline", message: .deadline, delay: .milliseconds(3_500))
        return .receiveMessage { message in
            log.record("\(message)")
            return message == .deadline ? .stopped : .same    // stopping cancels the "beat" timer
        }
    }
}

// MARK: - Stash

enum ConnectionMessage: Sendable {
    case connected
    case send(String)
}

func connecting(log: Recorder) -> Behavior<ConnectionMessage> {
    .receive { context, message in
        switch message {
        case .connected:
            return context.unstashAll(connected(log: log))
        case .send:
            try context.stash(message)      // for later; throws StashOverflowError when full
            return .same
        }
    }
}

func connected(log: Recorder) -> Behavior<ConnectionMessage> {
    .receiveMessage { message in
        if case let .send(text) = message { log.record("sent \(text)") }
        return .same
    }
}

// MARK: - Children

func lobby(log: Recorder) -> Behavior<String> {
    .setup { context in
        let alice = try context.spawn(Behavior<String>.ignore, name: "alice")
        let guest = try context.spawnAnonymous(Behavior<String>.ignore)
        log.record(alice.path)                                  // "/user/lobby/alice"
        log.record(context.childRefs.map(\.address.name).joined(separator: " "))   // "alice $a1"
        try context.stop(guest)
        try context.stop(guest)                                 // again: does nothing
        return .ignore
    }
}

// MARK: - Death watch

func janitor(log: Recorder) -> Behavior<ActorRef<String>> {
    Behavior<ActorRef<String>>.receive { context, worker in
        context.watch(worker)
        return .same
    }
    .receiveLifecycle { _, event in
        guard case let .terminated(ref) = event else { return .unhandled }
        log.record("\(ref.path) terminated")
        return .same
    }
}

func parent(log: Recorder) -> Behavior<Int> {
    .setup { context in
        let child = try context.spawn(Behavior<Int>.receiveMessage { _ in throw PaymentDeclined() }, name: "child")
        context.watch(child)
        return Behavior<Int>.receiveMessage { amount in
            child.tell(amount)
            return .same
        }
        .receiveLifecycle { context, event in
            guard case let .childFailed(ref, error) = event else { return .unhandled }
            log.record("\(ref.path) failed with \(error); children left: \(context.childRefs.count)")
            return .same
        }
    }
}

func foreman(log: Recorder) -> Behavior<Int> {
    .setup { context in
        let child = try context.spawn(Behavior<Int>.setup { _ in throw PaymentDeclined() }, name: "child")
        context.watch(child)                  // the child fails in its first run
        return Behavior<Int>.receiveLifecycle { _, event in
            guard case let .terminated(ref) = event else { return .unhandled }   // failed or not
            log.record("\(ref.path) is gone")
            return .same
        }
    }
}

// MARK: - Message adapters

enum ReceptionMessage: Sendable {
    case arrive(String)
    case greetingReady(String)
}

func reception(greeter: ActorRef<GreeterMessage>, log: Recorder) -> Behavior<ReceptionMessage> {
    .setup { context in
        let greetings = context.messageAdapter { (greeting: String) in ReceptionMessage.greetingReady(greeting) }
        return .receiveMessage { message in
            switch message {
            case let .arrive(guest):
                greeter.tell(.greet(name: guest, replyTo: greetings))
            case let .greetingReady(greeting):
                log.record(greeting)
            }
            return .same
        }
    }
}

// MARK: - Stopping

/// A chain of actors, each the child of the one before: ["a", "b"] is /user/a and /user/a/b.
func chain(_ names: [String], log: Recorder) -> Behavior<String> {
    .setup { context in
        if names.count > 1 {
            try context.spawn(chain(Array(names.dropFirst()), log: log), name: names[1])
        }
        return Behavior<String>.receiveMessage { message in
            message == "stop" ? .stopped : .same
        }
        .receiveLifecycle { _, event in
            guard case .postStop = event else { return .unhandled }
            log.record("\(names[0]) stopped")
            return .same
        }
    }
}

// MARK: - Test helpers (not in the doc)

/// Suspends (yielding the thread, never blocking it) until `scheduler` has at least `count` pending actions,
/// for at most 20 seconds of real time; returns whether it did.
func docWaitForPendingActions(_ scheduler: TestScheduler, atLeast count: Int) async -> Bool {
    let deadline = Date().addingTimeInterval(20)
    while scheduler.pendingActionCount < count {
        if Date() > deadline { return false }
        await Task.yield()
    }
    return true
}

/// Runs what is due on `scheduler` (yielding between rounds, never blocking) until `condition`
/// holds, for at most 20 seconds of real time; returns whether it did.
func docAdvanceUntil(_ scheduler: TestScheduler, _ condition: () -> Bool) async -> Bool {
    let deadline = Date().addingTimeInterval(20)
    while true {
        scheduler.advance(by: .nanoseconds(0))
        if condition() { return true }
        if Date() > deadline { return false }
        await Task.yield()
    }
}

/// A scheduler that forwards to a `TestScheduler`, except while blocked: then it holds the
/// actions, as a busy scheduler would, and schedules them when unblocked.
final class DocBlockableScheduler: Scheduler {
    let base: TestScheduler
    /// The held actions while blocked; `nil` while not blocked.
    private let held = Locked<[@Sendable () -> Void]?>(nil)

    init(base: TestScheduler) {
        self.base = base
    }

    @discardableResult
    func schedule(_ action: @escaping @Sendable () -> Void) -> (any Disposable)? {
        let isHeld = held.withLock { held -> Bool in
            guard held != nil else { return false }
            held!.append(action)
            return true
        }
        return isHeld ? nil : base.schedule(action)
    }

    func block() {
        held.withLock { $0 = [] }
    }

    func unblock() {
        let actions = held.withLock { held in
            defer { held = nil }
            return held ?? []
        }
        for action in actions { base.schedule(action) }
    }
}

/// The unhandled messages and failures a system publishes, as text.
final class DocEventLog: Sendable {
    let unhandled = Recorder()
    let failures = Recorder()
    let deadLetters = Recorder()

    init(_ system: ActorSystem) {
        system.events.observeValues { [unhandled, failures, deadLetters] event in
            switch event {
            case let .unhandled(address, message): unhandled.record("\(address.path): \(message)")
            case let .failed(address, error): failures.record("\(address.path): \(error)")
            case let .deadLetter(letter): deadLetters.record("\(letter.recipient.path): \(letter.message)")
            default: break
            }
        }
    }
}

@Suite("docs/Actors.md")
struct ActorsDocTests {
    // MARK: Getting started

    @Test func gettingStarted_onTheDefaultPool() async throws {
        let system = ActorSystem(name: "hello")
        let greeterRef = try system.spawn(greeter(greeting: "Hello"), name: "greeter")   // /user/greeter
        #expect(greeterRef.path == "/user/greeter")
        greeterRef.tell(.changeGreeting("Good morning"))
        let reply = try await greeterRef.ask(timeout: .seconds(1)) { .greet(name: "Ada", replyTo: $0) }
        // reply == "Good morning, Ada!": one sender's messages are handled in the order sent
        #expect(reply == "Good morning, Ada!")
        let report = await system.shutdown()    // report.isClean
        #expect(report.isClean)
    }

    @Test func gettingStarted_onATestScheduler() throws {
        let scheduler = TestScheduler()
        let system = ActorSystem(name: "guide", configuration: .init(scheduler: scheduler, logHandler: nil))
        let log = Recorder()
        let greeterRef = try system.spawn(greeter(greeting: "Hello"), name: "greeter")
        let inbox: ActorRef<String> = try system.spawn(logging(into: log), name: "inbox")
        greeterRef.tell(.greet(name: "Ada", replyTo: inbox))
        // nothing has run yet: log.all == []
        #expect(log.all == [])
        scheduler.advance(by: .nanoseconds(0))    // log.all == ["Hello, Ada!"]
        #expect(log.all == ["Hello, Ada!"])
    }

    // MARK: Behaviors

    @Test func behaviors_stateSwitchAndTheFourResults() throws {
        let scheduler = TestScheduler()
        let system = ActorSystem(name: "guide", configuration: .init(scheduler: scheduler, logHandler: nil))
        let log = Recorder()
        let events = DocEventLog(system)
        let tallyRef = try system.spawn(tally(from: 10), name: "tally")
        let totals: ActorRef<Int> = try system.spawn(logging(into: log), name: "totals")
        tallyRef.tell(.add(5))
        tallyRef.tell(.add(-1))
        tallyRef.tell(.report(replyTo: totals))
        tallyRef.tell(.reset)
        tallyRef.tell(.report(replyTo: totals))
        tallyRef.tell(.close)
        tallyRef.tell(.add(1))                    // after the stop: a dead letter
        scheduler.advance(by: .nanoseconds(0))    // log.all == ["15", "0"]
        #expect(log.all == ["15", "0"])
        #expect(events.unhandled.all == ["/user/tally: add(-1)"])
        #expect(events.deadLetters.all == ["/user/tally: add(1)"])
        #expect(system.topLevelActors.map(\.path) == ["/user/totals"])
    }

    @Test func behaviors_ignoreAndEmpty() throws {
        let scheduler = TestScheduler()
        let system = ActorSystem(name: "guide", configuration: .init(scheduler: scheduler, logHandler: nil))
        let events = DocEventLog(system)
        let sink = try system.spawn(Behavior<String>.ignore, name: "sink")    // drops every message
        let wall = try system.spawn(Behavior<String>.empty, name: "wall")     // every message is unhandled
        sink.tell("hello")
        wall.tell("hello")
        scheduler.advance(by: .nanoseconds(0))
        #expect(events.unhandled.all == ["/user/wall: hello"])
        #expect(events.deadLetters.all == [])
    }

    @Test func behaviors_lifecycleEvents_postStop() throws {
        let scheduler = TestScheduler()
        let system = ActorSystem(name: "guide", configuration: .init(scheduler: scheduler, logHandler: nil))
        let log = Recorder()
        let file = try system.spawn(resource(log: log), name: "file")
        file.tell("reading")
        file.tell("close")
        scheduler.advance(by: .nanoseconds(0))    // log.all == ["used for reading", "used for close", "file released"]
        #expect(log.all == ["used for reading", "used for close", "file released"])
    }

    @Test func behaviors_stoppedWithPostStop_runsAfterThePostStopEvent() throws {
        let scheduler = TestScheduler()
        let system = ActorSystem(name: "guide", configuration: .init(scheduler: scheduler, logHandler: nil))
        let log = Recorder()
        let ref = try system.spawn(Behavior<String>.receiveMessage { _ in
            .stopped(postStop: { log.record("closure") })
        }.receiveLifecycle { _, event in
            guard case .postStop = event else { return .unhandled }
            log.record("event")
            return .same
        }, name: "brief")
        ref.tell("bye")
        scheduler.advance(by: .nanoseconds(0))
        #expect(log.all == ["event", "closure"])
    }

    @Test func behaviors_abstractBehaviorObject() throws {
        let scheduler = TestScheduler()
        let system = ActorSystem(name: "guide", configuration: .init(scheduler: scheduler, logHandler: nil))
        let log = Recorder()
        let account = try system.spawn(.object { context in Account(context: context) }, name: "account")
        let balances: ActorRef<Int> = try system.spawn(logging(into: log), name: "balances")
        account.tell(.deposit(30))
        account.tell(.deposit(12))
        account.tell(.balance(replyTo: balances))
        scheduler.advance(by: .nanoseconds(0))    // log.all == ["42"]
        #expect(log.all == ["42"])
    }

    // MARK: Failures

    @Test func failures_stopTheActorAndArePublished() throws {
        let scheduler = TestScheduler()
        let system = ActorSystem(name: "guide", configuration: .init(scheduler: scheduler, logHandler: nil))
        let log = Recorder()
        system.events.observeValues { event in
            if case let .failed(address, error) = event { log.record("\(address.path) failed: \(error)") }
        }
        let cashier = try system.spawn(Behavior<Int>.receiveMessage { amount in
            if amount > 100 { throw PaymentDeclined() }
            return .same
        }, name: "cashier")
        cashier.tell(500)
        scheduler.advance(by: .nanoseconds(0))    // log.all == ["/user/cashier failed: PaymentDeclined()"]
        #expect(log.all == ["/user/cashier failed: PaymentDeclined()"])
        // cashier.tell(5) == .dropped(.recipientTerminated)
        #expect(cashier.tell(5) == .dropped(.recipientTerminated))
    }

    @Test func failures_areLoggedThroughTheLogHandler() throws {
        let scheduler = TestScheduler()
        let lines = Recorder()
        let system = ActorSystem(name: "guide", configuration: .init(scheduler: scheduler, logHandler: { lines.record($0) }))
        let cashier = try system.spawn(Behavior<Int>.receiveMessage { _ in throw PaymentDeclined() }, name: "cashier")
        cashier.tell(500)
        scheduler.advance(by: .nanoseconds(0))
        #expect(lines.all == ["[guide] actor /user/cashier failed: PaymentDeclined(); stop"])
    }

    // MARK: Ask

    @Test func askFromOutside_timesOutWithAnErrorNamingTargetTypeAndTimeout() async throws {
        let scheduler = TestScheduler()
        let system = ActorSystem(name: "guide", configuration: .init(scheduler: scheduler, logHandler: nil))
        let outcome = Recorder()
        let silent = try system.spawn(Behavior<GreeterMessage>.ignore, name: "silent")
        let asking = Task {
            do {
                _ = try await silent.ask(timeout: .seconds(2)) { .greet(name: "Ada", replyTo: $0) }
            } catch let error as AskError {
                // error.code == .timedOut
                #expect(error.code == .timedOut)
                // "\(error)" == "ask to /user/silent with GreeterMessage timed out after 2.0 seconds"
                outcome.record("\(error)")
            }
        }
        // The actor's start run and the ask's time-out are on the virtual clock: then advance.
        #expect(await docWaitForPendingActions(scheduler, atLeast: 2))
        scheduler.advance(by: .nanoseconds(0))
        scheduler.advance(by: .seconds(2))
        try await asking.value
        #expect(outcome.all == ["ask to /user/silent with GreeterMessage timed out after 2.0 seconds"])
    }

    @Test func askFromOutside_toATerminatedActor_failsAtOnceAsNotDelivered() async throws {
        let scheduler = TestScheduler()
        let system = ActorSystem(name: "guide", configuration: .init(scheduler: scheduler, logHandler: nil))
        let gone = try system.spawn(Behavior<GreeterMessage>.receiveMessage { _ in .stopped }, name: "gone")
        gone.tell(.changeGreeting("bye"))
        scheduler.advance(by: .nanoseconds(0))
        let error = await #expect(throws: AskError.self) {
            try await gone.ask(timeout: .seconds(1)) { .greet(name: "Ada", replyTo: $0) }
        }
        #expect(error?.code == .notDelivered)
        #expect(error?.deliveryFailure == .recipientTerminated)
    }

    @Test func askFromInside_replyAndTimeoutArriveAsMessages() throws {
        let scheduler = TestScheduler()
        let system = ActorSystem(name: "guide", configuration: .init(scheduler: scheduler, logHandler: nil))
        let log = Recorder()
        let silent = try system.spawn(Behavior<GreeterMessage>.ignore, name: "silent")
        let greeterRef = try system.spawn(greeter(greeting: "Welcome"), name: "greeter")
        let hostRef = try system.spawn(host(greeter: greeterRef, log: log), name: "host")
        let lonelyHost = try system.spawn(host(greeter: silent, log: log), name: "lonely-host")
        hostRef.tell(.welcome("Grace"))
        lonelyHost.tell(.welcome("Alan"))
        scheduler.advance(by: .nanoseconds(0))    // log.all == ["Welcome, Grace!"]
        #expect(log.all == ["Welcome, Grace!"])
        scheduler.advance(by: .seconds(1))        // + "no greeting: ask to /user/silent with GreeterMessage timed out after 1.0 seconds"
        #expect(log.all == ["Welcome, Grace!", "no greeting: ask to /user/silent with GreeterMessage timed out after 1.0 seconds"])
    }

    @Test func pipeToSelf_resultComesBackAsAMessage() async throws {
        let scheduler = TestScheduler()
        let system = ActorSystem(name: "guide", configuration: .init(scheduler: scheduler, logHandler: nil))
        let log = Recorder()
        let sizer = try system.spawn(pageSizer(download: { url in "<html>\(url)</html>" }, log: log), name: "sizer")
        sizer.tell(.fetch("example.com"))
        // The download runs in a Task, in real time; its result's `tell` schedules a mailbox run
        // on the virtual clock. Run what is due until the result has been handled.
        #expect(await docAdvanceUntil(scheduler) { !log.all.isEmpty })
        #expect(log.all == ["24 characters"])
    }

    // MARK: Timers

    @Test func timers_fixedRateSingleAndCancelledOnStop() throws {
        let scheduler = TestScheduler()
        let system = ActorSystem(name: "guide", configuration: .init(scheduler: scheduler, logHandler: nil))
        let log = Recorder()
        try system.spawn(heartbeat(log: log), name: "heartbeat")
        scheduler.advance(by: .seconds(2))        // log.all == ["beat", "beat"]
        #expect(log.all == ["beat", "beat"])
        scheduler.advance(by: .seconds(10))       // log.all == ["beat", "beat", "beat", "deadline"]
        #expect(log.all == ["beat", "beat", "beat", "deadline"])
        // scheduler.pendingActionCount == 0: no timer is left
        #expect(scheduler.pendingActionCount == 0)
    }

    /// The timeline in the doc: an actor that cannot run from 1 s to 3 s receives the missed
    /// fixed-rate ticks together at 3 s, while a fixed-delay timer is armed again only when its
    /// tick is handled.
    @Test func timers_fixedRateVersusFixedDelay_whenTheActorIsBlocked() throws {
        let scheduler = TestScheduler()
        let system = ActorSystem(name: "guide", configuration: .init(scheduler: scheduler, logHandler: nil))
        let blockable = DocBlockableScheduler(base: scheduler)
        let rate = Recorder()
        let delay = Recorder()
        func ticker(_ log: Recorder, start: @escaping (TimerScheduler<String>) -> Void) -> Behavior<String> {
            .setup { context in
                start(context.timers)
                return .receive { context, message in
                    log.record("\(message)@\(Int(context.scheduler.currentDate.timeIntervalSince(scheduler.startDate)))")
                    return .same
                }
            }
        }
        try system.spawn(ticker(rate) { $0.startTimerAtFixedRate(key: "t", message: "tick", interval: .seconds(1)) },
                         name: "rate", props: Props(scheduler: blockable))
        try system.spawn(ticker(delay) { $0.startTimerWithFixedDelay(key: "t", message: "tick", delay: .seconds(1)) },
                         name: "delay", props: Props(scheduler: blockable))
        scheduler.advance(by: .milliseconds(500))
        blockable.block()
        scheduler.advance(by: .milliseconds(2_500))     // to 3 s: the ticks wait
        #expect(rate.all == [] && delay.all == [])
        blockable.unblock()
        scheduler.advance(by: .nanoseconds(0))
        #expect(rate.all == ["tick@3", "tick@3", "tick@3"])
        #expect(delay.all == ["tick@3"])
        scheduler.advance(by: .seconds(2))
        #expect(rate.all == ["tick@3", "tick@3", "tick@3", "tick@4", "tick@5"])
        #expect(delay.all == ["tick@3", "tick@4", "tick@5"])
    }

    // MARK: Stash

    @Test func stash_unstashAllReplaysInOrder() throws {
        let scheduler = TestScheduler()
        let system = ActorSystem(name: "guide", configuration: .init(scheduler: scheduler, logHandler: nil))
        let log = Recorder()
        let connection = try system.spawn(connecting(log: log), name: "connection")
        connection.tell(.send("a"))
        connection.tell(.send("b"))
        connection.tell(.connected)
        connection.tell(.send("c"))
        scheduler.advance(by: .nanoseconds(0))    // log.all == ["sent a", "sent b", "sent c"]
        #expect(log.all == ["sent a", "sent b", "sent c"])
    }

    @Test func stash_overflowIsAFailure() throws {
        let scheduler = TestScheduler()
        let system = ActorSystem(name: "guide", configuration: .init(scheduler: scheduler, logHandler: nil))
        let log = Recorder()
        let events = DocEventLog(system)
        let tight = try system.spawn(connecting(log: log), name: "tight", props: Props(stashCapacity: 1))
        tight.tell(.send("a"))
        tight.tell(.send("b"))                    // the stash is full: StashOverflowError, the actor fails
        scheduler.advance(by: .nanoseconds(0))
        #expect(events.failures.all == ["/user/tight: stash of /user/tight is full (capacity 1)"])
        #expect(tight.tell(.connected) == .dropped(.recipientTerminated))
    }

    // MARK: Children, paths and names

    @Test func children_pathsNamesAndErrors() throws {
        let scheduler = TestScheduler()
        let system = ActorSystem(name: "guide", configuration: .init(scheduler: scheduler, logHandler: nil))
        let log = Recorder()
        let lobbyRef = try system.spawn(lobby(log: log), name: "lobby")
        do {
            try system.spawn(Behavior<String>.ignore, name: "lobby")
            Issue.record("a second top-level 'lobby' was spawned")
        } catch let error as ActorSystemError {
            // error.code == .duplicateName
            #expect(error.code == .duplicateName)
            // "\(error)" == "an actor named 'lobby' already exists under /user"
            #expect("\(error)" == "an actor named 'lobby' already exists under /user")
        }
        do {
            try system.spawn(Behavior<String>.ignore, name: "front desk")
            Issue.record("an invalid name was accepted")
        } catch let error as ActorSystemError {
            // error.code == .invalidName; "\(error)" says "' ' is not allowed"
            #expect(error.code == .invalidName)
            #expect("\(error)".contains("' ' is not allowed"))
        }
        scheduler.advance(by: .nanoseconds(0))
        #expect(lobbyRef.path == "/user/lobby")
        #expect(log.all == ["/user/lobby/alice", "alice $a1"])
    }

    @Test func children_nameRules() throws {
        let scheduler = TestScheduler()
        let system = ActorSystem(name: "guide", configuration: .init(scheduler: scheduler, logHandler: nil))
        for valid in ["a", "A-b_c.d*e$f+g:h@i&j=k,l!m~n'o;p", String(repeating: "x", count: 255)] {
            #expect(throws: Never.self) { try system.spawn(Behavior<String>.ignore, name: valid) }
        }
        for invalid in ["", "$reserved", "a/b", "é", String(repeating: "x", count: 256)] {
            let error = #expect(throws: ActorSystemError.self) { try system.spawn(Behavior<String>.ignore, name: invalid) }
            #expect(error?.code == .invalidName, "\(invalid)")
        }
        system.beginShutdown()
        let late = #expect(throws: ActorSystemError.self) { try system.spawn(Behavior<String>.ignore, name: "late") }
        #expect(late?.code == .shuttingDown)
    }

    // MARK: Death watch

    @Test func deathWatch_exactlyOnce_atOnceIfAlreadyTerminated() throws {
        let scheduler = TestScheduler()
        let system = ActorSystem(name: "guide", configuration: .init(scheduler: scheduler, logHandler: nil))
        let log = Recorder()
        let worker = try system.spawn(Behavior<String>.receiveMessage { _ in .stopped }, name: "worker")
        let janitorRef = try system.spawn(janitor(log: log), name: "janitor")
        janitorRef.tell(worker)
        janitorRef.tell(worker)                   // watching twice still means one event
        scheduler.advance(by: .nanoseconds(0))
        worker.tell("quit")
        scheduler.advance(by: .nanoseconds(0))    // log.all == ["/user/worker terminated"]
        #expect(log.all == ["/user/worker terminated"])
        janitorRef.tell(worker)                   // already terminated: the event comes at once
        scheduler.advance(by: .nanoseconds(0))    // log.all == ["/user/worker terminated", "/user/worker terminated"]
        #expect(log.all == ["/user/worker terminated", "/user/worker terminated"])
    }

    @Test func deathWatch_unhandledTerminatedIsADeathPact() throws {
        let scheduler = TestScheduler()
        let system = ActorSystem(name: "guide", configuration: .init(scheduler: scheduler, logHandler: nil))
        let events = DocEventLog(system)
        let worker = try system.spawn(Behavior<String>.receiveMessage { _ in .stopped }, name: "worker")
        let pact = try system.spawn(Behavior<String>.setup { context in
            context.watch(worker)
            return .ignore                        // no lifecycle handler: `terminated` will be unhandled
        }, name: "pact")
        scheduler.advance(by: .nanoseconds(0))
        worker.tell("quit")
        scheduler.advance(by: .nanoseconds(0))    // pact failed with DeathPactError, and has terminated
        #expect(events.failures.all == ["/user/pact: death pact: watched actor /user/worker terminated and the termination was not handled"])
        #expect(pact.tell("anyone?") == .dropped(.recipientTerminated))
    }

    @Test func deathWatch_withACustomMessage_andUnwatch() throws {
        let scheduler = TestScheduler()
        let system = ActorSystem(name: "guide", configuration: .init(scheduler: scheduler, logHandler: nil))
        let log = Recorder()
        let first = try system.spawn(Behavior<String>.receiveMessage { _ in .stopped }, name: "first")
        let second = try system.spawn(Behavior<String>.receiveMessage { _ in .stopped }, name: "second")
        try system.spawn(Behavior<String>.setup { context in
            context.watch(first, with: "first is gone")
            context.watch(second, with: "second is gone")
            context.unwatch(second)
            return logging(into: log)
        }, name: "watcher")
        scheduler.advance(by: .nanoseconds(0))
        first.tell("quit")
        second.tell("quit")
        scheduler.advance(by: .nanoseconds(0))    // log.all == ["first is gone"]
        #expect(log.all == ["first is gone"])
    }

    @Test func deathWatch_childFailed() throws {
        let scheduler = TestScheduler()
        let system = ActorSystem(name: "guide", configuration: .init(scheduler: scheduler, logHandler: nil))
        let log = Recorder()
        let parentRef = try system.spawn(parent(log: log), name: "parent")
        parentRef.tell(1)
        scheduler.advance(by: .nanoseconds(0))    // log.all == ["/user/parent/child failed with PaymentDeclined(); children left: 0"]
        #expect(log.all == ["/user/parent/child failed with PaymentDeclined(); children left: 0"])
    }

    @Test func deathWatch_failedChildIsTerminatedToo() throws {
        let scheduler = TestScheduler()
        let events = Recorder()
        let system = ActorSystem(name: "guide", configuration: .init(scheduler: scheduler, logHandler: nil))
        system.events.observeValues { event in
            if case let .failed(address, error) = event { events.record("\(address.path): \(error)") }
        }
        let log = Recorder()
        let foremanRef = try system.spawn(foreman(log: log), name: "foreman")
        scheduler.advance(by: .nanoseconds(0))    // log.all == ["/user/foreman/child is gone"]: no death pact
        #expect(log.all == ["/user/foreman/child is gone"])
        #expect(events.all == ["/user/foreman/child: PaymentDeclined()"])
        #expect(foremanRef.tell(1) == .enqueued)
    }

    // MARK: Message adapters

    @Test func messageAdapter_convertsAnotherActorsReplies() throws {
        let scheduler = TestScheduler()
        let system = ActorSystem(name: "guide", configuration: .init(scheduler: scheduler, logHandler: nil))
        let log = Recorder()
        let greeterRef = try system.spawn(greeter(greeting: "Hi"), name: "greeter")
        let desk = try system.spawn(reception(greeter: greeterRef, log: log), name: "desk")
        desk.tell(.arrive("Barbara"))
        scheduler.advance(by: .nanoseconds(0))    // log.all == ["Hi, Barbara!"]
        #expect(log.all == ["Hi, Barbara!"])
    }

    // MARK: Stopping

    @Test func stopping_isPostOrder() throws {
        let scheduler = TestScheduler()
        let system = ActorSystem(name: "guide", configuration: .init(scheduler: scheduler, logHandler: nil))
        let log = Recorder()
        let root = try system.spawn(chain(["parent", "child", "grandchild"], log: log), name: "parent")
        scheduler.advance(by: .nanoseconds(0))
        root.tell("stop")
        scheduler.advance(by: .nanoseconds(0))    // log.all == ["grandchild stopped", "child stopped", "parent stopped"]
        #expect(log.all == ["grandchild stopped", "child stopped", "parent stopped"])
    }

    @Test func stopping_watchersAreToldAfterPostStop() throws {
        let scheduler = TestScheduler()
        let system = ActorSystem(name: "guide", configuration: .init(scheduler: scheduler, logHandler: nil))
        let log = Recorder()
        let root = try system.spawn(chain(["parent", "child"], log: log), name: "parent")
        try system.spawn(janitor(log: log), name: "janitor").tell(root)
        scheduler.advance(by: .nanoseconds(0))
        root.tell("stop")
        scheduler.advance(by: .nanoseconds(0))
        #expect(log.all == ["child stopped", "parent stopped", "/user/parent terminated"])
    }

    // MARK: Shutdown

    @Test func shutdown_reportsActorsThatDidNotStop() async throws {
        let scheduler = TestScheduler()
        let system = ActorSystem(name: "guide", configuration: .init(scheduler: scheduler, logHandler: nil))
        let stalled = TestScheduler()           // nobody advances it: its actor can never stop
        try system.spawn(Behavior<String>.ignore, name: "stuck", props: Props(scheduler: stalled))
        let report = await system.shutdown(timeout: .milliseconds(100))
        // report.isClean == false, report.actorsNotStopped.map(\.path) == ["/user/stuck"]
        #expect(report.isClean == false)
        #expect(report.actorsNotStopped.map(\.path) == ["/user/stuck"])
        // "\(report)" == "shutdown timed out; still running: /user/stuck"
        #expect("\(report)" == "shutdown timed out; still running: /user/stuck")
    }

    @Test func shutdown_onATestScheduler_beginAdvanceAwait() async throws {
        let scheduler = TestScheduler()
        let system = ActorSystem(name: "guide", configuration: .init(scheduler: scheduler, logHandler: nil))
        let log = Recorder()
        try system.spawn(chain(["parent", "child"], log: log), name: "parent")
        system.beginShutdown()                    // new spawns throw; every top-level actor is told to stop
        scheduler.advance(by: .nanoseconds(0))    // they stop, children first
        let report = await system.shutdown()      // nothing left to wait for: report.isClean
        #expect(report.isClean)
        #expect(log.all == ["child stopped", "parent stopped"])
    }

    @Test func shutdown_queuedMessagesBecomeDeadLetters() async throws {
        let scheduler = TestScheduler()
        let system = ActorSystem(name: "guide", configuration: .init(scheduler: scheduler, logHandler: nil))
        let log = Recorder()
        let busy: ActorRef<String> = try system.spawn(logging(into: log), name: "busy")
        scheduler.advance(by: .nanoseconds(0))
        busy.tell("unfinished")
        system.beginShutdown()
        scheduler.advance(by: .nanoseconds(0))
        let report = await system.shutdown()
        #expect(report.isClean)
        #expect(log.all == [], "the stop (a system message) came before the queued message")
        #expect(system.deadLetterCount == 1)
    }

    // MARK: Coordinated shutdown

    @Test func coordinatedShutdown_phasesRunInOrder_thenTheCallbacks() async throws {
        // Phase time-outs on virtual time: this test is about order, and a task's Swift `Task`
        // can wait seconds for a thread of a starved cooperative pool (the whole suite under
        // ThreadSanitizer on two cores), which a real 5 s time-out would count as a failure.
        let system = ActorSystem(name: "svc", configuration: .init(
            scheduler: ImmediateScheduler(), timerScheduler: TestScheduler(), logHandler: nil))
        let log = Recorder()
        let shutdown = system.coordinatedShutdown
        try shutdown.addTask(phase: .serviceRequestsDone, name: "drain") { log.record("drain") }
        try shutdown.addTask(phase: .serviceUnbind, name: "unbind") { log.record("unbind") }
        system.registerOnTermination { log.record("terminated") }
        let report = await system.terminate()
        // log.all == ["unbind", "drain", "terminated"]; report.isClean, report.reason == .actorSystemTerminate
        #expect(log.all == ["unbind", "drain", "terminated"])
        #expect(report.isClean && report.reason == .actorSystemTerminate)
    }

    @Test func coordinatedShutdown_phaseTimeOut_onVirtualTime() async throws {
        let started = AsyncGate()
        let timers = TestScheduler()
        let system = ActorSystem(name: "svc", configuration: .init(
            scheduler: ImmediateScheduler(), timerScheduler: timers, logHandler: nil))
        try system.coordinatedShutdown.addTask(phase: .serviceUnbind, name: "stuck") {
            started.open(true)
            try await Task.sleep(for: .seconds(3600))        // ends only when cancelled
        }
        let termination = Task { await system.terminate() }
        // … once the task runs:
        #expect(await started.wait())
        timers.advance(by: .seconds(5))                      // service-unbind times out; the rest runs
        let report = await termination.value
        // report.failedTasks.map(\.description)
        //   == ["shutdown task 'stuck' in phase service-unbind timed out after 5.0 seconds"]
        #expect(report.failedTasks.map(\.description)
            == ["shutdown task 'stuck' in phase service-unbind timed out after 5.0 seconds"])
    }

    // MARK: Events and dead letters

    @Test func events_andDeadLetters() throws {
        let scheduler = TestScheduler()
        let system = ActorSystem(name: "guide", configuration: .init(scheduler: scheduler, logHandler: nil))
        let log = Recorder()
        system.events.observeValues { event in log.record("\(event)") }
        system.deadLetters.observeValues { letter in log.record("dead letter: \(letter.message), \(letter.reason)") }
        let echo = try system.spawn(Behavior<String>.receiveMessage { _ in .stopped }, name: "echo")
        echo.tell("first")
        scheduler.advance(by: .nanoseconds(0))
        echo.tell("second")
        // log.all == ["spawned /user/echo", "stopped /user/echo",
        //             "dead letter to /user/echo (recipient terminated): second", "dead letter: second, recipient terminated"]
        #expect(log.all == ["spawned /user/echo", "stopped /user/echo",
                            "dead letter to /user/echo (recipient terminated): second", "dead letter: second, recipient terminated"])
        // system.deadLetterCount == 1, system.droppedCount == 0
        #expect(system.deadLetterCount == 1)
        #expect(system.droppedCount == 0)
    }

    // MARK: Notes for Swift programmers

    /// Main-actor code spawns behaviors made by nonisolated functions (an inline closure would
    /// be main-actor isolated, and `spawn` would refuse to take it).
    @MainActor @Test func mainActorCode_spawnsBehaviorsFromFunctions() async throws {
        let scheduler = TestScheduler()
        let system = ActorSystem(name: "guide", configuration: .init(scheduler: scheduler, logHandler: nil))
        let log = Recorder()
        let greeterRef = try system.spawn(greeter(greeting: "Hello"), name: "greeter")
        let inbox: ActorRef<String> = try system.spawn(logging(into: log), name: "inbox")
        greeterRef.tell(.greet(name: "main actor", replyTo: inbox))
        scheduler.advance(by: .nanoseconds(0))
        #expect(log.all == ["Hello, main actor!"])
    }

    @Test func myself_isTheActorsOwnRef() throws {
        let scheduler = TestScheduler()
        let system = ActorSystem(name: "guide", configuration: .init(scheduler: scheduler, logHandler: nil))
        let log = Recorder()
        let ref = try system.spawn(Behavior<String>.setup { context in
            log.record(context.myself.path)
            return .ignore
        }, name: "me")
        scheduler.advance(by: .nanoseconds(0))
        #expect(log.all == [ref.path])
    }

    // MARK: - The doc and these tests stay in sync

    @Test func snippetsOfTheDoc_appearInTheseTests() throws {
        try docExpectSnippets(of: "docs/Actors.md", count: 43, inTestFile: #filePath)
    }
}

/// Checks that every ```swift block of `doc` appears in `testFile`, line by line, in order (a
/// subsequence: assertions may sit between the lines), and that the doc has `count` blocks.
func docExpectSnippets(of doc: String, count: Int, inTestFile testFile: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
    let markdown = try String(contentsOf: SchedulersDocTests.packageRoot.appendingPathComponent(doc), encoding: .utf8)
    let tests = try String(contentsOf: URL(fileURLWithPath: testFile), encoding: .utf8)
    let testLines = tests.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
    let snippets = SchedulersDocTests.swiftSnippets(of: markdown)
    #expect(snippets.count == count, "\(doc) gained or lost a snippet: add or remove its test", sourceLocation: sourceLocation)
    for snippet in snippets {
        var searchFrom = testLines.startIndex
        for line in snippet {
            guard let found = testLines[searchFrom...].firstIndex(of: line) else {
                Issue.record("\(doc) line not found (in order) in \(URL(fileURLWithPath: testFile).lastPathComponent): \(line)", sourceLocation: sourceLocation)
                break
            }
            searchFrom = testLines.index(after: found)
        }
    }
}

// MARK: - Coordinated shutdown: the signal hook

/// The signal snippet of "Coordinated shutdown", compiled but never run (it ends the process);
/// `CoordinatedShutdownTests` tests the hook with SIGUSR2.
func coordinatedShutdownSignalSnippet(_ system: ActorSystem) -> Never {
    system.coordinatedShutdown.installSignalHandlers([SIGINT, SIGTERM])
    Task {
        _ = await system.whenTerminated
        exit(0)
    }
    dispatchMain()
}

// MARK: - Findings: behaviour that differs from the API's doc comments

@Suite("docs/Actors.md: findings")
struct ActorsDocFindings {
    /// `ActorContext.messageAdapter` says "Watching the adapter watches this actor". (Once a bug:
    /// the watch was filed under the adapter while `terminated` named the owner.)
    @Test
    func watchingAMessageAdapter_deliversTerminatedWhenItsOwnerStops() throws {
        let scheduler = TestScheduler()
        let system = ActorSystem(name: "guide", configuration: .init(scheduler: scheduler, logHandler: nil))
        let log = Recorder()
        let adapter = Locked<ActorRef<String>?>(nil)
        let owner = try system.spawn(Behavior<Int>.setup { context in
            adapter.withLock { $0 = context.messageAdapter { (text: String) in text.count } }
            return .receiveMessage { _ in .stopped }
        }, name: "owner")
        let janitorRef = try system.spawn(janitor(log: log), name: "janitor")
        scheduler.advance(by: .nanoseconds(0))
        janitorRef.tell(try #require(adapter.snapshot))
        scheduler.advance(by: .nanoseconds(0))
        owner.tell(0)
        scheduler.advance(by: .nanoseconds(0))
        #expect(system.topLevelActors.map(\.path) == ["/user/janitor"], "the owner has terminated")
        #expect(log.all.count == 1, "the watcher of the adapter was not told: \(log.all)")
    }

    /// A stopping actor stops its children newest first, as an OTP supervisor does, so a run on
    /// a `TestScheduler` is reproducible. (Once a bug: they stopped in `Dictionary` order, which
    /// Swift's per-process hash seed changes from run to run.)
    @Test
    func siblingsStopInReverseStartOrder() throws {
        let scheduler = TestScheduler()
        let system = ActorSystem(name: "guide", configuration: .init(scheduler: scheduler, logHandler: nil))
        let log = Recorder()
        let names = (0..<8).map { "c\($0)" }
        let parentRef = try system.spawn(Behavior<String>.setup { context in
            for name in names {
                try context.spawn(chain([name], log: log), name: name)
            }
            return .receiveMessage { _ in .stopped }
        }, name: "p")
        scheduler.advance(by: .nanoseconds(0))
        parentRef.tell("stop")
        scheduler.advance(by: .nanoseconds(0))
        #expect(log.all == names.reversed().map { "\($0) stopped" })
    }
}
