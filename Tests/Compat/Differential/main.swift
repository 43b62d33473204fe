// Differential check: the same program, compiled once against ReactiveSwift 7.2.1 and once
// against Mailbox (`import ReactiveSwift` replaced by `import Mailbox`, nothing else), must
// print the same lines. Run it with Tests/Compat/run-differential.sh (see README.md there).
//
// Written as ReactiveSwift code (Swift 5 language mode); closures record into a class, as
// Mailbox's `@Sendable` closures require (see docs/StreamContracts.md, Swift 6 differences).
import Foundation
import ReactiveSwift

final class Log {
    private let lock = NSLock()
    private var lines: [String] = []
    func add(_ line: String) { lock.lock(); lines.append(line); lock.unlock() }
    func flush(_ title: String) {
        lock.lock(); let taken = lines; lines = []; lock.unlock()
        print("\(title): \(taken.joined(separator: " "))")
    }
}

enum TestError: Swift.Error, Equatable, CustomStringConvertible {
    case a, b
    var description: String { self == .a ? "A" : "B" }
}

let log = Log()

func show<V, E>(_ event: Signal<V, E>.Event) -> String {
    switch event {
    case let .value(value): return "v(\(value))"
    case let .failed(error): return "f(\(error))"
    case .completed: return "c"
    case .interrupted: return "i"
    }
}

func observer<V, E>() -> Signal<V, E>.Observer {
    Signal<V, E>.Observer { log.add(show($0)) }
}

func scenario(_ title: String, _ body: () -> Void) {
    body()
    log.flush(title)
}

func sync<V>(_ name: String, _ values: [V]) -> SignalProducer<V, Never> {
    SignalProducer(values).on(starting: { log.add("start-\(name)") })
}

// MARK: - Producers: start order and synchronous events

scenario("combineLatest(with:)") { sync("a", [1, 2]).combineLatest(with: sync("b", [10, 20])).map { pair in "\(pair.0)+\(pair.1)" }.start(observer()) }
scenario("zip(with:)") { sync("a", [1, 2, 3]).zip(with: sync("b", [10, 20])).map { pair in "\(pair.0)+\(pair.1)" }.start(observer()) }
scenario("sample(with:)") { sync("a", [1, 2]).sample(with: sync("s", ["x"])).map { pair in "\(pair.0)\(pair.1)" }.start(observer()) }
scenario("sample(on:)") { sync("a", [4]).sample(on: sync("s", [()])).start(observer()) }
scenario("withLatest(from:)") { sync("a", [1, 2]).withLatest(from: sync("w", [5, 6])).map { pair in "\(pair.0):\(pair.1)" }.start(observer()) }
scenario("take(until:)") { sync("a", [1, 2]).take(until: sync("t", [()])).start(observer()) }
scenario("skip(until:)") { sync("a", [1, 2]).skip(until: sync("t", [()])).start(observer()) }
scenario("take(untilReplacement:)") { sync("a", [1]).concat(.never).take(untilReplacement: sync("r", [9])).start(observer()) }
scenario("merge(with:)") { sync("a", [1]).merge(with: sync("b", [2])).start(observer()) }
scenario("static combineLatest 3") { SignalProducer.combineLatest(sync("1", [1, 2]), sync("2", [3]), sync("3", [4, 5])).map { t in "\(t.0)\(t.1)\(t.2)" }.start(observer()) }
scenario("static zip 3") { SignalProducer.zip(sync("1", [1, 2]), sync("2", [3, 4]), sync("3", [5])).map { t in "\(t.0)\(t.1)\(t.2)" }.start(observer()) }
scenario("static merge 3") { SignalProducer.merge(sync("1", [1]), sync("2", [2]), sync("3", [3])).start(observer()) }
scenario("combineLatest 10") {
    let p = { (v: Int) in SignalProducer<Int, Never>(value: v) }
    SignalProducer.combineLatest(p(1), p(2), p(3), p(4), p(5), p(6), p(7), p(8), p(9), p(10)).map { t in "\(t.0)+\(t.9)" }.start(observer())
}
scenario("combineLatest sequence") { SignalProducer.combineLatest([sync("x", [1, 2]), sync("y", [3])]).start(observer()) }
scenario("zip sequence") { SignalProducer.zip([sync("x", [1, 2]), sync("y", [3, 4])]).start(observer()) }
scenario("combineLatest empty") { SignalProducer<Int, Never>.combineLatest([SignalProducer<Int, Never>]()).start(observer()) }
scenario("combineLatest emptySentinel") { SignalProducer<Int, Never>.combineLatest([SignalProducer<Int, Never>](), emptySentinel: [7]).start(observer()) }
scenario("zip emptySentinel") { SignalProducer<Int, Never>.zip([SignalProducer<Int, Never>](), emptySentinel: []).start(observer()) }
scenario("Signal.combineLatest empty") { Signal<Int, Never>.combineLatest([Signal<Int, Never>]()).observe(observer()) }
scenario("Signal.all empty") { Signal<Bool, Never>.all([Signal<Bool, Never>]()).observe(observer()) }
scenario("then") { sync("a", [1]).then(sync("b", [2])).start(observer()) }
scenario("then failing") { SignalProducer<Int, TestError>(error: .a).then(SignalProducer<Int, TestError>(value: 2)).start(observer()) }
scenario("concat/prefix") { SignalProducer<Int, TestError>(value: 1).concat(value: 2).prefix(value: 0).concat(error: .b).start(observer()) }

