extension Signal {
    /// Receives the events of a signal, or — as a signal's input — sends them.
    ///
    /// An observer made with a closure runs it for each event it is sent. The input observer
    /// of a `pipe()` or a `Signal { observer, lifetime in … }` forwards what it is sent to its
    /// signal, and interrupts the signal when it is released before sending a terminal event.
    ///
    /// Thread-safety: an observer may be sent events from any thread, but the sender must
    /// keep them serial (a signal does); an input observer accepts concurrent senders and
    /// serialises them itself.
    public final class Observer: Sendable {
        /// The closure an observer runs for each event.
        public typealias Action = @Sendable (Event) -> Void

        @usableFromInline
        let action: Action?

        /// Set instead of `action` for an observer of values only (`observeValues`,
        /// `startWithValues`): called directly, so such an observer needs no closure wrapping
        /// the caller's (one allocation and one indirect call fewer).
        @usableFromInline
        let valueAction: (@Sendable (Value) -> Void)?

        /// Set for a signal's input observer: events go to this core.
        @usableFromInline
        let core: _SignalCore<Value, Error>?

        /// `core`, typed as its non-generic base, so `deinit` can check it without generic
        /// metadata. Unretained (`core` keeps it alive), and read without a retain.
        @usableFromInline
        let _coreBase: Unmanaged<_SignalCoreBase>?

        /// `core`, unretained, for sending: `core` keeps it alive, and sending through it
        /// costs no retain/release of the core per event.
        @usableFromInline
        let _unretainedCore: Unmanaged<_SignalCore<Value, Error>>?

        /// Creates an observer that runs `action` for each event.
        @inlinable
        public init(_ action: @escaping Action) {
            self.action = action
            self.valueAction = nil
            self.core = nil
            self._coreBase = nil
            self._unretainedCore = nil
        }

        /// An observer that runs `valueAction` for each value and ignores terminal events; the
        /// same as `Observer { if case let .value(v) = $0 { valueAction(v) } }`. (A factory,
        /// not an `init`: a labelled closure init would make `Observer { _ in }` ambiguous.)
        @inlinable
        static func _values(_ valueAction: @escaping @Sendable (Value) -> Void) -> Observer {
            Observer(valueAction: valueAction, _valuesOnly: ())
        }

        @inlinable
        init(valueAction: @escaping @Sendable (Value) -> Void, _valuesOnly: Void) {
            self.action = nil
            self.valueAction = valueAction
            self.core = nil
            self._coreBase = nil
            self._unretainedCore = nil
        }

        /// Creates an input observer for `core`; it interrupts the signal on deinit.
        @inlinable
        init(core: _SignalCore<Value, Error>) {
            self.action = nil
            self.valueAction = nil
            self.core = core
            self._coreBase = .passUnretained(core)
            self._unretainedCore = .passUnretained(core)
        }

        /// Creates an observer that runs the closure matching each event; a missing closure
        /// ignores its events.
        @inlinable
        public convenience init(
            value: (@Sendable (Value) -> Void)? = nil,
            failed: (@Sendable (Error) -> Void)? = nil,
            completed: (@Sendable () -> Void)? = nil,
            interrupted: (@Sendable () -> Void)? = nil
        ) {
            self.init { event in
                switch event {
                case let .value(v): value?(v)
                case let .failed(error): failed?(error)
                case .completed: completed?()
                case .interrupted: interrupted?()
                }
            }
        }

        deinit {
            // Checked through the non-generic base first: releasing the input of a signal
            // that has terminated (the common case) then costs no generic code.
            guard let base = _coreBase, !base._withUnsafeGuaranteedRef({ $0.hasTerminated }) else { return }
            core?.inputReleased()
        }

        /// Sends `event`.
        @inlinable
        public func send(_ event: Event) {
            if let core = _unretainedCore {
                core._withUnsafeGuaranteedRef { $0.send(event) }
            } else if valueAction == nil {
                // Called in place (`?()`), not bound to a local first: binding copies the
                // closure, a retain/release of its context per event.
                action?(event)
            } else if case let .value(value) = event {
                valueAction?(value)
            }
        }

        /// Sends a value.
        @inlinable
        public func send(value: Value) {
            if let core = _unretainedCore {
                core._withUnsafeGuaranteedRef { $0.sendValue(value) }
            } else if valueAction == nil {
                action?(.value(value))
            } else {
                valueAction?(value)
            }
        }

        /// Sends `failed(error)`, terminating the stream.
        @inlinable
        public func send(error: Error) {
            send(.failed(error))
        }

        /// Sends `completed`, terminating the stream.
        @inlinable
        public func sendCompleted() {
            send(.completed)
        }

        /// Sends `interrupted`, terminating the stream.
        @inlinable
        public func sendInterrupted() {
            send(.interrupted)
        }
    }
}
