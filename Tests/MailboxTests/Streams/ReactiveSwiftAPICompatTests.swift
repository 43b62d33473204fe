import Dispatch
import Foundation
import Testing
import Mailbox

// A port-compile test: ReactiveSwift 7.2.1 calls, one or more per API family, written with
// ReactiveSwift's exact argument labels and overloads (and `import Mailbox`, not
// `@testable`). It keeps docs/ReactiveSwiftAPI.md honest at compile time: a renamed label or a
// missing overload fails the build. Each test also checks the call does what ReactiveSwift's
// does; the full semantics are checked by Tests/Compat/run-differential.sh.

private enum PortError: Swift.Error, Equatable { case failed }

/// Collects what closures see; closures are `@Sendable` in Mailbox (Swift 6 difference 1).
private final class Seen<T>: @unchecked Sendable {
    // `@unchecked`: every access holds `lock`.
    private let lock = NSLock()
    private var items: [T] = []
    func add(_ item: T) { lock.lock(); items.append(item); lock.unlock() }
    var all: [T] { lock.lock(); defer { lock.unlock() }; return items }
}

extension Streams {
@Suite("ReactiveSwift API, as ReactiveSwift code calls it")
struct ReactiveSwiftAPICompatTests {
    @Test func signals_pipesObserversAndConstructors() {
        let seen = Seen<String>()
        let (signal, observer) = Signal<Int, PortError>.pipe(disposable: AnyDisposable {})
        signal.observe(Signal<Int, PortError>.Observer(value: { seen.add("v\($0)") }, failed: { _ in seen.add("f") }, completed: { seen.add("c") }, interrupted: { seen.add("i") }))
        signal.observeResult { _ in }
        signal.observeCompleted {}
        signal.observeFailed { _ in }
        signal.observeInterrupted {}
        observer.send(value: 1)
        observer.receive(2)
        observer.terminate(.completed)
        let generated = Signal<Int, Never> { observer, lifetime in
            lifetime.observeEnded {}
            observer.send(value: 1)
        }
        let (reentrant, input) = Signal<Int, Never>.reentrantUnserializedPipe()
        let (unserialized, _) = Signal<Int, Never>.unserializedPipe()
        _ = Signal<Int, Never>.unserialized { _, _ in }
        _ = Signal<Int, Never>.reentrantUnserialized { _, _ in }
        reentrant.observeValues { if $0 == 1 { input.send(value: 2) } }
        input.send(value: 1)
        _ = (generated, unserialized, Signal<Int, Never>.empty, Signal<Int, Never>.never)
        #expect(seen.all == ["v1", "v2", "c"])
    }

    @Test func producers_initialisersAndStarting() {
        let producers: [SignalProducer<Int, PortError>] = [
            SignalProducer(value: 1),
            SignalProducer(error: .failed),
            SignalProducer(result: .success(1)),
            SignalProducer([1, 2]),
            SignalProducer(values: 1, 2, 3),
            SignalProducer { 1 },
            SignalProducer { Result<Int, PortError>.success(1) },
            SignalProducer { observer, lifetime in lifetime.observeEnded {}; observer.sendCompleted() },
            SignalProducer(Signal<Int, PortError>.never),
            SignalProducer(SignalProducer<Int, PortError>.empty),
            .empty,
            .never,
        ]
        let throwing = SignalProducer<Int, any Swift.Error> { () throws -> Int in 1 }
        let disposables = producers.map { $0.start() } + [throwing.start()]
        let values = Seen<Int>()
        SignalProducer<Int, Never>(value: 5).startWithValues { values.add($0) }
        SignalProducer<Int, PortError>(value: 6).startWithResult { if case let .success(v) = $0 { values.add(v) } }
        SignalProducer<Int, PortError>.empty.startWithCompleted {}
        SignalProducer<Int, PortError>(error: .failed).startWithFailed { _ in }
        SignalProducer<Int, PortError>.never.startWithInterrupted {}.dispose()
        SignalProducer<Int, PortError>(value: 7).startWithSignal { signal, disposable in
            signal.observeResult { if case let .success(v) = $0 { values.add(v) } }
            _ = disposable
        }
        _ = SignalProducer<Int, Never>.unserialized { _, _ in }
        let timer = SignalProducer<Date, Never>.timer(interval: .seconds(1), on: TestScheduler(), leeway: .seconds(0))
        _ = (timer, SignalProducer<Int, Never>.interval(.seconds(1), on: TestScheduler()), SignalProducer<String, Never>.interval(["a"], interval: .seconds(1), on: TestScheduler()))
        disposables.forEach { $0.dispose() }
        #expect(values.all == [5, 6, 7])
    }

