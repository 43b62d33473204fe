import Foundation

// observe(on:), start(on:), delay, throttle, debounce, timeout, lazyMap for Signal and
// SignalProducer. Every time-based operator reads the time from its `DateScheduler` and
// schedules through it, so it runs unchanged on `TestScheduler`'s virtual time.

extension Duration {
    /// `seconds` as a `Duration`, in whole nanoseconds.
    @usableFromInline
    static func _seconds(_ seconds: TimeInterval) -> Duration {
        .nanoseconds(TimeConversion.nanoseconds(seconds))
    }
}

extension Signal {
    /// Delivers every event on `scheduler`, in order (for a serial scheduler).
    ///
    /// Events already scheduled when the result terminates are dropped.
    public func observe(on scheduler: any Scheduler) -> Signal<Value, Error> {
        Signal { downstream, lifetime in
            lifetime += self.observe { event in
                let carried = _Carried(event)
                scheduler.schedule { downstream.send(carried.value) }
            }
        }
    }

    /// Delays values and completion by `interval` seconds on `scheduler`; failure and
    /// interruption are forwarded on `scheduler` at once.
    ///
    /// ```
    /// input:  --1--2--|
    /// output: ------1--2--|      (interval = 4 ticks)
    /// ```
    ///
    /// - Precondition: `interval >= 0`.
    public func delay(_ interval: TimeInterval, on scheduler: any DateScheduler) -> Signal<Value, Error> {
        precondition(interval >= 0, "delay requires a non-negative interval, not \(interval)")
        return Signal { downstream, lifetime in
            lifetime += self.observe { event in
                let carried = _Carried(event)
                switch event {
                case .value, .completed:
                    lifetime += scheduler.schedule(after: ._seconds(interval)) { downstream.send(carried.value) }
                case .failed, .interrupted:
                    lifetime += scheduler.schedule { downstream.send(carried.value) }
                }
            }
        }
    }

    /// Forwards at most one value per `interval` seconds: a value arriving within `interval`
    /// of the last one sent is held, replacing any value already held, and sent when the
    /// interval has passed. Values are sent on `scheduler`.
    ///
    /// A held value is discarded if the signal terminates; terminal events are forwarded on
    /// `scheduler` at once.
    ///
    /// ```
    /// input:  1-2-3-------4
    /// output: 1-----3-----4      (interval = 6 ticks)
    /// ```
    ///
    /// - Precondition: `interval >= 0`.
    public func throttle(_ interval: TimeInterval, on scheduler: any DateScheduler) -> Signal<Value, Error> {
        precondition(interval >= 0, "throttle requires a non-negative interval, not \(interval)")
        return Signal { downstream, lifetime in
            let state = _Locked(locking: _ThrottleState<Value>())
            lifetime += self.observe { event in
                guard case let .value(value) = event else {
                    let carried = _Carried(event)
                    state.withLock { $0.scheduled?.dispose(); $0.pending = nil }
                    scheduler.schedule { downstream.send(carried.value) }
                    return
                }
                let now = scheduler.currentDate
                let sendNow: Bool = state.withLock { state in
                    if let last = state.lastSent, now.timeIntervalSince(last) < interval {
                        state.pending = value
                        return false
                    }
                    state.lastSent = now
                    state.pending = nil
                    state.scheduled?.dispose()
                    state.scheduled = nil
                    return true
                }
                if sendNow {
                    let carried = _Carried(value)
                    scheduler.schedule { downstream.send(value: carried.value) }
                    return
                }
                let schedule: Date? = state.withLock { state in
                    guard state.scheduled == nil, let last = state.lastSent else { return nil }
                    state.scheduled = AnyDisposable()
                    return last.addingTimeInterval(interval)
                }
                guard let date = schedule else { return }
                let disposable = scheduler.schedule(after: date) {
                    let pending: Value? = state.withLock { state in
                        let pending = state.pending
                        state.pending = nil
                        state.scheduled = nil
                        if pending != nil { state.lastSent = scheduler.currentDate }
                        return pending
                    }
                    if let pending { downstream.send(value: pending) }
                }
                state.withLock { state in
                    if state.scheduled != nil { state.scheduled = disposable }
                }
                lifetime += disposable
            }
        }
    }