// MARK: - Operators

scenario("attempt") { SignalProducer<Int, TestError>([1, 2, 3]).attempt { $0 == 2 ? .failure(.a) : .success(()) }.start(observer()) }
scenario("attemptMap") { SignalProducer<Int, TestError>([1, 2, 3]).attemptMap { $0 == 3 ? .failure(.b) : .success($0 * 10) }.start(observer()) }
scenario("attempt throwing") {
    SignalProducer<Int, Never>([1, 2]).attempt { if $0 == 2 { throw TestError.a } }.start(Signal<Int, Swift.Error>.Observer { log.add(show($0)) })
}
scenario("attemptMap throwing") {
    SignalProducer<Int, Swift.Error>([1, 2]).attemptMap { v -> String in if v == 2 { throw TestError.b }; return "\(v)" }.start(Signal<String, Swift.Error>.Observer { log.add(show($0)) })
}
scenario("scanMap") { SignalProducer<Int, Never>([1, 2, 3]).scanMap(0) { ($0 + $1, "s\($0 + $1)") }.start(observer()) }
scenario("scanMap into") { SignalProducer<Int, Never>([1, 2, 3]).scanMap(into: [Int]()) { s, v -> Int in s.append(v); return s.count }.start(observer()) }
scenario("flatten sequences") { SignalProducer<[Int], Never>([[1, 2], [], [3]]).flatten().start(observer()) }
scenario("flatMap latest") { SignalProducer<Int, Never>([1, 2]).flatMap(.latest) { v in SignalProducer<Int, Never>([v, v * 10]) }.start(observer()) }
scenario("flatMap concat implicit") { SignalProducer<Int, Never>([1, 2]).flatMap(.concat) { .init(value: $0 * 2) }.start(observer()) }
scenario("flatMapError") { SignalProducer<Int, TestError>(error: .a).flatMapError { _ in SignalProducer<Int, Never>(value: 5) }.start(observer()) }
scenario("negate/and/or") {
    let (a, ia) = Signal<Bool, Never>.pipe()
    let (b, ib) = Signal<Bool, Never>.pipe()
    a.and(b).observe(Signal<Bool, Never>.Observer { log.add("and " + show($0)) })
    a.or(b).observe(Signal<Bool, Never>.Observer { log.add("or " + show($0)) })
    a.negate().observe(Signal<Bool, Never>.Observer { log.add("not " + show($0)) })
    ia.send(value: true); ib.send(value: false); ib.send(value: true); ia.send(value: false)
    ia.sendCompleted(); ib.sendCompleted()
}
scenario("producer all/any") {
    SignalProducer<Bool, Never>.all([SignalProducer(value: true), SignalProducer(value: false)]).start(observer())
    SignalProducer<Bool, Never>.any([SignalProducer<Bool, Never>]()).start(observer())
    SignalProducer<Bool, Never>.all([SignalProducer<Bool, Never>]()).start(observer())
}
scenario("timeout raising") {
    let scheduler = TestScheduler()
    SignalProducer<Int, Never>.never.timeout(after: 2, raising: TestError.a, on: scheduler).start(observer())
    scheduler.advance(by: .seconds(1)); log.add("1s")
    scheduler.advance(by: .seconds(1))
}
scenario("timer") {
    let scheduler = TestScheduler()
    let d = SignalProducer<Date, Never>.timer(interval: .seconds(2), on: scheduler).map { $0.timeIntervalSince(scheduler.currentDate) }.start(observer())
    scheduler.advance(by: .seconds(5)); d.dispose()
}
scenario("interval") {
    let scheduler = TestScheduler()
    SignalProducer<String, Never>.interval(["a", "b"], interval: .seconds(1), on: scheduler).start(observer())
    scheduler.advance(by: .seconds(3))
}
scenario("reentrant pipe") {
    let (signal, input) = Signal<Int, Never>.reentrantUnserializedPipe()
    signal.observeValues { v in log.add("first \(v)"); if v < 3 { input.send(value: v * 10); input.send(value: v + 1) } }
    signal.observeValues { v in log.add("second \(v)") }
    input.send(value: 1)
}
// A known difference (Tests/Compat/known-differences.txt): ReactiveSwift resolves a trailing
// closure with `$0`, `$1` on a stream of pairs to `map(value:)`, and sends the closure itself.
scenario("map tuple closure") { SignalProducer<(Int, Int), Never>(value: (1, 2)).map { "\($0)+\($1)" }.start(observer()) }
scenario("take(first:) on mapped") {
    let (signal, input) = Signal<Int, Never>.pipe()
    signal.map { $0 }.take(first: 1).observe(observer())
    input.send(value: 1); input.send(value: 2)
}

