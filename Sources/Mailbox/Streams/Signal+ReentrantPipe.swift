// ReactiveSwift's unserialized and re-entrant signal constructors: `unserialized(_:)`,
// `unserializedPipe(disposable:)`, `reentrantUnserialized(_:)`,
// `reentrantUnserializedPipe(disposable:)`, and `SignalProducer.unserialized(_:)`.
//
// In ReactiveSwift an "unserialized" input observer skips the send lock, on the promise that
// its callers never send concurrently. Mailbox keeps its input observers serialized (the
// uncontended lock costs a few nanoseconds) so these constructors are never less safe than
// `Signal.init(_:)`. Every Mailbox signal already queues a value sent from inside one of its own
// observers (contract 16); the re-entrant variants also queue a send from another thread while a
// delivery is under way, instead of making the sender wait.

extension Signal {
    /// Creates a signal and runs `generator` with its input observer and lifetime, like
    /// `init(_:)`.
    ///
    /// ReactiveSwift's unserialized input observer relies on its callers for mutual exclusion;
    /// Mailbox's is serialized anyway, so this is `Signal(generator)`: sends from several
    /// threads are safe, and a value sent recursively from one of the signal's own observers is
    /// queued and delivered once the current one has reached every observer (contract 16).
    public static func unserialized(_ generator: (_ observer: Observer, _ lifetime: Lifetime) -> Void) -> Signal {
        Signal(generator)
    }

    /// Creates a signal and its input observer, like `pipe(disposable:)` (which it is: see
    /// `unserialized(_:)`).
    ///
    /// - Parameter disposable: Disposed when the signal terminates.
    public static func unserializedPipe(disposable: (any Disposable)? = nil) -> (output: Signal, input: Observer) {
        pipe(disposable: disposable)
    }

    /// Creates a signal whose input observer accepts *re-entrant* sends: an event sent while
    /// the signal is delivering another one — from inside one of its observers, or from
    /// another thread — is queued, and delivered, first in first out, by the thread already
    /// delivering, once the current event has reached every observer.
    ///
    /// ```
    /// let (signal, input) = Signal<Int, Never>.reentrantUnserializedPipe()
    /// signal.observeValues { if $0 < 3 { input.send(value: $0 + 1) } }   // a feedback loop
    /// input.send(value: 1)   // observers see 1, 2, 3, in that order
    /// ```
    ///
    /// Thread-safety: the input observer may be used from any thread (ReactiveSwift's is not
    /// thread-safe). Delivery stays serial; a sender whose event is queued returns at once,
    /// before its event is delivered.
    ///
    /// What keeps what alive: as for `init(_:)`. The input observer handed to `generator`
    /// forwards to the signal's own input, so releasing it (and every copy of it) before a
    /// terminal event interrupts the signal.
    public static func reentrantUnserialized(_ generator: (_ observer: Observer, _ lifetime: Lifetime) -> Void) -> Signal {
        Signal { input, lifetime in
            // A one-byte placeholder state, not `()`: in unspecialised code ThreadSanitizer puts
            // the `inout` access to a zero-sized stored property at the object's first bytes,
            // where other threads read the class's metadata pointer outside the lock, and reports
            // a race that is not one.
            let emitter = _Emitter(false, downstream: input)
            generator(Observer { event in emitter.update { _, outbox in outbox.append(event) } }, lifetime)
        }
    }

    /// Creates a signal and an input observer that accepts re-entrant sends; see
    /// `reentrantUnserialized(_:)`.
    ///
    /// - Parameter disposable: Disposed when the signal terminates.
    /// - Returns: `output`, the signal, and `input`, its observer. Releasing `input` before
    ///   sending a terminal event interrupts `output`.
    public static func reentrantUnserializedPipe(disposable: (any Disposable)? = nil) -> (output: Signal, input: Observer) {
        var input: Observer?
        let signal = reentrantUnserialized { observer, lifetime in
            input = observer
            lifetime += disposable
        }
        return (signal, input!)
    }
}

extension SignalProducer {
    /// A producer whose every start runs `startHandler`, like `init(_:)` (Mailbox's input
    /// observers are always serialized; see `Signal.unserialized(_:)`).
    public static func unserialized(
        _ startHandler: @escaping @Sendable (_ observer: Signal<Value, Error>.Observer, _ lifetime: Lifetime) -> Void
    ) -> SignalProducer<Value, Error> {
        SignalProducer(startHandler)
    }
}
