import Dispatch
import Foundation
@testable import Mailbox

/// A thread-safe list of values recorded by actors under test, with an async wait that
/// suspends (never blocks a thread of the cooperative pool, which has one thread per core).
final class Inbox<Value: Sendable>: Sendable {
    private struct State {
        var values: [Value] = []
        var waiters: [(count: Int, gate: AsyncGate)] = []
    }

    private let state = LockedValueBox(State())

    func record(_ value: Value) {
        let ready: [AsyncGate] = state.withLockedValue { state in
            state.values.append(value)
            let count = state.values.count
            let ready = state.waiters.filter { $0.count <= count }.map(\.gate)
            state.waiters.removeAll { $0.count <= count }
            return ready
        }
        for gate in ready { gate.open(true) }
    }

    var values: [Value] { state.withLockedValue { $0.values } }

    /// Suspends until at least `count` values were recorded, or `timeout` seconds of real time
    /// passed; returns whether they were recorded. (60 s: under ThreadSanitizer, with the whole
    /// suite in parallel on a loaded two-core machine, a task waited 20 s for a thread of the
    /// cooperative pool; the wait only runs that long when something is broken.)
    func waitForCount(_ count: Int, timeout: TimeInterval = 60) async -> Bool {
        let gate = AsyncGate()
        let already = state.withLockedValue { state -> Bool in
            if state.values.count >= count { return true }
            state.waiters.append((count, gate))
            return false
        }
        if already { return true }
        return await gate.wait(timeout: timeout)
    }
}

/// Opens once, with a result; `wait` suspends until then or until the time-out (real time,
/// through Dispatch: no sleeping).
final class AsyncGate: Sendable {
    private struct State {
        var result: Bool?
        var continuation: CheckedContinuation<Bool, Never>?
    }

    private let state = LockedValueBox(State())

    func open(_ result: Bool) {
        let continuation: CheckedContinuation<Bool, Never>? = state.withLockedValue { state in
            guard state.result == nil else { return nil }
            state.result = result
            defer { state.continuation = nil }
            return state.continuation
        }
        continuation?.resume(returning: result)
    }

    func wait(timeout: TimeInterval = 60) async -> Bool {
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout) { [self] in open(false) }
        return await withCheckedContinuation { continuation in
            let early: Bool? = state.withLockedValue { state in
                if let result = state.result { return result }
                state.continuation = continuation
                return nil
            }
            if let early { continuation.resume(returning: early) }
        }
    }
}

/// An actor system whose every actor runs on a `TestScheduler`: deterministic, nothing runs
/// until the test advances the scheduler.
func makeTestSystem(_ name: String = "test", events: Inbox<ActorSystemEvent>? = nil) -> (ActorSystem, TestScheduler) {
    let scheduler = TestScheduler()
    let system = ActorSystem(name: name, configuration: .init(scheduler: scheduler, logHandler: nil))
    if let events {
        system.events.observeValues { events.record($0) }
    }
    return (system, scheduler)
}

/// A behavior that records every message it receives.
func recording<Message: Sendable>(_ recorder: Inbox<Message>) -> Behavior<Message> {
    .receiveMessage { message in
        recorder.record(message)
        return .same
    }
}

extension TestScheduler {
    /// Runs everything due now, without moving the clock.
    func runDue() {
        advance(by: .nanoseconds(0))
    }
}
