import Foundation
import Mailbox

/// The tests' name for the package's one value box, for recording what actions did from any
/// thread.
typealias Recorded<Value> = LockedValueBox<Value>

extension LockedValueBox {
    /// `withLockedValue`, as the tests spell it.
    func withLock<T, E: Error>(_ body: (inout Value) throws(E) -> T) throws(E) -> T {
        try withLockedValue(body)
    }

    var snapshot: Value { withLockedValue { $0 } }

    func append<Element>(_ element: Element) where Value == [Element] {
        withLockedValue { $0.append(element) }
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