    /// Sends a value only once `interval` seconds have passed without another value; each
    /// value restarts the wait. Values are sent on `scheduler`.
    ///
    /// On completion a waiting value is discarded when `discardWhenCompleted` is `true`
    /// (ReactiveSwift's default); otherwise it is sent when its wait ends — `interval` after
    /// it arrived, as if the signal had not completed — followed at once by `completed`. With no
    /// value waiting (or one discarded), `completed` is forwarded on `scheduler` at once, as are
    /// failure and interruption (which discard a waiting value).
    ///
    /// ```
    /// input:  1-2-------3-|
    /// output: ------2-----|        (interval = 4 ticks, discardWhenCompleted)
    /// output: ------2-------3|     (interval = 4 ticks, discardWhenCompleted: false)
    /// ```
    ///
    /// - Precondition: `interval >= 0`.
    public func debounce(_ interval: TimeInterval, on scheduler: any DateScheduler, discardWhenCompleted: Bool = true) -> Signal<Value, Error> {
        precondition(interval >= 0, "debounce requires a non-negative interval, not \(interval)")
        return Signal { downstream, lifetime in
            let pending = _Locked(locking: _DebounceState<Value>())
            lifetime += self.observe { event in
                switch event {
                case let .value(value):
                    let arrived = scheduler.currentDate
                    let previous = pending.withLock { state -> (any Disposable)? in
                        state.value = value
                        state.lastArrival = arrived
                        return state.timer
                    }
                    previous?.dispose()
                    let timer = scheduler.schedule(after: ._seconds(interval)) {
                        let value: Value? = pending.withLock { state in
                            let value = state.value
                            state.value = nil
                            return value
                        }
                        if let value { downstream.send(value: value) }
                    }
                    pending.withLock { $0.timer = timer }
                    lifetime += timer
                case .completed:
                    let (value, timer, arrived) = pending.withLock { state in
                        let taken = (state.value, state.timer, state.lastArrival)
                        state = _DebounceState()
                        return taken
                    }
                    timer?.dispose()
                    if !discardWhenCompleted, let value, let arrived {
                        // Sent when its own wait ends, then the completion.
                        let carried = _Carried(value)
                        lifetime += scheduler.schedule(after: arrived.addingTimeInterval(interval)) {
                            downstream.send(value: carried.value)
                            downstream.sendCompleted()
                        }
                    } else {
                        scheduler.schedule { downstream.sendCompleted() }
                    }
                default:
                    pending.withLock { $0.timer?.dispose() }
                    let carried = _Carried(event)
                    scheduler.schedule { downstream.send(carried.value) }
                }
            }
        }
    }

    /// Forwards events until `interval` seconds have passed on `scheduler`, then fails with
    /// `error` (unless the signal terminated first).
    ///
    /// - Precondition: `interval >= 0`.
    public func timeout(after interval: TimeInterval, raising error: Error, on scheduler: any DateScheduler) -> Signal<Value, Error> {
        precondition(interval >= 0, "timeout requires a non-negative interval, not \(interval)")
        return Signal { downstream, lifetime in
            lifetime += scheduler.schedule(after: ._seconds(interval)) { downstream.send(error: error) }
            lifetime += self.observe(downstream)
        }
    }

    /// Like `map`, but `transform` runs on `scheduler`, and only for the latest value:
    /// values that arrive while a transform is waiting to run replace its input. Terminal
    /// events follow on `scheduler`.
    public func lazyMap<U>(on scheduler: any Scheduler, transform: @escaping @Sendable (Value) -> U) -> Signal<U, Error> {
        Signal<U, Error> { downstream, lifetime in
            let pending = _Locked<(value: Value?, isScheduled: Bool)>(locking: (nil, false))
            lifetime += self.observe { event in
                guard case let .value(value) = event else {
                    let carried = _Carried(event)
                    scheduler.schedule { self._forward(carried.value, to: downstream) }
                    return
                }
                let schedule = pending.withLock { state -> Bool in
                    state.value = value
                    defer { state.isScheduled = true }
                    return !state.isScheduled
                }
                guard schedule else { return }
                lifetime += scheduler.schedule {
                    let value: Value? = pending.withLock { state in
                        let value = state.value
                        state = (nil, false)
                        return value
                    }
                    if let value { downstream.send(value: transform(value)) }
                }
            }
        }
    }
}

extension SignalProducer {
    /// Runs the start handler of each run on `scheduler` (disposing the run before then
    /// cancels the start). Events are sent wherever the start handler sends them.
    public func start(on scheduler: any Scheduler) -> SignalProducer<Value, Error> {
        let producer = self
        return SignalProducer { observer, lifetime in
            lifetime += scheduler.schedule {
                lifetime += producer.start(observer)
            }
        }
    }

