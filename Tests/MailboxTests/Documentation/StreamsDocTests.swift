import Testing
@testable import Mailbox

// The examples of docs/Streams.md, compiled and run. Keep the two in sync: each test is
// named after the section it comes from.

/// A thread-safe list for the examples (observer closures are `@Sendable`).
final class Log<T> {
    private let lock = Lock()
    private var items: [T] = []
    func append(_ item: T) { lock.withLock { items.append(item) } }
    var all: [T] { lock.withLock { items } }
}

extension Streams {
@Suite("Streams guide examples")
struct StreamsDocTests {
    @Test func signals() {
        // docs/Streams.md — "Signals: hot streams"
        let (temperatures, input) = Signal<Double, Never>.pipe()
        let readings = Log<String>()
        temperatures
            .filter { $0 > 20 }
            .map { "warm: \($0)" }
            .observeValues { readings.append($0) }
        input.send(value: 18)
        input.send(value: 23.5)
        input.sendCompleted()
        #expect(readings.all == ["warm: 23.5"])
    }

    @Test func producers() {
        // docs/Streams.md — "Producers: cold streams"
        struct FetchError: Error {}
        let fetch = SignalProducer<String, FetchError> { observer, lifetime in
            // Start the work; tie its cancellation to `lifetime`.
            observer.send(value: "payload")
            observer.sendCompleted()
        }
        let results = Log<String>()
        fetch.map { $0.uppercased() }.startWithResult { result in
            if case let .success(text) = result { results.append(text) }
        }
        #expect(results.all == ["PAYLOAD"])
    }

    @Test func interruption() {
        // docs/Streams.md — "Interrupting a run"
        let scheduler = TestScheduler()
        let ticks = SignalProducer<(), Never> { observer, lifetime in
            lifetime += scheduler.schedule(after: .zero, interval: .seconds(1)) {
                observer.send(value: ())
            }
        }.scan(0) { count, _ in count + 1 }
        let seen = Log<Int>()
        let disposable = ticks.startWithValues { seen.append($0) }
        scheduler.advance(by: .seconds(2))
        disposable.dispose()              // the run is interrupted, the timer cancelled
        scheduler.advance(by: .seconds(5))
        #expect(seen.all == [1, 2, 3])
    }

    @Test func flattening() {
        // docs/Streams.md — "Streams of streams"
        let (queries, input) = Signal<String, Never>.pipe()
        let search: @Sendable (String) -> SignalProducer<[String], Never> = { query in
            SignalProducer(value: ["\(query)1", "\(query)2"])
        }
        let results = Log<[String]>()
        queries.flatMap(.latest, search).observeValues { results.append($0) }
        input.send(value: "swift")
        #expect(results.all == [["swift1", "swift2"]])
    }

    @Test func time() {
        // docs/Streams.md — "Time"
        let scheduler = TestScheduler()
        let (keystrokes, input) = Signal<String, Never>.pipe()
        let searches = Log<String>()
        keystrokes.debounce(0.3, on: scheduler).observeValues { searches.append($0) }
        input.send(value: "s")
        input.send(value: "sw")
        scheduler.advance(by: .milliseconds(300))
        #expect(searches.all == ["sw"])
    }

    @Test func properties() {
        // docs/Streams.md — "Properties"
        let name = MutableProperty("Ada")
        let greeting = name.map { "Hello, \($0)!" }
        let greetings = Log<String>()
        greeting.producer.startWithValues { greetings.append($0) }
        name.value = "Grace"
        #expect(greeting.value == "Hello, Grace!")
        #expect(greetings.all == ["Hello, Ada!", "Hello, Grace!"])
    }

    @Test func bindings() {
        // docs/Streams.md — "Bindings"
        let label = MutableProperty("")
        let (counts, input) = Signal<Int, Never>.pipe()
        label <~ counts.map { "\($0) unread" }
        input.send(value: 3)
        #expect(label.value == "3 unread")
    }

    @Test func actions() {
        // docs/Streams.md — "Actions"
        struct LoginError: Error {}
        let isValid = MutableProperty(true)
        let login = Action<String, String, LoginError>(enabledIf: isValid) { user in
            SignalProducer(value: "token-\(user)")
        }
        let tokens = Log<String>()
        login.values.observeValues { tokens.append($0) }
        login.apply("ada").start()
        #expect(tokens.all == ["token-ada"])
        isValid.value = false
        let refused = Log<Bool>()
        login.apply("bob").startWithFailed { error in
            if case .disabled = error { refused.append(true) }
        }
        #expect(refused.all == [true])
    }

    @Test func validation() {
        // docs/Streams.md — "Validation"
        enum AgeError: Error { case negative }
        struct SaveError: Error {}
        let saved = Log<Int>()
        let api = (save: { @Sendable (age: Int) -> SignalProducer<Int, SaveError> in
            SignalProducer(value: age).on(value: { saved.append($0) })
        }, ())
        let age = ValidatingProperty<Int, AgeError>(30) { $0 >= 0 ? .valid : .invalid(.negative) }
        let save = Action<Void, Int, SaveError>(validated: age) { age in api.save(age) }
        age.value = -1
        #expect(age.value == 30)
        #expect(!save.isEnabled.value)
        guard case .invalid(-1, .negative) = age.result.value else {
            Issue.record("\(age.result.value)")
            return
        }
        age.value = 31
        save.apply().start()
        #expect(saved.all == [31])
    }
}
}

// `items` is only touched with `lock` held.
extension Log: @unchecked Sendable {}
