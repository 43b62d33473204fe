extension Lifetime {
    /// A signal that completes when the lifetime ends (observers attached after that receive
    /// `interrupted`, as for any terminated signal). Use it with `take(until:)` or
    /// `take(during:)`.
    ///
    /// Each access creates a new signal, observing the lifetime until it ends or the signal
    /// is released unobserved.
    public var ended: Signal<Never, Never> {
        Signal { observer, signalLifetime in
            signalLifetime += observeEnded { observer.sendCompleted() }
        }
    }
}