// MARK: - Operators Mailbox had before (a wider net)

scenario("map/filter/compactMap/skipNil") {
    SignalProducer<Int?, Never>([1, nil, 3, 4]).skipNil().filter { $0 != 3 }.map { $0 * 2 }.compactMap { $0 > 2 ? $0 : nil }.start(observer())
}
scenario("skipRepeats/uniqueValues") {
    SignalProducer<Int, Never>([1, 1, 2, 1, 2, 3]).skipRepeats().start(observer())
    SignalProducer<Int, Never>([1, 1, 2, 1, 2, 3]).uniqueValues().start(observer())
}
scenario("scan/reduce/collect") {
    SignalProducer<Int, Never>([1, 2, 3]).scan(0, +).start(observer())
    SignalProducer<Int, Never>([1, 2, 3]).reduce(0, +).start(observer())
    SignalProducer<Int, Never>([1, 2, 3, 4, 5]).collect(count: 2).start(observer())
    SignalProducer<Int, Never>.empty.collect().start(observer())
}
scenario("take/skip") {
    SignalProducer<Int, Never>([1, 2, 3, 4]).take(first: 2).start(observer())
    SignalProducer<Int, Never>([1, 2, 3, 4]).take(last: 2).start(observer())
    SignalProducer<Int, Never>([1, 2, 3, 1]).take(while: { $0 < 3 }).start(observer())
    SignalProducer<Int, Never>([1, 2, 3, 1]).skip(first: 1).skip(while: { $0 < 3 }).start(observer())
    SignalProducer<Int, Never>([1, 2, 3]).take(first: 0).start(observer())
}
scenario("combinePrevious") {
    SignalProducer<Int, Never>([1, 2, 3]).combinePrevious(0).map { pair in "\(pair.0)>\(pair.1)" }.start(observer())
    SignalProducer<Int, Never>([1, 2, 3]).combinePrevious().map { pair in "\(pair.0)>\(pair.1)" }.start(observer())
}
scenario("materialize/dematerialize") {
    SignalProducer<Int, TestError>(value: 1).concat(error: .a).materialize().map { show($0) }.start(observer())
    SignalProducer<Int, TestError>(value: 1).concat(error: .b).materializeResults().dematerializeResults().start(observer())
}
scenario("flatten strategies") {
    let inner = { (v: Int) in SignalProducer<Int, Never>([v, v + 1]) }
    let strategies: [(String, FlattenStrategy)] = [("merge", .merge), ("concat", .concat), ("latest", .latest), ("race", .race), ("throttle", .throttle), ("concurrent2", .concurrent(limit: 2))]
    for (name, strategy) in strategies {
        log.add("\(name):")
        SignalProducer<Int, Never>([10, 20]).flatMap(strategy) { inner($0) }.start(observer())
    }
}
scenario("flatten with pipes") {
    let (outer, outerInput) = Signal<SignalProducer<Int, Never>, Never>.pipe()
    let (a, ia) = Signal<Int, Never>.pipe()
    let (b, ib) = Signal<Int, Never>.pipe()
    outer.flatten(.latest).observe(observer())
    outerInput.send(value: SignalProducer(a)); ia.send(value: 1)
    outerInput.send(value: SignalProducer(b)); ia.send(value: 2); ib.send(value: 3)
    outerInput.sendCompleted(); ib.sendCompleted()
}
scenario("concat/race with pipes") {
    let (outer, outerInput) = Signal<SignalProducer<Int, Never>, Never>.pipe()
    let (a, ia) = Signal<Int, Never>.pipe()
    let (b, ib) = Signal<Int, Never>.pipe()
    outer.flatten(.concat).observe(observer())
    outerInput.send(value: SignalProducer(a)); outerInput.send(value: SignalProducer(b))
    ib.send(value: 0); ia.send(value: 1); ia.sendCompleted(); ib.send(value: 2)
    outerInput.sendCompleted(); ib.sendCompleted()
}
scenario("retry/repeat") {
    let attempts = Log()
    SignalProducer<Int, TestError> { observer, _ in attempts.add("x"); observer.send(value: 1); observer.send(error: .a) }
        .retry(upTo: 2).start(observer())
    SignalProducer<Int, Never>(value: 7).repeat(3).start(observer())
}
scenario("replayLazily") {
    let (signal, input) = Signal<Int, Never>.pipe()
    let replayed = SignalProducer(signal).replayLazily(upTo: 2)
    replayed.start(Signal<Int, Never>.Observer { log.add("1st " + show($0)) })
    input.send(value: 1); input.send(value: 2); input.send(value: 3)
    replayed.start(Signal<Int, Never>.Observer { log.add("2nd " + show($0)) })
    input.send(value: 4); input.sendCompleted()
    replayed.start(Signal<Int, Never>.Observer { log.add("3rd " + show($0)) })
}
scenario("delay/throttle with TestScheduler") {
    let scheduler = TestScheduler()
    let (signal, input) = Signal<Int, Never>.pipe()
    signal.delay(1, on: scheduler).observe(Signal<Int, Never>.Observer { log.add("delay " + show($0)) })
    signal.throttle(2, on: scheduler).observe(Signal<Int, Never>.Observer { log.add("throttle " + show($0)) })
    input.send(value: 1); scheduler.advance(by: .milliseconds(500))
    input.send(value: 2); input.send(value: 3); scheduler.advance(by: .seconds(3))
    input.sendCompleted(); scheduler.run()
}
scenario("combineLatest/zip failure and interruption") {
    let (a, ia) = Signal<Int, TestError>.pipe()
    let (b, ib) = Signal<Int, TestError>.pipe()
    a.combineLatest(with: b).map { pair in pair.0 + pair.1 }.observe(observer())
    a.zip(with: b).map { pair in pair.0 * pair.1 }.observe(observer())
    ia.send(value: 1); ib.send(value: 2); ia.send(value: 3); ib.send(error: .b)
}
scenario("on(...) order") {
    SignalProducer<Int, Never>(value: 1).on(
        starting: { log.add("starting") }, started: { log.add("started") }, event: { log.add("event " + show($0)) },
        completed: { log.add("completed") }, terminated: { log.add("terminated") }, disposed: { log.add("disposed") },
        value: { log.add("value \($0)") }
    ).start()
}
scenario("action lifecycle") {
    let (work, workInput) = Signal<Int, TestError>.pipe()
    let action = Action<Int, Int, TestError> { _ in SignalProducer(work) }
    action.isExecuting.producer.startWithValues { log.add("executing \($0)") }
    action.events.observeValues { log.add("events " + show($0)) }
    action.apply(1).start(Signal<Int, ActionError<TestError>>.Observer { event in
        if case let .failed(error) = event { log.add("apply failed \(error)") } else { log.add("apply " + show(event)) }
    })
    action.apply(2).start(Signal<Int, ActionError<TestError>>.Observer { event in
        if case .failed(.disabled) = event { log.add("second disabled") }
    })
    workInput.send(value: 5); workInput.send(error: .a)
}
scenario("property producer and signal") {
    let property = MutableProperty(1)
    property.producer.startWithValues { log.add("producer \($0)") }
    property.signal.observeValues { log.add("signal \($0)") }
    property.value = 2
    property.value = 2
    log.add("swap \(property.swap(3)) modify \(property.modify { v -> Int in v += 1; return v })")
}

