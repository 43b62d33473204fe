import Foundation
import Mailbox

/// An actor for tests: whatever is told to `ref` is queued, and the test *expects* it —
/// `expectMessage`, `expectNoMessage(for:)`, `expectTerminated`, `receiveMessages`.
///
/// ```swift
/// let scheduler = TestScheduler()
/// let system = ActorSystem(configuration: .init(scheduler: scheduler, logHandler: nil))
/// let probe = try TestProbe<String>(system: system)
/// echo.tell(.say("hi", replyTo: probe.ref))
/// #expect(try probe.expectMessage() == "hi")          // on virtual time: no real waiting
/// ```
///
/// **Virtual time.** When the system runs on a `TestScheduler` (directly, or wrapped by a
/// `FaultyScheduler`), an expectation never waits on the wall clock: it runs what is due, then
/// advances the scheduler step by step to the next scheduled action — never past the
/// expectation's deadline — until the expectation is met or the deadline is reached. A met
/// expectation leaves the clock where the message arrived; a failed one leaves it exactly at the
/// deadline; `expectNoMessage(for: d)` moves it by exactly `d`. Otherwise (a pool or queue
/// scheduler) the probe waits on a condition variable with a wall-clock time-out.
///
/// ```
/// virtual time ─0───────1s──────────2s──────────3s──▶
///  expectMessage(within: 3s)        ▲ message arrives at 2s: returns, clock stays at 2s
///  expectNoMessage(for: 3s)  steps 0 → 1s → 2s → 3s: fails at 2s if anything arrives
/// ```
///
/// Thread-safety: the probe may be used from any thread, one expectation at a time. On a
/// `TestScheduler` expectations advance the scheduler, so they must come from the test's own
/// thread — never from inside an actor or an action of that scheduler (a precondition failure
/// of `TestScheduler`), and not while another thread advances it.
///
/// Failure modes: a failed expectation throws `ProbeError` (never a test-framework failure:
/// the library imports neither Testing nor XCTest). Messages that arrive after `stop()` become
/// dead letters.
///
/// What keeps what alive: the probe's actor lives until `stop()` or the system's shutdown.
public final class TestProbe<Message: Sendable>: Sendable {
    /// The probe's actor: tell it messages, or hand it out as a reply ref.
    public let ref: ActorRef<Message>
    /// The system the probe lives in.
    public let system: ActorSystem
    /// The virtual clock the probe drives, or `nil` when it waits on the wall clock.
    public let virtualClock: TestScheduler?

    private let inbox: _ProbeInbox<Message>
    /// Watcher actors, by watched actor; protected by its lock.
    private let watchers = LockedValueBox([AnyActorRef: ActorRef<_WatcherMessage>]())

    /// The default time an expectation waits.
    public static var defaultTimeout: Duration { .seconds(3) }

    /// Spawns a probe as a top-level actor of `system`, named `name` (a generated name if `nil`).
    ///
    /// - Parameter virtualClock: The `TestScheduler` to drive; by default the system's
    ///   scheduler if it is one (or a `FaultyScheduler` around one), else none (wall clock).
    /// - Throws: `ActorSystemError` if the name is invalid or taken, or the system is shutting
    ///   down.
    public init(system: ActorSystem, name: String? = nil, virtualClock: TestScheduler? = nil) throws {
        let inbox = _ProbeInbox<Message>()
        let behavior = Behavior<Message>.receiveMessage { message in
            inbox.append(message)
            return .same
        }
        self.inbox = inbox
        self.system = system
        self.virtualClock = virtualClock ?? _virtualClock(of: system)
        if let name {
            self.ref = try system.spawn(behavior, name: name)
        } else {
            self.ref = try system.spawnAnonymous(behavior)
        }
    }

    /// Messages received and not yet expected, oldest first.
    public var queuedMessages: [Message] {
        inbox.snapshot
    }

    // MARK: Expecting messages

    /// Waits up to `timeout` for the next message and returns it.
    ///
    /// - Throws: `ProbeError` with code `.timedOut` if no message arrives in time.
    @discardableResult
    public func expectMessage(within timeout: Duration = TestProbe.defaultTimeout) throws -> Message {
        let (message, waited) = waitFor(within: timeout) { $0.popMessage() }
        guard let message else { throw failure(.timedOut, expected: "a message", received: [], waited: waited) }
        return message
    }

