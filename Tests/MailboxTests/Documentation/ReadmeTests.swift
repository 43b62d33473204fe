import Testing
import Mailbox

// The README's example, verbatim between the markers, run as a test. Keep them in sync.

private enum CounterMessage: Sendable {
    case increment
    case get(replyTo: ActorRef<Int>)
}

private func counter() -> Behavior<CounterMessage> {
    .setup { _ in
        var count = 0                       // actor state: no lock, one message at a time
        return .receiveMessage { message in
            switch message {
            case .increment: count += 1
            case let .get(replyTo): replyTo.tell(count)
            }
            return .same
        }
    }
}

@Suite("README")
struct ReadmeTests {
    @Test func twentyLines_counterExample() async throws {
        // README snippet begins
        let system = ActorSystem(name: "demo")
        let counterRef = try system.spawn(counter(), name: "counter")   // /user/counter
        counterRef.tell(.increment)
        let count = try await counterRef.ask(timeout: .seconds(1)) { .get(replyTo: $0) }   // 1
        await system.shutdown()
        // README snippet ends
        #expect(count == 1)
    }
}
