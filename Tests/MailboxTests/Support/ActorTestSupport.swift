import Dispatch
import Foundation
@testable import Mailbox

/// A thread-safe list of values recorded by actors under test.
final class Inbox<Value: Sendable>: Sendable {
    private let box = LockedValueBox<[Value]>([])
    private let signal = DispatchSemaphore(value: 0)

    func record(_ value: Value) {
        box.withLockedValue { $0.append(value) }
        signal.signal()
    }

    var values: [Value] { box.withLockedValue { $0 } }

    /// Waits (explicit synchronisation, bounded by `timeout` of real time) until at least
    /// `count` values were recorded; returns whether they were.
    func waitForCount(_ count: Int, timeout: TimeInterval = 10) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while values.count < count {
            if signal.wait(timeout: .now() + max(0, deadline.timeIntervalSinceNow)) == .timedOut {
                return values.count >= count
            }
        }
        return true
    }
}

/// An actor system whose every actor runs on a `TestScheduler`: deterministic, nothing runs
/// until the test advances the scheduler.
func makeTestSystem(_ name: String = "test", events: Inbox<ActorSystemEvent>? = nil) -> (ActorSystem, TestScheduler) {
    let scheduler = TestScheduler()
    let system = ActorSystem(name: name, configuration: .init(scheduler: scheduler, logHandler: nil))
    if let events {
        system.observeEvents { events.record($0) }
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
