import Dispatch
import Foundation
import Testing
@testable import Mailbox

// Issue #11, semantics 2 and 3: interrupting a run through `observe(on:)`, and
// `debounce(_:on:discardWhenCompleted: false)`. The outcomes are what ReactiveSwift 7.2.1 prints
// for the same programs on its `TestScheduler`.

extension Streams {
@Suite("Scheduling operators: disposal and completion timing")
struct SchedulingSemanticsTests {
    @Test func disposingARunThroughObserveOn_interruptsUpstreamAtOnce_andDeliversInterruptedOnTheScheduler() {
        let scheduler = TestScheduler()
        let (source, input) = Signal<Int, Never>.pipe()
        let upstreamEnded = Locked(false)
        let upstream = SignalProducer<Int, Never> { observer, lifetime in
            lifetime.observeEnded { upstreamEnded.withLock { $0 = true } }
            lifetime += source.observe(observer)
        }
        let recorder = EventRecorder<Int, Never>()
        let disposable = upstream.observe(on: scheduler).start(recorder.observer)
        input.send(value: 1)
        input.send(value: 2)
        #expect(!upstreamEnded.snapshot)

        disposable.dispose()
        // The upstream run is cancelled inside `dispose()`…
        #expect(upstreamEnded.snapshot)
        #expect(disposable.isDisposed)
        // …but nothing is delivered synchronously: the observer hears on the scheduler.
        #expect(recorder.events.isEmpty)

        scheduler.run()
        // The queued values are dropped; `interrupted` arrives on the scheduler's run.
        #expect(recorder.events == [.interrupted])
    }

    @Test func disposingARunThroughObserveOn_deliversInterruptedOnTheSchedulersThread() {
        let queue = QueueScheduler(name: "observe-on-disposal")
        let key = DispatchSpecificKey<Int>()
        queue.queue.setSpecific(key: key, value: 1)
        let onQueue = Locked<Bool?>(nil)
        let done = DispatchSemaphore(value: 0)
        let disposable = SignalProducer<Int, Never>.never
            .observe(on: queue)
            .startWithInterrupted {
                onQueue.withLock { $0 = DispatchQueue.getSpecific(key: key) == 1 }
                done.signal()
            }
        disposable.dispose()
        #expect(done.waitBounded())
        #expect(onQueue.snapshot == true)
    }

    @Test func disposingARunThroughObserveOn_afterItCompleted_deliversNothingMore() {
        let scheduler = TestScheduler()
        let recorder = EventRecorder<Int, Never>()
        let disposable = SignalProducer<Int, Never>([1, 2, 3]).observe(on: scheduler).start(recorder.observer)
        scheduler.advance()
        #expect(recorder.events == [.value(1), .value(2), .value(3), .completed])
        disposable.dispose()
        scheduler.run()
        #expect(recorder.events == [.value(1), .value(2), .value(3), .completed])
    }

    @Test func disposingARunThroughObserveOn_deliversExactlyOneInterrupted() {
        let scheduler = TestScheduler()
        let recorder = EventRecorder<Int, Never>()
        // The upstream's own `interrupted` (it is interrupted by the disposal) is queued too:
        // the observer must still hear only one.
        let disposable = SignalProducer<Int, Never>.never.observe(on: scheduler).start(recorder.observer)
        disposable.dispose()
        disposable.dispose()
        scheduler.run()
        #expect(recorder.events == [.interrupted])
    }

    @Test func observeOnSignal_detachingTheObserver_isSilent() {
        let scheduler = TestScheduler()
        let (signal, input) = Signal<Int, Never>.pipe()
        let recorder = EventRecorder<Int, Never>()
        let disposable = signal.observe(on: scheduler).observe(recorder.observer)
        input.send(value: 1)
        disposable?.dispose()
        scheduler.run()
        #expect(recorder.events.isEmpty)
    }

    @Test func debounceKeepingThePendingValue_deliversItAndTheCompletionWhenTheIntervalElapses() {
        let scheduler = TestScheduler()
        let (signal, input) = Signal<Int, Never>.pipe()
        let recorder = EventRecorder<Int, Never>()
        let times = Locked<[TimeInterval]>([])
        signal.debounce(1, on: scheduler, discardWhenCompleted: false).observe { event in
            times.append(scheduler.currentDate.timeIntervalSince(scheduler.startDate))
            recorder.record(event)
        }
        input.send(value: 1)
        scheduler.advance(by: .milliseconds(300))
        input.sendCompleted()
        scheduler.advance()
        #expect(recorder.events.isEmpty)
        scheduler.advance(by: .milliseconds(600))
        #expect(recorder.events.isEmpty)
        scheduler.advance(by: .milliseconds(100))
        #expect(recorder.events == [.value(1), .completed])
        #expect(times.snapshot == [1, 1])
    }

    @Test func debounceKeepingThePendingValue_withNothingPending_completesOnTheNextTick() {
        let scheduler = TestScheduler()
        let (signal, input) = Signal<Int, Never>.pipe()
        let recorder = EventRecorder<Int, Never>()
        signal.debounce(1, on: scheduler, discardWhenCompleted: false).observe(recorder.observer)
        input.sendCompleted()
        #expect(recorder.events.isEmpty)
        scheduler.advance()
        #expect(recorder.events == [.completed])
    }

    @Test func debounceDiscardingThePendingValue_completesOnTheNextTick() {
        let scheduler = TestScheduler()
        let (signal, input) = Signal<Int, Never>.pipe()
        let recorder = EventRecorder<Int, Never>()
        signal.debounce(1, on: scheduler).observe(recorder.observer)
        input.send(value: 1)
        input.sendCompleted()
        scheduler.advance()
        #expect(recorder.events == [.completed])
    }

    @Test func debounceProducerKeepingThePendingValue_completesWhenTheIntervalElapses() {
        let scheduler = TestScheduler()
        let recorder = EventRecorder<Int, Never>()
        SignalProducer<Int, Never>(value: 7)
            .debounce(2, on: scheduler, discardWhenCompleted: false)
            .start(recorder.observer)
        scheduler.advance(by: .seconds(1))
        #expect(recorder.events.isEmpty)
        scheduler.advance(by: .seconds(1))
        #expect(recorder.events == [.value(7), .completed])
    }
}
}
