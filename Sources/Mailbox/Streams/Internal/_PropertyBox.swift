/// The storage of a property: the current value and the signal core its changes are delivered
/// through. Shared by a `MutableProperty`, a composed `Property` (fed by a run of its sources)
/// and an actor's published state, and by their producers.
///
/// Locking, the shape of ReactiveSwift's recursive property lock:
/// - the core's `sendLock` is the property's lock: held across "store the value, deliver it",
///   so observers see values in the order they were stored, and across `withValue` and the
///   start of a producer (which then sees the value and every later change exactly once). It
///   is *re-entrant per thread*: a set, `modify`, `withValue` or producer start on the thread
///   that holds it (from an observer, or inside `withValue`) goes ahead instead of waiting for
///   itself, and a set made there is delivered depth-first (`deliverNestedWhileSending`): the
///   observers see the nested value before the outer delivery goes on.
/// - `valueLock` protects `storage`. It is held only for a read, a store, and `modify`'s
///   action; reading `value` from an observer never waits for a delivery. Reading or setting
///   the property inside its own `modify` action (where `storage` is being modified) is a
///   precondition failure, as it is an exclusivity violation in ReactiveSwift.
///
/// Sets from other threads wait for the holder, as before: delivery stays serial.
///
/// What keeps what alive: the box does not create or hold a `Signal` object for its core: the
/// owner makes one (`makeSignal()`) and holds it, and producers capture it, so that once no
/// `Signal` object is left and nobody observes, the core is torn down (a composed property's run
/// is then interrupted, see `Property`). When the owner goes away it calls `complete()`.
@usableFromInline
final class _PropertyBox<Value> {
    @usableFromInline
    let core: _SignalCore<Value, Never>

    @usableFromInline
    let valueLock = Lock(detectingRecursion: ())

    /// Protected by `valueLock`.
    @usableFromInline @exclusivity(unchecked)
    var storage: Value

    @inlinable
    init(_ value: Value) {
        storage = value
        core = _SignalCore()
    }

    /// The one `Signal` object of this box's core, for its owner to hold.
    @inlinable
    func makeSignal() -> Signal<Value, Never> {
        Signal(core: core)
    }

    /// The current value.
    ///
    /// - Precondition: not called from inside this property's `modify` action.
    @inlinable
    var value: Value {
        guard valueLock.lockUnlessHeldByCurrentThread() else { Self.accessedInsideModify() }
        defer { valueLock.unlock() }
        return storage
    }

    /// Stores and sends a new value; see the type's documentation for re-entrance.
    @inlinable
    func set(_ newValue: Value) {
        guard core.sendLock.lockUnlessHeldByCurrentThread() else {
            setNested(newValue)
            return
        }
        valueLock.lock()
        storage = newValue
        valueLock.unlock()
        core.deliverAndUnlock(newValue)
    }

    /// `set` on the thread that holds `sendLock` (from an observer, or `withValue`).
    @usableFromInline
    @inline(never)
    func setNested(_ newValue: Value) {
        guard valueLock.lockUnlessHeldByCurrentThread() else { Self.accessedInsideModify() }
        storage = newValue
        valueLock.unlock()
        core.deliverNestedWhileSending(newValue)
    }

    /// Modifies the value in place, then sends it. If `action` throws, the value keeps what
    /// `action` did to it before throwing, and nothing is sent.
    @inlinable
    func modify<R, E: Swift.Error>(_ action: (inout Value) throws(E) -> R) throws(E) -> R {
        let isOutermost = core.sendLock.lockUnlessHeldByCurrentThread()
        guard valueLock.lockUnlessHeldByCurrentThread() else { Self.accessedInsideModify() }
        let result: R
        do {
            result = try action(&storage)
        } catch {
            valueLock.unlock()
            if isOutermost { core.unlockSendLock() }
            throw error
        }
        let newValue = storage
        valueLock.unlock()
        if isOutermost {
            core.deliverAndUnlock(newValue)
        } else {
            core.deliverNestedWhileSending(newValue)
        }
        return result
    }

    /// A producer that sends the current value, then every change, and completes when the
    /// property goes away. It captures `signal` (the owner's `Signal` object for this box), so
    /// that a producer kept for later keeps the core from being torn down.
    ///
    /// The run is attached before the current value is sent, all while holding `sendLock`: a set
    /// from another thread comes before (and the run sees its value as the current one) or
    /// after (and the run sees it as a change); a set made by the run's own observer while it
    /// receives the current value reaches it next.
    @inlinable
    func producer(keeping signal: Signal<Value, Never>) -> SignalProducer<Value, Never> {
        let carried = _Carried(signal)
        return SignalProducer { [self] observer, lifetime in
            let isOutermost = core.sendLock.lockUnlessHeldByCurrentThread()
            let current = value
            if core.isTerminated {
                if isOutermost { core.unlockSendLock() }
                observer.send(value: current)
                observer.sendCompleted()
                return
            }
            lifetime += core.observe(observer)
            observer.send(value: current)
            if isOutermost { core.unlockSendLock() }
            withExtendedLifetime(carried) {}
        }
    }

    /// Sends `completed` to every observer (after the delivery under way, if any).
    @usableFromInline
    func complete() {
        core.sendTerminal(.completed)
    }

    @usableFromInline
    static func accessedInsideModify() -> Never {
        preconditionFailure("A property was read or set inside its own modify action; use the action's inout argument")
    }
}

// `storage` is protected by `valueLock`, delivery by the core's locks.
extension _PropertyBox: @unchecked Sendable {}