    /// Waits up to `timeout` for the next message and checks that it satisfies `predicate`.
    ///
    /// - Parameter description: Says what is expected, for the error message.
    /// - Throws: `ProbeError` with code `.timedOut`, or `.mismatch` if the next message does not
    ///   satisfy `predicate` (that message is consumed).
    @discardableResult
    public func expectMessage(
        within timeout: Duration = TestProbe.defaultTimeout,
        _ description: String = "a message matching the predicate",
        where predicate: (Message) throws -> Bool
    ) throws -> Message {
        let (message, waited) = waitFor(within: timeout) { $0.popMessage() }
        guard let message else { throw failure(.timedOut, expected: description, received: [], waited: waited) }
        guard try predicate(message) else {
            throw failure(.mismatch, expected: description, received: ["\(message)"], waited: waited)
        }
        return message
    }

    /// Waits up to `timeout` for a message that satisfies `predicate`, discarding the messages
    /// before it (Akka's `fishForMessage`).
    ///
    /// - Throws: `ProbeError` with code `.timedOut`, listing the messages discarded.
    @discardableResult
    public func fishForMessage(
        within timeout: Duration = TestProbe.defaultTimeout,
        _ description: String = "a message matching the predicate",
        where predicate: (Message) -> Bool
    ) throws -> Message {
        var skipped: [String] = []
        let (message, waited) = waitFor(within: timeout) { state -> Message? in
            while let message = state.popMessage() {
                if predicate(message) { return message }
                skipped.append("\(message)")
            }
            return nil
        }
        guard let message else { throw failure(.timedOut, expected: description, received: skipped, waited: waited) }
        return message
    }

    /// Waits until `count` messages have arrived (within `timeout` in all) and returns them in
    /// arrival order.
    ///
    /// - Throws: `ProbeError` with code `.timedOut`, listing those that did arrive (consumed).
    public func receiveMessages(_ count: Int, within timeout: Duration = TestProbe.defaultTimeout) throws -> [Message] {
        precondition(count >= 0, "receiveMessages needs a count of at least 0, not \(count)")
        var received: [Message] = []
        let (done, waited) = waitFor(within: timeout) { state -> Bool? in
            while received.count < count, let message = state.popMessage() {
                received.append(message)
            }
            return received.count == count ? true : nil
        }
        guard done != nil else {
            throw failure(.timedOut, expected: "\(count) messages", received: received.map { "\($0)" }, waited: waited)
        }
        return received
    }

    /// Checks that no message arrives for `duration`. On virtual time the clock moves by
    /// exactly `duration` (when the expectation holds).
    ///
    /// - Throws: `ProbeError` with code `.unexpectedMessage` as soon as a message arrives (it
    ///   is consumed), naming it and when it came.
    public func expectNoMessage(for duration: Duration) throws {
        let (message, waited) = waitFor(within: duration) { $0.popMessage() }
        if let message {
            throw failure(.unexpectedMessage, expected: "no message for \(duration)", received: ["\(message)"], waited: waited)
        }
    }

    // MARK: Death watch

    /// Watches `ref`: when it terminates, the probe records it for `expectTerminated`. Watching
    /// spawns a small anonymous top-level watcher actor, which stops once it has reported.
    /// Watching the same actor twice does nothing.
    ///
    /// - Throws: `ActorSystemError` if the system is shutting down.
    public func watch<Other: Sendable>(_ ref: ActorRef<Other>) throws {
        let key = ref.asAny
        try watchers.withLockedValue { watchers in
            guard watchers[key] == nil else { return }
            let inbox = self.inbox
            let watcher = try system.spawnAnonymous(Behavior<_WatcherMessage>.setup { context in
                context.watch(ref)
                return Behavior<_WatcherMessage>.receiveLifecycle { _, event in
                    guard case let .terminated(terminated) = event else { return .unhandled }
                    inbox.recordTermination(terminated)
                    return .stopped
                }
            })
            watchers[key] = watcher
        }
    }

