import Testing
@testable import Mailbox

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

    @Test func twentyLines_actorSignalAndProperty() async throws {
        let printed = Inbox<String>()
        let print: @Sendable (String) -> Void = { printed.record($0) }
        // README snippet begins
        let system = ActorSystem(name: "demo")
        // An actor that publishes its state (a Property) and its outputs (a Signal).
        let (counterRef, count) = try system.spawn(name: "counter", initialState: 0) { state in
            Behavior<Int>.receiveMessage { amount in
                state.publish(state.current + amount)          // actor state: one message at a time
                return .same
            }
        }
        let (clicks, click) = Signal<Int, Never>.pipe()
        counterRef <~ clicks                                    // every click is told to the actor
        count.signal.filter { $0 >= 3 }.observeValues { print("three or more: \($0)") }
        click.send(value: 1)
        click.send(value: 2)                                    // the actor prints "three or more: 3"
        let total = await count.producer.filter { $0 == 3 }.first()   // 3, read without asking
        await system.shutdown()
        // README snippet ends
        #expect(total == 3)
        #expect(await printed.waitForCount(1))
        #expect(printed.values == ["three or more: 3"])
    }
}