    @Test func operators_withReactiveSwiftsLabels() {
        let (signal, observer) = Signal<Int, PortError>.pipe()
        let scheduler = TestScheduler()
        let (trigger, _) = Signal<(), Never>.pipe()
        let lifetime = Lifetime.make().lifetime
        let chains: [Signal<Int, PortError>] = [
            signal.map { $0 }.filter { _ in true }.compactMap { $0 }.skipRepeats().uniqueValues(),
            signal.scan(0, +).scan(into: 0) { $0 += $1 }.reduce(0, +),
            signal.take(first: 1).take(last: 1).take(while: { _ in true }).take(until: { _ in true }),
            signal.skip(first: 0).skip(while: { _ in false }).skip(until: trigger).take(until: trigger).take(during: lifetime),
            signal.attempt { _ in .success(()) }.attemptMap { .success($0) },
            signal.scanMap(0) { ($0 + $1, $1) }.scanMap(into: 0) { state, value in state += value; return value },
            signal.delay(1, on: scheduler).throttle(1, on: scheduler).debounce(1, on: scheduler).timeout(after: 1, raising: .failed, on: scheduler),
            signal.observe(on: ImmediateScheduler()).on(event: { _ in }, value: { _ in }).logEvents(identifier: "x", logger: { _, _, _, _, _ in }),
            signal.take(untilReplacement: signal).flatMapError { _ in SignalProducer<Int, PortError>.empty },
            signal.materialize().dematerialize(),
            signal.materializeResults().dematerializeResults(),
            signal.combinePrevious(0).map { pair in pair.1 },
            signal.collect(count: 2).flatten(),
        ]
        let booleans = Signal<Bool, Never>.never
        _ = booleans.negate().and(booleans).or(booleans)
        _ = (Signal.all(booleans, booleans), Signal.any([booleans]))
        let promoted: Signal<Int, PortError> = Signal<Int, Never>.never.promoteError()
        let throwing: Signal<Int, any Swift.Error> = Signal<Int, Never>.never.attemptMap { $0 }
        let recorded = Seen<Int>()
        chains[0].observeResult { if case let .success(v) = $0 { recorded.add(v) } }
        observer.send(value: 3)
        _ = (promoted, throwing)
        #expect(recorded.all == [3])
    }

    @Test func combiningAndFlattening_acceptProducersSignalsAndProperties() {
        let property = MutableProperty(1)
        let (signal, _) = Signal<Int, Never>.pipe()
        let producer = SignalProducer<Int, Never>(value: 2)
        let combined: [SignalProducer<Int, Never>] = [
            producer.combineLatest(with: property).map { pair in pair.0 + pair.1 },
            producer.zip(with: signal).map { pair in pair.0 },
            producer.merge(with: property).merge(with: signal),
            producer.sample(with: property).map { pair in pair.0 },
            producer.sample(on: SignalProducer<(), Never>(value: ())),
            producer.withLatest(from: property).map { pair in pair.1 },
            producer.then(property).concat(signal).prefix(value: 0).concat(value: 9),
            producer.take(until: SignalProducer<(), Never>.never).skip(until: Signal<(), Never>.never),
            producer.flatMap(.latest) { _ in property }.flatMap(.merge) { .init(value: $0) },
            SignalProducer.combineLatest(producer, property, signal).map { triple in triple.0 },
            SignalProducer.zip([producer, producer]).map { $0[0] },
            SignalProducer.combineLatest([property, property], emptySentinel: []).map { $0.count },
            SignalProducer.merge(producer, signal, property),
            SignalProducer(property),
        ]
        _ = SignalProducer<Int, PortError>(value: 1).concat(error: .failed).retry(upTo: 1).replayLazily(upTo: 1)
        _ = SignalProducer<SignalProducer<Int, Never>, Never>(value: producer).flatten(.concat)
        _ = Signal<Signal<Int, Never>, Never>.never.flatten(.race)
        let values = Seen<Int>()
        combined[0].startWithValues { values.add($0) }
        property.value = 5
        #expect(values.all == [3, 7])
    }