    /// Applies a signal operator that delivers on `scheduler` to every run, with the
    /// interruption rule of ReactiveSwift's asynchronous operators: disposing the run
    /// interrupts the upstream run and detaches the operator at once — events it has already
    /// scheduled are dropped — and delivers `interrupted` on `scheduler`, when it next runs,
    /// rather than inside `dispose()`.
    ///
    /// ```
    /// upstream:  --1--2--X            (X: the run is disposed; the upstream is interrupted now)
    /// scheduled:    [1] [2]           (dropped)
    /// observer:  ----------------!    (interrupted, on the scheduler's next run)
    /// ```
    func _liftOnScheduler<U, F>(
        _ scheduler: any Scheduler,
        _ transform: @escaping @Sendable (Signal<Value, Error>) -> Signal<U, F>
    ) -> SignalProducer<U, F> {
        let upstream = self
        return SignalProducer<U, F> { downstream, lifetime in
            downstream.core?.defersInterruption()
            // Added first, so it runs before the upstream is interrupted and the operator
            // detached. The lifetime ends without the run having terminated only when the run
            // was disposed.
            lifetime.observeEnded {
                guard downstream.core?.isTerminated == false else { return }
                scheduler.schedule { downstream.sendInterrupted() }
            }
            upstream.startWithSignal { signal, interrupter in
                lifetime += interrupter
                lifetime += transform(signal).observe(downstream)
            }
        }
    }

    /// See `Signal.observe(on:)`. Disposing a run interrupts the upstream at once, drops the
    /// events still scheduled, and delivers `interrupted` on `scheduler` (when it next runs), as
    /// in ReactiveSwift.
    public func observe(on scheduler: any Scheduler) -> SignalProducer<Value, Error> {
        _liftOnScheduler(scheduler) { $0.observe(on: scheduler) }
    }

    /// See `Signal.delay(_:on:)`. Disposing a run interrupts the upstream at once, drops the
    /// delayed events, and delivers `interrupted` on `scheduler`.
    public func delay(_ interval: TimeInterval, on scheduler: any DateScheduler) -> SignalProducer<Value, Error> {
        _liftOnScheduler(scheduler) { $0.delay(interval, on: scheduler) }
    }

    /// See `Signal.throttle(_:on:)`. Disposing a run interrupts the upstream at once, drops a
    /// held value, and delivers `interrupted` on `scheduler`.
    public func throttle(_ interval: TimeInterval, on scheduler: any DateScheduler) -> SignalProducer<Value, Error> {
        _liftOnScheduler(scheduler) { $0.throttle(interval, on: scheduler) }
    }

    /// See `Signal.debounce(_:on:discardWhenCompleted:)`. Disposing a run interrupts the
    /// upstream at once, drops a waiting value, and delivers `interrupted` on `scheduler`.
    public func debounce(_ interval: TimeInterval, on scheduler: any DateScheduler, discardWhenCompleted: Bool = true) -> SignalProducer<Value, Error> {
        _liftOnScheduler(scheduler) { $0.debounce(interval, on: scheduler, discardWhenCompleted: discardWhenCompleted) }
    }

    /// See `Signal.timeout(after:raising:on:)`; the time starts with each run.
    public func timeout(after interval: TimeInterval, raising error: Error, on scheduler: any DateScheduler) -> SignalProducer<Value, Error> {
        lift { $0.timeout(after: interval, raising: error, on: scheduler) }
    }

    /// See `Signal.lazyMap(on:transform:)`. Disposing a run interrupts the upstream at once,
    /// drops a waiting value, and delivers `interrupted` on `scheduler`.
    public func lazyMap<U>(on scheduler: any Scheduler, transform: @escaping @Sendable (Value) -> U) -> SignalProducer<U, Error> {
        _liftOnScheduler(scheduler) { $0.lazyMap(on: scheduler, transform: transform) }
    }
}

@usableFromInline
struct _DebounceState<Value> {
    var value: Value?
    var timer: (any Disposable)?
    /// When `value` arrived.
    var lastArrival: Date?
}

@usableFromInline
struct _ThrottleState<Value> {
    var lastSent: Date?
    var pending: Value?
    var scheduled: (any Disposable)?
}
