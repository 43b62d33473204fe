import Testing
import Mailbox

// The examples of docs/Bridges.md, verbatim between "doc" comments, run as tests. Keep them in
// sync. `Recorder` and `logging(into:)` come from the Schedulers and Actors doc tests.

private enum QuoteMessage: Sendable {
    case price(replyTo: ActorRef<Int>)
    case buy(Int, replyTo: ActorRef<Int>)
}

private func quoteService() -> Behavior<QuoteMessage> {
    .setup { _ in
        var price = 100
        return .receiveMessage { message in
            switch message {
            case let .price(replyTo):
                replyTo.tell(price)
                price += 1
            case let .buy(quantity, replyTo):
                replyTo.tell(quantity * 100)
            }
            return .same
        }
    }
}

private enum CartInput: Sendable, Equatable { case add(String), checkout, cleared }

@Suite("docs/Bridges.md")
struct BridgesDocTests {
    private func makeSystem() -> (ActorSystem, TestScheduler, Recorder) {
        let scheduler = TestScheduler()
        let system = ActorSystem(name: "bridges", configuration: .init(scheduler: scheduler, logHandler: nil))
        return (system, scheduler, Recorder())
    }

    @Test func outputs() throws {
        let (system, scheduler, log) = makeSystem()
        // doc begins
        let (ticker, ticks) = try system.spawn(name: "ticker", output: Int.self) { output in
            Behavior<Int>.receiveMessage { tick in
                output.publish(tick * 10)
                return tick < 3 ? .same : .stopped
            }
        }
        ticks.observe { event in log.record("\(event)") }
        for tick in 1...3 { ticker.tell(tick) }
        scheduler.runDue()
        // doc ends
        #expect(log.all == ["VALUE 10", "VALUE 20", "VALUE 30", "COMPLETED"])
    }

    @Test func actorBackedProperty() throws {
        let (system, scheduler, log) = makeSystem()
        // doc begins
        let (account, balance) = try system.spawn(name: "account", initialState: 0) { state in
            Behavior<Int>.receiveMessage { amount in
                state.publish(state.current + amount)
                return .same
            }
        }
        balance.producer.startWithValues { log.record("balance \($0)") }   // "balance 0" at once
        account.tell(30)
        account.tell(12)
        scheduler.runDue()
        // doc ends
        #expect(balance.value == 42)
        #expect(log.all == ["balance 0", "balance 30", "balance 42"])
    }

    @Test func askProducerAndAction() async throws {
        let (system, scheduler, log) = makeSystem()
        let quotes = try system.spawn(quoteService(), name: "quotes")
        // doc begins
        let quote = quotes.askProducer(timeout: .seconds(1)) { QuoteMessage.price(replyTo: $0) }
        quote.startWithResult { log.record("\($0)") }
        quote.startWithResult { log.record("\($0)") }     // asks again
        scheduler.runDue()
        // doc ends
        #expect(log.all == ["success(100)", "success(101)"])

        let purchases = Recorder()
        // doc begins
        let online = MutableProperty(true)
        let buy = Action<Int, Int, AskError>(asking: quotes, timeout: .seconds(1), enabledIf: online) { quantity, replyTo in
            .buy(quantity, replyTo: replyTo)
        }
        buy.values.observeValues { purchases.record("bought for \($0)") }
        buy.apply(2).start()
        // doc ends
        #expect(buy.isExecuting.value)
        #expect(!buy.isEnabled.value)
        scheduler.runDue()
        #expect(purchases.all == ["bought for 200"])
        #expect(buy.isEnabled.value)
    }

    @Test func bindingToAnActor() throws {
        let (system, scheduler, log) = makeSystem()
        // doc begins
        let thermostat = try system.spawn(logging(into: log) as Behavior<Double>, name: "thermostat")
        let (readings, sensor) = Signal<Double, Never>.pipe()
        thermostat <~ readings
        sensor.send(value: 19.5)
        sensor.send(value: 21)
        scheduler.runDue()
        // doc ends
        #expect(log.all == ["19.5", "21.0"])
    }

    @Test func bindingToABoundedMailbox() throws {
        let (system, scheduler, log) = makeSystem()
        // doc begins
        let small = try system.spawn(logging(into: log) as Behavior<Int>, name: "small",
                                     props: Props(mailbox: .bounded(capacity: 2, overflow: .dropNewest)))
        let (burst, burstInput) = Signal<Int, Never>.pipe()
        small <~ burst
        for value in 1...5 { burstInput.send(value: value) }
        scheduler.runDue()
        // doc ends
        #expect(log.all == ["1", "2"])
        #expect(system.droppedCount == 3)
    }

    @Test func swiftConcurrency() async throws {
        // doc begins
        let (prices, priceInput) = Signal<Int, Never>.pipe()
        let stream = prices.values              // observes from here on
        priceInput.send(value: 1)
        priceInput.send(value: 2)
        priceInput.sendCompleted()
        var seen: [Int] = []
        for await price in stream { seen.append(price) }       // seen == [1, 2]
        let first = try await SignalProducer<Int, DocError>([7, 8]).first()   // 7
        // doc ends
        #expect(seen == [1, 2])
        #expect(first == 7)
    }

    @Test func makeStream() async {
        let log = Recorder()
        let done = AsyncGate()
        // doc begins
        let (numbers, feed) = Signal<Int, Never>.makeStream()   // bounded: .bufferingNewest(1_024)
        numbers.observeValues { log.record("got \($0)") }
        feed.yield(1)
        feed.finish()
        // doc ends
        numbers.observeCompleted { done.open(true) }
        #expect(await done.wait())
        #expect(log.all == ["got 1"])
    }

    @Test func monitoringIsAStream() async throws {
        let (system, scheduler, log) = makeSystem()
        // doc begins
        let events = system.events.values
        // doc ends
        try system.spawn(Behavior<Int>.ignore, name: "quiet")
        system.beginShutdown()
        scheduler.runDue()
        await system.shutdown()
        // doc begins
        for await event in events { log.record(event.description) }   // ends at shutdown
        // doc ends
        #expect(log.all == ["spawned /user/quiet", "stopped /user/quiet"])
    }

    @Test func store() throws {
        let (system, scheduler, log) = makeSystem()
        // doc begins
        let store = try Store<[String], CartInput>(
            system: system, name: "cart", initialState: [],
            effects: [{ input, _ in input == .checkout ? SignalProducer(value: .cleared) : .empty }]
        ) { items, input in
            switch input {
            case let .add(item): items + [item]
            case .checkout: items
            case .cleared: []
            }
        }
        store.state.producer.startWithValues { log.record("\($0)") }
        store.dispatch(.add("tea"))
        store.dispatch(.checkout)
        scheduler.runDue()
        // doc ends
        #expect(log.all == ["[]", "[\"tea\"]", "[\"tea\"]", "[]"])
    }
}

private struct DocError: Error {}