    @Test func properties_composition() {
        let a = MutableProperty(1)
        let b = MutableProperty(true)
        let optional = MutableProperty<Int?>(nil)
        let inner = MutableProperty(7)
        let composed: [Property<Int>] = [
            a.map { $0 + 1 },
            a.map(\.bitWidth),
            a.map(value: 3),
            a.filter(initial: 0) { $0 > 0 },
            a.skipRepeats(),
            a.uniqueValues(),
            a.combinePrevious(0).map { pair in pair.1 },
            a.combineLatest(with: b).map { pair in pair.0 },
            a.zip(with: b).map { pair in pair.0 },
            Property.combineLatest(a, b, a).map { triple in triple.2 },
            Property.zip(a, a).map { pair in pair.0 },
            // (An inner property that is the outer one itself re-enters its lock today: the
            // semantics half of issue #11.)
            a.flatMap(.latest) { _ in inner },
            Property(value: 1),
            Property(a),
            Property(capturing: a),
            Property(initial: 0, then: a.producer),
            Property(initial: 0, then: a),
        ]
        let flags: [Property<Bool>] = [b.negate(), b.and(b), b.or(b), Property.all([b, b]), Property.any(b, b)]
        let maybe = Property<Int?>(initial: nil, then: SignalProducer<Int, Never>(value: 1))
        let many = Property<Int>.combineLatest([a, a])
        let sentinel = Property<Int>.zip([MutableProperty<Int>](), emptySentinel: [0])
        #expect(composed.allSatisfy { _ in true })
        #expect(flags[0].value == false)
        #expect(maybe.value == 1)
        #expect(many?.value == [1, 1])
        #expect(sentinel.value == [0])
        #expect(a.swap(2) == 1)
        a.modify { $0 += 1 }
        #expect(a.withValue { $0 } == 3)
        optional.value = 4
        _ = MutableProperty<Int?>()
    }

    @Test func actions_allInitialisers() {
        let enabled = MutableProperty(true)
        let state = MutableProperty<String?>("s")
        let validated = ValidatingProperty<Int, PortError>(1) { $0 > 0 ? .valid : .invalid(.failed) }
        let actions: [Action<Int, Int, PortError>] = [
            Action { SignalProducer(value: $0) },
            Action(enabledIf: enabled) { SignalProducer(value: $0) },
            Action(state: enabled, enabledIf: { $0 }) { _, input in SignalProducer(value: input) },
            Action(state: enabled) { _, input in SignalProducer(value: input) },
            Action(unwrapping: state) { _, input in SignalProducer(value: input) },
            Action(validated: validated) { value, input in SignalProducer(value: value + input) },
        ]
        let noInput: [Action<Void, Int, PortError>] = [
            Action(state: enabled) { _ in SignalProducer(value: 1) },
            Action(unwrapping: state) { _ in SignalProducer(value: 1) },
            Action(validated: validated) { _ in SignalProducer(value: 1) },
        ]
        let results = Seen<Int>()
        for action in actions {
            action.apply(1).startWithResult { if case let .success(v) = $0 { results.add(v) } }
        }
        noInput[0].apply().start()
        _ = (actions[0].values, actions[0].errors, actions[0].events, actions[0].completed, actions[0].disabledErrors, actions[0].isEnabled, actions[0].isExecuting, actions[0].lifetime)
        #expect(results.all == [1, 1, 1, 1, 1, 2])
    }

