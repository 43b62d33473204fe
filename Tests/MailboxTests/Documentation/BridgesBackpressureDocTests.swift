import Testing
import Mailbox

// The examples of docs/Bridges.md's "Back-pressured stream bridges" section, verbatim between
// "doc" comments, run as tests. Keep them in sync. `Recorder` comes from the Schedulers doc tests.

private struct FeedError: Error, Equatable {}

private struct Ack: Sendable {}

private enum Ingest: Sendable {
    case ready(ackTo: ActorRef<Ack>)
    case line(String, ackTo: ActorRef<Ack>)
    case finished
    case failed(DrainError<FeedError>)
}

/// Handles one line at a time and acknowledges each: the drain sends the next only then.
private func writer(_ log: Recorder) -> Behavior<Ingest> {
    .receiveMessage { message in
        switch message {
        case let .ready(ackTo):
            ackTo.tell(Ack())
        case let .line(text, ackTo):
            log.record(text)
            ackTo.tell(Ack())
        case .finished:
            log.record("finished")
        case let .failed(error):
            log.record("failed: \(error)")
        }
        return .same
    }
}

private enum ExchangeMessage: Sendable {
    case subscribe(ActorRef<Int>)
}

/// Sends two prices and the end marker to each subscriber.
private func exchange() -> Behavior<ExchangeMessage> {
    .receiveMessage { message in
        switch message {
        case let .subscribe(feed):
            feed.tell(101)
            feed.tell(102)
            feed.tell(-1)
        }
        return .same
    }
}

@Suite("docs/Bridges.md: back-pressured stream bridges")
struct BridgesBackpressureDocTests {
    private func makeSystem() -> (ActorSystem, TestScheduler, Recorder) {
        let scheduler = TestScheduler()
        let system = ActorSystem(name: "bridges", configuration: .init(scheduler: scheduler, logHandler: nil))
        return (system, scheduler, Recorder())
    }

    @Test func drainIntoAnActor() throws {
        let (system, scheduler, log) = makeSystem()
        let writer = try system.spawn(writer(log), name: "writer")
        // doc begins
        let lines = SignalProducer<String, FeedError>(["a", "b", "c"])
        let drained = lines.drain(
            into: writer,
            onInit: { ackTo in .ready(ackTo: ackTo) },
            makeMessage: { ackTo, line in .line(line, ackTo: ackTo) },
            onComplete: .finished,
            onFailure: { error in .failed(error) }
        )
        drained.startWithCompleted { log.record("drained") }
        scheduler.runDue()    // log.all == ["a", "b", "c", "drained", "finished"]: done once .finished is told
        // doc ends
        #expect(log.all == ["a", "b", "c", "drained", "finished"])
    }

    @Test func drainOverflow() throws {
        let (system, scheduler, log) = makeSystem()
        let writer = try system.spawn(writer(log), name: "writer")
        let lines = SignalProducer<String, FeedError>(["a", "b", "c"])
        // doc begins
        let keepingNewest = lines.drain(
            into: writer, bufferLimit: 1, overflow: .dropOldest,
            onInit: { .ready(ackTo: $0) }, makeMessage: { .line($1, ackTo: $0) },
            onComplete: .finished, onFailure: { .failed($0) })
        keepingNewest.start()
        scheduler.runDue()    // log.all == ["c", "finished"]: "a" and "b" were dropped while the writer started
        // doc ends
        #expect(log.all == ["c", "finished"])
    }

    @Test func actorSource() throws {
        let (system, scheduler, log) = makeSystem()
        let exchange = try system.spawn(exchange(), name: "exchange")
        // doc begins
        let prices = SignalProducer<Int, Never>.actorSource(
            spawningIn: system,
            completeOn: { price in price < 0 }
        ) { feed in
            exchange.tell(.subscribe(feed))    // hand each run's ref to whoever sends
        }
        prices.start { event in log.record("\(event)") }
        scheduler.runDue()    // log.all == ["VALUE 101", "VALUE 102", "COMPLETED"]
        // doc ends
        #expect(log.all == ["VALUE 101", "VALUE 102", "COMPLETED"])
    }
}