    /// Waits up to `timeout` for `ref` to terminate (watching it first if the probe does not
    /// yet), and consumes that termination.
    ///
    /// - Throws: `ProbeError` with code `.timedOut` if `ref` is still alive at the deadline;
    ///   `ActorSystemError` if the watch cannot start because the system is shutting down.
    public func expectTerminated<Other: Sendable>(_ ref: ActorRef<Other>, within timeout: Duration = TestProbe.defaultTimeout) throws {
        try watch(ref)
        let key = ref.asAny
        let (found, waited) = waitFor(within: timeout) { $0.popTermination(of: key) }
        guard found != nil else {
            throw failure(.timedOut, expected: "\(ref.path) to terminate", received: [], waited: waited)
        }
        _ = watchers.withLockedValue { $0.removeValue(forKey: key) }
    }

    /// Stops the probe's actor and its watchers. On virtual time they stop when the scheduler
    /// next runs. Idempotent.
    public func stop() {
        ref.stopFromOutside()
        let watching = watchers.withLockedValue { watchers in
            defer { watchers.removeAll() }
            return Array(watchers.values)
        }
        for watcher in watching { watcher.stopFromOutside() }
    }

    // MARK: Waiting

    /// Polls `take` under the inbox lock until it returns a value or `timeout` passes, driving
    /// the virtual clock or waiting on the condition variable. Returns the value and the time
    /// waited.
    private func waitFor<T>(within timeout: Duration, _ take: (inout _ProbeInbox<Message>.State) -> T?) -> (T?, Duration) {
        precondition(timeout >= .zero, "a probe cannot wait a negative time (\(timeout))")
        if let clock = virtualClock {
            let start = clock.elapsed
            let value = clock._drive(until: _adding(start, timeout)) { inbox.withState(take) }
            return (value, clock.elapsed - start)
        }
        let start = ContinuousClock.now
        let value = inbox.wait(until: Date().addingTimeInterval(Double(timeout.nanosecondsValue) / 1e9), take)
        return (value, ContinuousClock.now - start)
    }

    private func failure(_ code: ProbeError.Code, expected: String, received: [String], waited: Duration) -> ProbeError {
        ProbeError(code: code, probe: ref.path, expected: expected, received: received, waited: waited, isVirtualTime: virtualClock != nil)
    }
}

extension TestProbe where Message: Equatable {
    /// Waits up to `timeout` for the next message and checks that it equals `expected`.
    ///
    /// - Throws: `ProbeError` with code `.timedOut`, or `.mismatch` naming both messages if the
    ///   next message differs (it is consumed).
    @discardableResult
    public func expectMessage(_ expected: Message, within timeout: Duration = TestProbe.defaultTimeout) throws -> Message {
        try expectMessage(within: timeout, "\(expected)") { $0 == expected }
    }
}

/// The message type of a probe's watcher actors: none, they only receive lifecycle events.
enum _WatcherMessage: Sendable {}

/// The probe's queue: filled by the probe actor's handler (on the actor's scheduler), read by
/// expectations (on the test's thread).
final class _ProbeInbox<Message: Sendable>: @unchecked Sendable {
    // `state` is only touched while holding `condition` (an NSCondition: mutex + condition variable).
    struct State {
        var messages: [Message] = []
        var head = 0
        var terminated: [AnyActorRef] = []

        mutating func popMessage() -> Message? {
            guard head < messages.count else { return nil }
            let message = messages[head]
            head += 1
            if head == messages.count {
                messages.removeAll(keepingCapacity: true)
                head = 0
            }
            return message
        }

        mutating func popTermination(of ref: AnyActorRef) -> Bool? {
            guard let index = terminated.firstIndex(of: ref) else { return nil }
            terminated.remove(at: index)
            return true
        }
    }

    private let condition = NSCondition()
    /// Protected by `condition`.
    private var state = State()

    func append(_ message: Message) {
        condition.lock()
        state.messages.append(message)
        condition.broadcast()
        condition.unlock()
    }

    func recordTermination(_ ref: AnyActorRef) {
        condition.lock()
        state.terminated.append(ref)
        condition.broadcast()
        condition.unlock()
    }

    var snapshot: [Message] {
        withState { Array($0.messages[$0.head...]) }
    }

    func withState<T>(_ body: (inout State) -> T) -> T {
        condition.lock()
        defer { condition.unlock() }
        return body(&state)
    }

    /// Calls `take` now and after every change until it returns a value or `deadline` passes.
    func wait<T>(until deadline: Date, _ take: (inout State) -> T?) -> T? {
        condition.lock()
        defer { condition.unlock() }
        while true {
            if let value = take(&state) { return value }
            if !condition.wait(until: deadline) { return take(&state) }
        }
    }
}
