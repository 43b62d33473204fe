import Dispatch
import Foundation

// throttle(while:on:) and collect(every:on:skipEmpty:discardWhenCompleted:).

extension Signal {
    /// Holds values while `shouldThrottle` is `true` (keeping only the latest) and sends the
    /// held value on `scheduler` when it turns `false`; values arriving while it is `false`
    /// are sent on `scheduler` at once. Terminal events are forwarded on `scheduler`.
    public func throttle<P: PropertyProtocol>(while shouldThrottle: P, on scheduler: any Scheduler) -> Signal<Value, Error> where P.Value == Bool {
        Signal { downstream, lifetime in
            let state = _Locked<(isThrottling: Bool, pending: Value?)>(locking: (false, nil))
            let send: @Sendable (Event) -> Void = { event in
                let carried = _Carried(event)
                scheduler.schedule { downstream.send(carried.value) }
            }
            lifetime += shouldThrottle.producer.startWithValues { isThrottling in
                let released: Value? = state.withLock { state in
                    state.isThrottling = isThrottling
                    guard !isThrottling else { return nil }
                    defer { state.pending = nil }
                    return state.pending
                }
                if let released { send(.value(released)) }
            }
            lifetime += self.observe { event in
                if case let .value(value) = event {
                    let held = state.withLock { state -> Bool in
                        if state.isThrottling { state.pending = value }
                        return state.isThrottling
                    }
                    if held { return }
                }
                send(event)
            }
        }
    }

    /// Sends the values collected during each `interval` on `scheduler`, as an array (an empty
    /// one too, unless `skipEmpty`). On completion the values still collected are sent first
    /// unless `discardWhenCompleted`; terminal events are forwarded on `scheduler`.
    ///
    /// - Precondition: `interval` is positive (the scheduler's repeating-action precondition).
    public func collect(every interval: DispatchTimeInterval, on scheduler: any DateScheduler, skipEmpty: Bool = false, discardWhenCompleted: Bool = true) -> Signal<[Value], Error> {
        Signal<[Value], Error> { downstream, lifetime in
            let collected = _Locked<[Value]>(locking: [])
            let first = scheduler.currentDate.addingTimeInterval(Double(interval.nanoseconds) / 1e9)
            lifetime += scheduler.schedule(after: first, interval: interval, leeway: .nanoseconds(0)) {
                let values = collected.withLock { values -> [Value] in
                    defer { values = [] }
                    return values
                }
                if !(skipEmpty && values.isEmpty) { downstream.send(value: values) }
            }
            lifetime += self.observe { event in
                switch event {
                case let .value(value):
                    collected.withLock { $0.append(value) }
                case .completed:
                    let values = collected.withLock { $0 }
                    let carried = _Carried(values)
                    scheduler.schedule {
                        if !discardWhenCompleted, !(skipEmpty && carried.value.isEmpty) {
                            downstream.send(value: carried.value)
                        }
                        downstream.sendCompleted()
                    }
                case let .failed(error):
                    scheduler.schedule { downstream.send(error: error) }
                case .interrupted:
                    scheduler.schedule { downstream.sendInterrupted() }
                }
            }
        }
    }
}

extension SignalProducer {
    /// See `Signal.throttle(while:on:)`.
    public func throttle<P: PropertyProtocol>(while shouldThrottle: P, on scheduler: any Scheduler) -> SignalProducer<Value, Error> where P.Value == Bool {
        let property = _Carried(shouldThrottle)
        return lift { $0.throttle(while: property.value, on: scheduler) }
    }

    /// See `Signal.collect(every:on:skipEmpty:discardWhenCompleted:)`. Disposing a run
    /// interrupts the upstream at once, drops the values collected, and delivers `interrupted`
    /// on `scheduler`.
    public func collect(every interval: DispatchTimeInterval, on scheduler: any DateScheduler, skipEmpty: Bool = false, discardWhenCompleted: Bool = true) -> SignalProducer<[Value], Error> {
        _liftOnScheduler(scheduler) { $0.collect(every: interval, on: scheduler, skipEmpty: skipEmpty, discardWhenCompleted: discardWhenCompleted) }
    }
}
