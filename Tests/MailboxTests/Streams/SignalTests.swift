import Testing
@testable import Mailbox

extension Streams {
@Suite("Signal")
struct SignalTests {
    @Test func pipe_deliversValuesThenCompletion() {
        let (signal, input) = Signal<Int, TestError>.pipe()
        let recorder = EventRecorder<Int, TestError>()
        signal.observe(recorder.observer)
        input.send(value: 1)
        input.send(value: 2)
        input.sendCompleted()
        input.send(value: 3)
        #expect(recorder.events == [.value(1), .value(2), .completed])
    }

    @Test func observeVariants_receiveTheirEvents() {
        let (signal, input) = Signal<Int, TestError>.pipe()
        let values = Box<[Int]>([]), results = Box<[Result<Int, TestError>]>([]), failed = Box<TestError?>(nil)
        signal.observeValues { v in values.modify { $0.append(v) } }
        signal.observeResult { r in results.modify { $0.append(r) } }
        signal.observeFailed { e in failed.value = e }
        input.send(value: 7)
        input.send(error: TestError(code: 3))
        #expect(values.value == [7])
        #expect(results.value == [.success(7), .failure(TestError(code: 3))])
        #expect(failed.value == TestError(code: 3))
    }

    @Test func observeCompletedAndInterrupted() {
        let completed = Box(0), interrupted = Box(0)
        let (a, inputA) = Signal<Int, Never>.pipe()
        a.observeCompleted { completed.value += 1 }
        inputA.sendCompleted()
        let (b, inputB) = Signal<Int, Never>.pipe()
        b.observeInterrupted { interrupted.value += 1 }
        inputB.sendInterrupted()
        #expect(completed.value == 1)
        #expect(interrupted.value == 1)
    }

    @Test func generator_runsAtOnceAndLifetimeEndsOnTermination() {
        let ended = Box(false)
        let inputBox = Box<Signal<Int, Never>.Observer?>(nil)
        let signal = Signal<Int, Never> { observer, lifetime in
            inputBox.value = observer
            lifetime.observeEnded { ended.value = true }
        }
        let recorder = EventRecorder<Int, Never>()
        signal.observe(recorder.observer)
        inputBox.value?.send(value: 1)
        #expect(!ended.value)
        inputBox.value?.sendCompleted()
        #expect(ended.value)
        #expect(recorder.events == [.value(1), .completed])
    }

    @Test func releasingInput_interruptsSignal() {
        var input: Signal<Int, Never>.Observer?
        let signal: Signal<Int, Never>
        (signal, input) = Signal<Int, Never>.pipe()
        let recorder = EventRecorder<Int, Never>()
        signal.observe(recorder.observer)
        input?.send(value: 1)
        input = nil
        #expect(recorder.events == [.value(1), .interrupted])
    }

    @Test func pipeDisposable_isDisposedOnTermination() {
        let disposable = AnyDisposable()
        let (signal, input) = Signal<Int, Never>.pipe(disposable: disposable)
        #expect(!disposable.isDisposed)
        input.sendCompleted()
        #expect(disposable.isDisposed)
        withExtendedLifetime(signal) {}
    }

    @Test func empty_interruptsNewObservers_never_sendsNothing() {
        let recorder = EventRecorder<Int, Never>()
        Signal<Int, Never>.empty.observe(recorder.observer)
        #expect(recorder.events == [.interrupted])
        let never = EventRecorder<Int, Never>()
        let signal = Signal<Int, Never>.never
        signal.observe(never.observer)
        #expect(never.events.isEmpty)
    }

    @Test func observerClosureInitialisers() {
        let values = Box<[Int]>([]), done = Box(false)
        let observer = Signal<Int, Never>.Observer(value: { v in values.modify { $0.append(v) } }, completed: { done.value = true })
        observer.send(value: 1)
        observer.send(.value(2))
        observer.sendCompleted()
        #expect(values.value == [1, 2])
        #expect(done.value)
    }

    @Test func lifetimeEnded_completesWhenTokenDisposed() {
        let (lifetime, token) = Lifetime.make()
        let recorder = EventRecorder<Never, Never>()
        lifetime.ended.observe(recorder.observer)
        #expect(recorder.events.isEmpty)
        token.dispose()
        #expect(recorder.isCompleted)
    }

    @Test func event_helpers() {
        let event = Event<Int, TestError>.value(2)
        #expect(event.map { $0 * 2 } == .value(4))
        #expect(!event.isTerminating)
        #expect(Event<Int, TestError>.failed(TestError()).mapError { _ in TestError(code: 9) } == .failed(TestError(code: 9)))
        #expect(Event<Int, TestError>.interrupted.isTerminating)
        #expect(Event<Int, TestError>.completed.isCompleted)
        #expect(event.description == "VALUE 2")
    }
}
}
