/// The storage shared by a property and its producers: the current value and the signal of
/// changes.
///
/// Setting holds the signal's `sendLock` across "store the value, deliver it", so observers
/// see values in the order they were stored and a producer started concurrently sees either
/// the old value followed by the new one, or just the new one. `value` itself is behind
/// `valueLock`, which is never held while user code runs, so observers may read the
/// property.
///
/// Producers and signals hold the box, not the property object: a property's producers do
/// not keep it alive. When the owner goes away it calls `complete()`.
@usableFromInline
final class _PropertyBox<Value> {
    @usableFromInline
    let core: _SignalCore<Value, Never>

    /// The signal of changes; kept here so the core is never torn down while the box lives.
    @usableFromInline
    let signal: Signal<Value, Never>

    @usableFromInline
    let valueLock = Lock()

    /// Protected by `valueLock`.
    @usableFromInline @exclusivity(unchecked)
    var storage: Value

    @inlinable
    init(_ value: Value) {
        storage = value
        core = _SignalCore()
        signal = Signal(core: core)
    }

    @inlinable
    var value: Value {
        valueLock.lock()
        defer { valueLock.unlock() }
        return storage
    }

    /// Stores and sends a new value.
    @inlinable
    func set(_ newValue: Value) {
        core.sendValue(updating: { () -> (result: Void, value: Value) in
            valueLock.lock()
            storage = newValue
            valueLock.unlock()
            return ((), newValue)
        })
    }

    /// Modifies the value in place, then sends it. If `action` throws, the value keeps what
    /// `action` did to it before throwing, and nothing is sent.
    @inlinable
    func modify<R, E: Swift.Error>(_ action: (inout Value) throws(E) -> R) throws(E) -> R {
        try core.sendValue { () throws(E) -> (result: R, value: Value) in
            valueLock.lock()
            defer { valueLock.unlock() }
            let result = try action(&storage)
            return (result, storage)
        }
    }

    /// A producer that sends the current value, then every change, and completes when the
    /// property goes away.
    @inlinable
    var producer: SignalProducer<Value, Never> {
        SignalProducer { [self] observer, lifetime in
            core.sendLock.lock()
            observer.send(value: value)
            if core.isTerminated {
                core.sendLock.unlock()
                observer.sendCompleted()
                return
            }
            lifetime += core.observe(observer)
            core.sendLock.unlock()
        }
    }

    /// Sends `completed` to every observer.
    @usableFromInline
    func complete() {
        core.sendTerminal(.completed)
    }
}

// `storage` is protected by `valueLock`, delivery by the core's locks.
extension _PropertyBox: @unchecked Sendable {}