// MARK: - Properties

scenario("property composition") {
    let a = MutableProperty(1)
    let b = MutableProperty("x")
    let constant = a.map(value: "k")
    let previous = a.combinePrevious(0)
    let unique = a.uniqueValues()
    let three = Property.combineLatest(a, b, a)
    let zipped = Property.zip(a, b)
    log.add("\(constant.value) \(previous.value) \(unique.value) \(three.value) \(zipped.value)")
    a.value = 2; b.value = "y"; a.value = 1
    log.add("\(constant.value) \(previous.value) \(unique.value) \(three.value) \(zipped.value)")
}
scenario("property sequences") {
    let a = MutableProperty(1)
    let b = MutableProperty(2)
    log.add("\(String(describing: Property<Int>.combineLatest([a, b])?.value))")
    log.add("\(Property<Int>.combineLatest([MutableProperty<Int>]()) == nil)")
    log.add("\(Property<Int>.zip([MutableProperty<Int>](), emptySentinel: [9]).value)")
}
scenario("property booleans") {
    let a = MutableProperty(true)
    let b = MutableProperty(false)
    let and = a.and(b), or = a.or(b), not = a.negate(), all = Property.all([a, b]), any = Property.any(a, b)
    log.add("\(and.value) \(or.value) \(not.value) \(all.value) \(any.value)")
    b.value = true
    log.add("\(and.value) \(or.value) \(not.value) \(all.value) \(any.value)")
}
scenario("property initial then optional") {
    let (signal, input) = Signal<Int, Never>.pipe()
    let property = Property<Int?>(initial: nil, then: signal)
    log.add("\(String(describing: property.value))")
    input.send(value: 3)
    log.add("\(String(describing: property.value))")
}
final class Model {
    @MutableProperty var name = "Ada"
}
scenario("property wrapper") {
    let model = Model()
    model.$name.producer.startWithValues { log.add($0) }
    model.name = "Grace"
    log.add(model.name)
}