    @Test func bindings_everyTargetKind() {
        let target = MutableProperty(0)
        let optionalTarget: MutableProperty<Int>? = MutableProperty(0)
        let optionalValues = MutableProperty<Int?>(nil)
        let (signal, input) = Signal<Int, Never>.pipe()
        let (output, observer) = Signal<Int, Never>.pipe()
        let action = Action<Int, Int, Never> { SignalProducer(value: $0) }
        let bindingTarget = BindingTarget<Int>(lifetime: target.lifetime) { _ in }
        let onScheduler = BindingTarget<Int>(on: ImmediateScheduler(), lifetime: target.lifetime) { _ in }
        target <~ signal
        optionalTarget <~ signal
        optionalValues <~ signal
        action <~ signal
        bindingTarget <~ signal
        onScheduler <~ SignalProducer<Int, Never>(value: 1)
        target <~ MutableProperty(5)
        let forwarded = Seen<Int>()
        output.observeValues { forwarded.add($0) }
        observer <~ signal
        input.send(value: 3)
        #expect(target.value == 3)
        #expect(optionalTarget?.value == 3)
        #expect(optionalValues.value == 3)
        #expect(forwarded.all == [3])
    }

    @Test func disposablesLifetimesAndSchedulers() {
        let composite = CompositeDisposable()
        composite += AnyDisposable {}
        composite += {}
        let scoped = ScopedDisposable(CompositeDisposable())
        scoped += AnyDisposable()
        let serial = ScopedDisposable(SerialDisposable())
        serial.inner = AnyDisposable()
        let (lifetime, token) = Lifetime.make()
        lifetime += AnyDisposable()
        lifetime.observeEnded {}
        token.dispose()
        #expect(lifetime.hasEnded)
        #expect(Lifetime.empty.hasEnded)
        let scheduler = TestScheduler(startDate: Date(timeIntervalSinceReferenceDate: 0))
        let ran = Seen<String>()
        scheduler.schedule { ran.add("now") }
        scheduler.schedule(after: scheduler.currentDate.addingTimeInterval(1)) { ran.add("1s") }
        let repeating = scheduler.schedule(after: scheduler.currentDate, interval: .seconds(1), leeway: .seconds(0)) {}
        let delayed: DispatchTimeInterval = .seconds(2)
        scheduler.schedule(after: delayed) { ran.add("2s") }
        scheduler.advance()
        scheduler.advance(by: .seconds(1))
        scheduler.advance(by: 1.0)
        scheduler.advance(to: scheduler.currentDate)
        scheduler.rewind(by: .seconds(1))
        repeating?.dispose()
        scheduler.run()
        _ = (QueueScheduler.main, QueueScheduler(qos: .default, name: "q"), QueueScheduler(queue: .global(), name: "q2"), UIScheduler(), ImmediateScheduler())
        #expect(ran.all == ["now", "1s", "2s"])
    }

    @Test func eventsLoggingAndReactiveExtensions() {
        let event = Signal<Int, PortError>.Event.value(1)
        #expect(event.value == 1)
        #expect(event.map { $0 + 1 } == .value(2))
        #expect(Signal<Int, PortError>.Event.failed(.failed).mapError { _ in PortError.failed }.error == .failed)
        #expect(Signal<Int, PortError>.Event.completed.isTerminating)
        #expect(Signal<Int, PortError>.Event.completed.isCompleted)
        _ = LoggingEvent.Signal.allEvents
        _ = LoggingEvent.SignalProducer.allEvents
        let logger: EventLogger = defaultEventLog
        _ = SignalProducer<Int, Never>(value: 1).logEvents(identifier: "p", events: [.value], logger: logger)
        let center = NotificationCenter()
        let notifications: Signal<Notification, Never> = center.reactive.notifications(forName: .init("n"), object: nil)
        _ = notifications
        let reconstructed = Optional<Int>(reconstructing: 1)
        #expect(reconstructed == 1)
        #expect(ActionError<PortError>.disabled == .disabled)
    }
}
}
