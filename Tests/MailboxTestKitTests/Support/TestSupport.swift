import Foundation
import Mailbox

/// A value behind an `NSLock`, for recording what actions did from any thread.
final class Recorded<Value>: @unchecked Sendable {
    // `value` is only reachable through `withLock`, which holds `lock` (an NSLock).
    private let lock = NSLock()
    /// Protected by `lock`.
    private var value: Value

    init(_ value: Value) {
        self.value = value
    }

    func withLock<T>(_ body: (inout Value) throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }

    var snapshot: Value { withLock { $0 } }
}

extension Recorded {
    func append<Element>(_ element: Element) where Value == [Element] {
        withLock { $0.append(element) }
    }
}

/// A system on `scheduler` that discards its log lines.
func makeSystem(_ scheduler: any Scheduler, name: String = "test") -> ActorSystem {
    ActorSystem(name: name, configuration: .init(scheduler: scheduler, logHandler: nil))
}

/// Messages for the echo actor of the tests.
enum EchoMessage: Sendable {
    case echo(String, replyTo: ActorRef<String>)
    /// Replies after `delay`, with a single timer.
    case echoLater(String, delay: Duration, replyTo: ActorRef<String>)
    case stop
}

/// Replies to each message with its text; stops on `.stop`.
func echo() -> Behavior<EchoMessage> {
    .receive { context, message in
        switch message {
        case let .echo(text, replyTo):
            replyTo.tell(text)
        case let .echoLater(text, delay, replyTo):
            context.scheduler.schedule(after: delay) { replyTo.tell(text) }
        case .stop:
            return .stopped
        }
        return .same
    }
}