// MARK: - Actions and validation

scenario("action unwrapping") {
    let user = MutableProperty<String?>(nil)
    let action = Action<Int, String, Never>(unwrapping: user) { name, n in SignalProducer(value: String(repeating: name, count: n)) }
    action.isEnabled.producer.startWithValues { log.add("enabled \($0)") }
    action.apply(2).start(Signal<String, ActionError<Never>>.Observer { event in
        if case .failed(.disabled) = event { log.add("disabled") } else { log.add(show(event)) }
    })
    user.value = "ab"
    action.apply(2).start(Signal<String, ActionError<Never>>.Observer { log.add(show($0)) })
}
scenario("action state/apply()") {
    let factor = MutableProperty(3)
    let action = Action<Void, Int, Never>(state: factor) { f in SignalProducer(value: f * 2) }
    action.values.observeValues { log.add("value \($0)") }
    action.apply().start()
    factor.value = 4
    action.apply().start()
}
scenario("validating property") {
    let property = ValidatingProperty<Int, TestError>(10) { $0 < 0 ? .invalid(.a) : ($0 > 100 ? .coerced(100, .b) : .valid) }
    property.result.signal.observeValues { result in log.add("\(result.value.map(String.init) ?? "nil") invalid=\(result.isInvalid)") }
    property.value = 20; property.value = -1; property.value = 500
    log.add("value \(property.value)")
}
scenario("validating with other") {
    let maximum = MutableProperty(10)
    let property = ValidatingProperty<Int, TestError>(5, with: maximum) { v, m in v <= m ? .valid : .invalid(.a) }
    property.value = 20
    log.add("\(property.value) \(property.result.value.isInvalid)")
    maximum.value = 30
    log.add("\(property.value) \(property.result.value.isInvalid)")
}

// MARK: - Bindings

scenario("optional binding target") {
    let present: MutableProperty<Int>? = MutableProperty(0)
    let absent: MutableProperty<Int>? = nil
    let (signal, input) = Signal<Int, Never>.pipe()
    present <~ signal
    let none = absent <~ signal
    input.send(value: 5)
    log.add("\(present!.value) \(none == nil)")
}
scenario("observer binding") {
    let (output, target) = Signal<Int, Never>.pipe()
    output.observe(observer())
    target <~ SignalProducer<Int, Never>([1, 2])
}
