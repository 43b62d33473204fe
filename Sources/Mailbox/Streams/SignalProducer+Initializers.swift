import Dispatch
import Foundation

// More ways to make a producer: from anything `SignalProducerConvertible`, from a throwing
// closure, and the time sources `timer(interval:on:)` and `interval(_:on:)`.

extension SignalProducer {
    /// The producer of `base` (a producer, a signal or a property): `base.producer`.
    public init<T: SignalProducerConvertible>(_ base: T) where T.Value == Value, T.Error == Error {
        self = base.producer
    }
}

extension SignalProducer where Error == any Swift.Error {
    /// A producer that calls `action` each time it is started, and sends what it returns and
    /// completes, or fails with what it throws.
    public init(_ action: @escaping @Sendable () throws -> Value) {
        self.init { () -> Result<Value, any Swift.Error> in Result { try action() } }
    }
}

extension SignalProducer where Value == Date, Error == Never {
    /// A producer whose runs send `scheduler.currentDate` every `interval`, the first time one
    /// `interval` after the start, with a leeway of 10 % of `interval`. Never completes:
    /// interrupt every run (dispose what `start` returned, or tie it to a lifetime).
    ///
    /// - Precondition: `interval` is positive.
    public static func timer(interval: DispatchTimeInterval, on scheduler: any DateScheduler) -> SignalProducer<Value, Error> {
        timer(interval: interval, on: scheduler, leeway: interval * 0.1)
    }

    /// A producer whose runs send `scheduler.currentDate` every `interval` (within
    /// `leeway`), the first time one `interval` after the start. Never completes.
    ///
    /// - Precondition: `interval` is positive and `leeway` is not negative.
    public static func timer(interval: DispatchTimeInterval, on scheduler: any DateScheduler, leeway: DispatchTimeInterval) -> SignalProducer<Value, Error> {
        precondition(interval.nanoseconds > 0, "timer(interval:on:leeway:) requires a positive interval, not \(interval)")
        precondition(leeway.nanoseconds >= 0, "timer(interval:on:leeway:) requires a non-negative leeway, not \(leeway)")
        return SignalProducer { observer, lifetime in
            lifetime += scheduler.schedule(
                after: scheduler.currentDate.addingTimeInterval(interval.timeInterval),
                interval: interval,
                leeway: leeway
            ) {
                observer.send(value: scheduler.currentDate)
            }
        }
    }
}

extension SignalProducer where Error == Never {
    /// A producer whose runs send the elements of `values`, one every `interval` on
    /// `scheduler` (the first one `interval` after the start), and complete one `interval`
    /// after the last. An infinite sequence never completes: interrupt every run.
    ///
    /// Each run iterates `values` anew.
    ///
    /// - Precondition: `interval` is positive.
    public static func interval<S: Sequence & Sendable>(
        _ values: S,
        interval: DispatchTimeInterval,
        on scheduler: any DateScheduler
    ) -> SignalProducer<S.Element, Error> where S.Element == Value {
        precondition(interval.nanoseconds > 0, "interval(_:interval:on:) requires a positive interval, not \(interval)")
        return SignalProducer { observer, lifetime in
            // Advanced only by the repeating action, which the scheduler runs one at a time.
            let iterator = _SerialState(values.makeIterator())
            lifetime += scheduler.schedule(
                after: scheduler.currentDate.addingTimeInterval(interval.timeInterval),
                interval: interval,
                leeway: interval * 0.1
            ) {
                if let value = iterator.value.next() {
                    observer.send(value: value)
                } else {
                    observer.sendCompleted()
                }
            }
        }
    }
}

extension SignalProducer where Value == Int, Error == Never {
    /// A producer whose runs send 0, 1, 2, … one every `interval` on `scheduler` (the first one
    /// `interval` after the start). Never completes: interrupt every run.
    public static func interval(_ interval: DispatchTimeInterval, on scheduler: any DateScheduler) -> SignalProducer<Value, Error> {
        .interval(0..., interval: interval, on: scheduler)
    }
}
