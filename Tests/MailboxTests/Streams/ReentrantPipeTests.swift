import Dispatch
import Testing
@testable import Mailbox

extension Streams {
@Suite("Re-entrant and unserialized pipes")
struct ReentrantPipeTests {
    @Test func reentrantPipe_deliversRecursiveSendsAfterTheCurrentEvent_inOrder() {
        let (signal, input) = Signal<Int, Never>.reentrantUnserializedPipe()
        let first = Box<[String]>([])
        signal.observeValues { value in
            first.modify { $0.append("first \(value)") }
            // A feedback loop: two recursive sends per value below 3.
            if value < 3 {
                input.send(value: value * 10)
                input.send(value: value + 1)
            }
        }
        signal.observeValues { value in first.modify { $0.append("second \(value)") } }
        input.send(value: 1)
        // Every event reaches both observers before the next one starts, first in first out.
        #expect(first.value == [
            "first 1", "second 1",
            "first 10", "second 10", "first 2", "second 2",
            "first 20", "second 20", "first 3", "second 3",
        ])
    }

    @Test func reentrantPipe_recursiveTerminalEvent_endsTheSignalAfterQueuedValues() {
        let (signal, input) = Signal<Int, Never>.reentrantUnserializedPipe()
        let recorder = EventRecorder<Int, Never>()
        signal.observeValues { value in
            if value == 1 {
                input.send(value: 2)
                input.sendCompleted()
                input.send(value: 3)
            }
        }
        signal.observe(recorder.observer)
        input.send(value: 1)
        #expect(recorder.events == [.value(1), .value(2), .completed])
    }

    @Test func reentrantPipe_concurrentSenders_areDeliveredSerially() {
        let (signal, input) = Signal<Int, Never>.reentrantUnserializedPipe()
        let probe = ConcurrencyProbe()
        let count = Box(0)
        signal.observeValues { _ in
            probe.run { count.modify { $0 += 1 } }
        }
        let group = DispatchGroup()
        for thread in 0..<4 {
            DispatchQueue.global().async(group: group) {
                for value in 0..<500 { input.send(value: thread * 1000 + value) }
            }
        }
        #expect(group.waitBounded())
        // A sender whose event was queued returns before it is delivered; the delivering
        // thread has delivered everything by the time every sender has returned and it has.
        #expect(spinUntil { count.value == 2000 })
        #expect(probe.maximum == 1)
    }

    @Test func reentrantPipe_releasingTheInput_interruptsAndDisposes() {
        let disposed = Box(false)
        var pair: (output: Signal<Int, Never>, input: Signal<Int, Never>.Observer)? =
            Signal<Int, Never>.reentrantUnserializedPipe(disposable: AnyDisposable { disposed.value = true })
        let recorder = EventRecorder<Int, Never>()
        let signal = pair!.output
        signal.observe(recorder.observer)
        pair!.input.send(value: 1)
        pair = nil
        #expect(recorder.events == [.value(1), .interrupted])
        #expect(disposed.value)
    }

    @Test func reentrantUnserialized_generatorGetsTheReentrantInputAndLifetime() {
        let ended = Box(false)
        let held = Box<Signal<Int, Never>.Observer?>(nil)
        let signal = Signal<Int, Never>.reentrantUnserialized { input, lifetime in
            lifetime.observeEnded { ended.value = true }
            held.value = input
        }
        let recorder = EventRecorder<Int, Never>()
        signal.observeValues { value in
            // Recursive sends through the generator's input are queued, not deadlocked.
            if value == 1 { held.value?.send(value: 2) }
            if value == 2 { held.value?.sendCompleted() }
        }
        signal.observe(recorder.observer)
        held.value?.send(value: 1)
        #expect(recorder.events == [.value(1), .value(2), .completed])
        #expect(ended.value)
    }

    @Test func unserializedPipe_behavesAsAPipe() {
        let disposed = Box(false)
        let (signal, input) = Signal<Int, TestError>.unserializedPipe(disposable: AnyDisposable { disposed.value = true })
        let recorder = EventRecorder<Int, TestError>()
        signal.observe(recorder.observer)
        input.send(value: 1)
        input.send(error: TestError(code: 2))
        #expect(recorder.events == [.value(1), .failed(TestError(code: 2))])
        #expect(disposed.value)
        let generated = EventRecorder<Int, Never>()
        Signal<Int, Never>.unserialized { input, _ in
            input.send(value: 1)
        }.observe(generated.observer)
        // Hot: the value was sent before the observer was attached.
        #expect(generated.events == [.interrupted])
        let produced = EventRecorder<Int, Never>()
        SignalProducer<Int, Never>.unserialized { input, _ in
            input.send(value: 5)
            input.sendCompleted()
        }.start(produced.observer)
        #expect(produced.events == [.value(5), .completed])
    }
}
}
