import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The shared state of one `Signal`: its observers, its status and its generator's disposable.
///
/// Two locks, as in ReactiveSwift:
/// - `sendLock` serialises delivery: it is held while one event is delivered to every observer.
///   A value sent while it is held from another thread waits. A value sent recursively — from
///   an observer, on the thread that holds it — is queued in `queuedValues` and delivered, in
///   order, once the current event has reached every observer (ReactiveSwift deadlocks there).
///   The recursion is told apart from contention by `lockUnlessHeldByCurrentThread()`, which
///   costs the uncontended path nothing.
/// - `stateLock` protects `status`, `observers`, `teardown` and `isSignalReleased`; it is
///   never held while user code runs.
///
/// A property's signal (`_PropertyBox`) delivers a recursive value depth-first instead
/// (`deliverNestedWhileSending`), as ReactiveSwift's properties do.
///
/// Terminal events never wait for `sendLock`: they record themselves in `status` and whoever
/// holds (or next acquires) `sendLock` delivers them after the current value has reached every
/// observer. That makes a terminal event sent from inside an observer (a "recursive" terminal
/// event) legal, and deferred.
///
/// Values are delivered to `snapshot`, a copy of the observers owned by `sendLock`; observing or
/// detaching marks it stale through `flags`, so a steady stream of values takes one lock and
/// one atomic load per event.
@usableFromInline
final class _SignalCore<Value, Error: Swift.Error>: _SignalCoreBase {
    @usableFromInline
    typealias Observer = Signal<Value, Error>.Observer

    /// Non-generic (the pending terminal event is kept type-erased, see `_SignalStatus`), so
    /// the core's unspecialised deinit destroys it without instantiating generic metadata.
    @usableFromInline
    typealias Status = _SignalStatus


    /// Protected by `stateLock`.
    @usableFromInline @exclusivity(unchecked)
    var status: Status = .alive

    /// Protected by `stateLock`. In insertion order; shared copy-on-write with `snapshot`.
    @usableFromInline @exclusivity(unchecked)
    var observers = _ObserverList<Value, Error>()

    /// Run when the signal terminates (or is torn down unobserved): the generator's
    /// disposable, or the lifetime of a producer's run / a generator signal. Protected by
    /// `stateLock`.
    @usableFromInline @exclusivity(unchecked)
    var teardown = _CoreTeardown.none

    /// Whether the `Signal` object is gone, so no new observer can arrive. Protected by
    /// `stateLock`.
    @usableFromInline @exclusivity(unchecked)
    var isSignalReleased = false

    /// The observers values are delivered to: a copy of `observers.entries` (sharing its
    /// storage until either changes). Protected by `sendLock`. Never mutated, only replaced
    /// (`setSnapshot`), so its element buffer stays where `snapshotElements` points.
    @usableFromInline @exclusivity(unchecked)
    var snapshot: ContiguousArray<_ObserverEntry<Value, Error>> = []

    /// `snapshot`'s elements, read without retaining the array on every event. Protected by
    /// `sendLock`; valid while `snapshot` holds the buffer.
    @usableFromInline @exclusivity(unchecked)
    var snapshotElements = UnsafeBufferPointer<_ObserverEntry<Value, Error>>(start: nil, count: 0)

    /// The observer values are delivered to when `observers` holds just one, without an array
    /// (`_ObserverList.single`); retained here. Protected by `sendLock`.
    @usableFromInline @exclusivity(unchecked)
    var snapshotSingle: Observer?

    /// `snapshotSingle`, unretained, for delivery. Protected by `sendLock`.
    @usableFromInline @exclusivity(unchecked)
    var snapshotSingleUnretained: Unmanaged<Observer>?

    /// Values sent recursively (from an observer, on the delivering thread), waiting for the
    /// current event to reach every observer. Protected by `sendLock`: only its holder, the
    /// thread that sends them, touches it.
    @usableFromInline @exclusivity(unchecked)
    var queuedValues: ContiguousArray<Value> = []

    /// `!queuedValues.isEmpty`, one load on the hot path. Protected by `sendLock`.
    @usableFromInline @exclusivity(unchecked)
    var hasQueuedValues = false

    @inlinable
    override init() {}

    @inlinable
    init(observer: Observer) {
        super.init()
        observers = _ObserverList(first: observer)
        setSnapshot(observers)
    }

    // MARK: Sending

    @inlinable
    func send(_ event: Event<Value, Error>) {
        if case let .value(value) = event {
            sendValue(value)
        } else {
            sendTerminal(event)
        }
    }

    @inlinable
    func sendValue(_ value: Value) {
        guard sendLock.lockUnlessHeldByCurrentThread() else {
            // This thread is delivering an event of this signal: a recursive send.
            queueRecursiveValue(value)
            return
        }
        deliverAndUnlock(value)
    }

    /// Requires `sendLock`, which it releases: delivers `value` to every observer, then the
    /// values observers sent recursively meanwhile, and after unlocking commits a terminal event
    /// sent meanwhile. A stale snapshot or a pending terminal event (`flags` set) is handled out
    /// of line, by `refreshOrTerminateWhileSending()`.
    ///
    /// Always inlined, so that the common case — snapshot current, nothing pending, nothing
    /// queued — is one flags load, the delivery loop and two predictable branches inside
    /// `Observer.send(value:)` and a property's `set`, with nothing carried past the unlock
    /// (left to the optimiser, `stream-pipe` took more instructions per value; see
    /// docs/Performance.md).
    @inlinable @inline(__always)
    func deliverAndUnlock(_ value: Value) {
        if flags.load(ordering: .sequentiallyConsistent) != 0, !refreshOrTerminateWhileSending() { return }
        deliverToSnapshotWhileSending(value)
        // Observers may have sent more values (queued) or a terminal event (pending).
        if hasQueuedValues { deliverQueuedValuesWhileSending() }
        sendLock.unlock()
        if flags.load(ordering: .sequentiallyConsistent) & Self.terminatingBit != 0 {
            commitPendingTermination()
        }
    }

    /// Requires `sendLock`, and `flags` set: `deliverAndUnlock`'s rare path. If a terminal event
    /// is pending, delivers it (instead of the value being sent, which is dropped, as are
    /// recursive values sent after it), releases `sendLock`, runs the teardown and returns
    /// `false`. Otherwise refreshes the snapshot if stale and returns `true`, still holding
    /// `sendLock`, for the value to be delivered.
    @usableFromInline
    @inline(never)
    func refreshOrTerminateWhileSending() -> Bool {
        if flags.load(ordering: .sequentiallyConsistent) & Self.terminatingBit != 0 {
            let teardown = commitTerminationWhileSending()
            sendLock.unlock()
            teardown.run()
            return false
        }
        refreshSnapshot()
        return true
    }

    /// A terminal event was recorded while this thread held `sendLock` (now released): delivers
    /// it, unless another delivery has started meanwhile (which then does). Out of line: rare.
    @usableFromInline
    @inline(never)
    func commitPendingTermination() {
        tryToCommitTermination()
    }

    /// Requires `sendLock`, held further up this thread's stack: queues a value sent from inside
    /// a delivery, for the holder to deliver once the current event has reached every observer.
    /// A value sent after a terminal event is ignored (contract 1).
    @usableFromInline
    @inline(never)
    func queueRecursiveValue(_ value: Value) {
        if flags.load(ordering: .sequentiallyConsistent) & (Self.terminatingBit | Self.terminatedBit) != 0 { return }
        queuedValues.append(value)
        hasQueuedValues = true
    }

    /// Requires `sendLock`. Delivers the values queued by recursive sends, first in first out
    /// (values queued meanwhile included), before any terminal event sent after them.
    @usableFromInline
    @inline(never)
    func deliverQueuedValuesWhileSending() {
        while hasQueuedValues {
            let batch = queuedValues
            queuedValues = []
            hasQueuedValues = false
            for value in batch {
                // A terminal event pending now was sent after these values (one sent before
                // them would have made `queueRecursiveValue` drop them): they go first.
                let current = flags.load(ordering: .sequentiallyConsistent)
                if current & Self.terminatedBit != 0 {
                    // Torn down meanwhile (released unobserved): nobody to deliver to.
                    queuedValues = []
                    hasQueuedValues = false
                    return
                }
                if current & Self.staleBit != 0 { refreshSnapshot() }
                deliverToSnapshotWhileSending(value)
            }
        }
    }

    /// Requires `sendLock`, and `snapshot` up to date. Delivers `value` to the observers in
    /// `snapshot`. (Always inlined: the common case of `deliverAndUnlock` keeps the loop in
    /// line.)
    @inlinable @inline(__always)
    func deliverToSnapshotWhileSending(_ value: Value) {
        let event = Event<Value, Error>.value(value)
        // `snapshot` retains its buffer and every observer, and only this thread (holding
        // `sendLock`) can replace it, so delivering through the buffer's address and
        // unretained references is safe and saves a retain/release of the buffer per event
        // and of each observer per observer per event.
        // One observer held inline (`snapshotSingle`, and `snapshotElements` is empty) or the
        // elements in order; one call site, so `send` is inlined once.
        let entries = snapshotElements
        var next = snapshotSingleUnretained
        var index = 0
        if next == nil, !entries.isEmpty {
            next = entries[0].unretained
            index = 1
        }
        while let observer = next {
            observer._withUnsafeGuaranteedRef { $0.send(event) }
            if index < entries.count {
                next = entries[index].unretained
                index += 1
            } else {
                next = nil
            }
        }
    }

    /// Requires `sendLock`, held further up this thread's stack (a property delivering, or in
    /// `withValue` or a producer's start): delivers `value` at once to the observers attached
    /// now — depth-first, as ReactiveSwift's properties do — without touching `snapshot`, which
    /// the outer delivery may be walking. Nothing is delivered after a terminal event.
    @usableFromInline
    @inline(never)
    func deliverNestedWhileSending(_ value: Value) {
        stateLock.lock()
        guard case .alive = status else {
            stateLock.unlock()
            return
        }
        let list = observers
        stateLock.unlock()
        let event = Event<Value, Error>.value(value)
        list.single?.send(event)
        for entry in list.entries {
            entry.observer.send(event)
        }
    }

    /// Releases `sendLock` taken by something other than a delivery (a property's `withValue`,
    /// a property producer's start) and delivers a terminal event sent meanwhile.
    @inlinable
    func unlockSendLock() {
        sendLock.unlock()
        if flags.load(ordering: .sequentiallyConsistent) & Self.terminatingBit != 0 {
            commitPendingTermination()
        }
    }

    /// Requires `sendLock` and `stateLock` (or exclusive ownership of the core).
    @inlinable
    func setSnapshot(_ list: _ObserverList<Value, Error>) {
        snapshot = list.entries
        snapshotElements = snapshot.withUnsafeBufferPointer { $0 }
        snapshotSingle = list.single
        snapshotSingleUnretained = list.single.map { .passUnretained($0) }
    }

    /// Requires `sendLock`.
    @inlinable
    func clearSnapshot() {
        snapshot = []
        snapshotElements = snapshot.withUnsafeBufferPointer { $0 }
        snapshotSingleUnretained = nil
        snapshotSingle = nil
    }

    /// Requires `sendLock`. A terminating signal keeps its observers until the terminal event
    /// is committed (queued values still reach them first).
    @inlinable
    func refreshSnapshot() {
        stateLock.lock()
        flags.bitwiseAnd(~Self.staleBit, ordering: .sequentiallyConsistent)
        if case .terminated = status {
            clearSnapshot()
        } else {
            setSnapshot(observers)
        }
        stateLock.unlock()
    }

    @inlinable
    func sendTerminal(_ event: Event<Value, Error>) {
        // A signal that is not alive never is again, and a terminal event sent to it does
        // nothing (the first one wins): no lock needed to find that out (e.g. interrupting a
        // run that has completed).
        if isTerminated { return }
        if pthread_mutex_trylock(sendLock.mutex) == 0 {
            // No delivery is under way and none can start while this thread holds `sendLock`:
            // deliver now (or whichever terminal event got recorded first), in one `stateLock`
            // section instead of "record, then commit".
            let teardown = commitTerminationWhileSending(orTerminateWith: event)
            sendLock.unlock()
            teardown.run()
            return
        }
        // Another delivery is under way (on this thread: a recursive terminal event): record
        // the event for whoever holds `sendLock` to deliver.
        let terminal = _SignalStatus.Terminal(event)
        stateLock.lock()
        guard case .alive = status else {
            stateLock.unlock()
            return
        }
        status = .terminating(terminal)
        flags.bitwiseOr(Self.terminatingBit, ordering: .sequentiallyConsistent)
        stateLock.unlock()
        tryToCommitTermination()
    }

    /// The input observer was released before sending a terminal event: interrupt. Kept out
    /// of line so the observer's (unspecialised) `deinit` touches no generic metadata on its
    /// common path.
    @inline(never)
    @usableFromInline
    func inputReleased() {
        sendTerminal(.interrupted)
    }

    /// Delivers a pending terminal event unless another delivery is under way (on this thread:
    /// a recursive terminal event; on another: a concurrent value), in which case that delivery
    /// commits it when it finishes.
    @inlinable
    func tryToCommitTermination() {
        guard pthread_mutex_trylock(sendLock.mutex) == 0 else { return }
        let teardown = commitTerminationWhileSending()
        sendLock.unlock()
        teardown.run()
    }

    /// Requires `sendLock`. Delivers the pending terminal event — or, if none is pending and
    /// the signal is alive, `newEvent` — releases every observer and returns the teardown for
    /// the caller to run once `sendLock` is released.
    @inlinable
    func commitTerminationWhileSending(orTerminateWith newEvent: Event<Value, Error>? = nil) -> _CoreTeardown {
        stateLock.lock()
        let event: Event<Value, Error>
        switch status {
        case let .terminating(terminal):
            event = terminal.event()
        case .alive:
            guard let newEvent else {
                stateLock.unlock()
                return .none
            }
            event = newEvent
        case .terminated:
            stateLock.unlock()
            return .none
        }
        status = .terminated
        let taken = observers.removeAll()
        let teardown = takeTeardownLocked()
        flags.store(Self.terminatedBit, ordering: .sequentiallyConsistent)
        stateLock.unlock()
        clearSnapshot()
        // At most one of the two is non-empty; either way, insertion order.
        taken.single?.send(event)
        for entry in taken.entries {
            entry.observer.send(event)
        }
        return teardown
    }

    /// Requires `stateLock`. Takes the teardown, leaving `.none`.
    @inlinable
    func takeTeardownLocked() -> _CoreTeardown {
        let teardown = self.teardown
        self.teardown = .none
        return teardown
    }

    // MARK: Observing

    @inlinable
    func observe(_ observer: Observer) -> (any Disposable)? {
        stateLock.lock()
        if case .alive = status {
            let token = observers.insert(observer)
            flags.bitwiseOr(Self.staleBit, ordering: .sequentiallyConsistent)
            stateLock.unlock()
            return _ObserverRemoval(core: self, token: token)
        }
        stateLock.unlock()
        observer.sendInterrupted()
        return nil
    }

    /// Attaches `observer` for good, to a core no other thread can reach yet (nothing has been
    /// published: no `Signal`, input or interrupter handed out), so without locking: it goes
    /// straight into the list and the snapshot.
    @inlinable
    func attachWhileUnshared(_ observer: Observer) {
        observers.insert(observer)
        setSnapshot(observers)
    }

    /// Attaches `observer` for good: no removal handle is made (the caller never detaches it,
    /// e.g. an operator observing a run it started). A terminated signal sends it
    /// `interrupted`, as `observe` does.
    @inlinable
    func attach(_ observer: Observer) {
        stateLock.lock()
        if case .alive = status {
            observers.insert(observer)
            flags.bitwiseOr(Self.staleBit, ordering: .sequentiallyConsistent)
            stateLock.unlock()
            return
        }
        stateLock.unlock()
        observer.sendInterrupted()
    }

    @inlinable
    func removeObserver(_ token: UInt64) {
        stateLock.lock()
        let removed: Observer?
        switch status {
        case .alive, .terminating:
            removed = observers.remove(using: token)
        case .terminated:
            removed = nil
        }
        flags.bitwiseOr(Self.staleBit, ordering: .sequentiallyConsistent)
        let teardown = tearDownIfUnreachableLocked()
        stateLock.unlock()
        _ = removed
        teardown.run()
    }

    /// Called when the `Signal` object deinitialises.
    @inlinable
    func signalReleased() {
        stateLock.lock()
        isSignalReleased = true
        let teardown = tearDownIfUnreachableLocked()
        stateLock.unlock()
        teardown.run()
    }

    /// Requires `stateLock`. A live signal with no observers and no `Signal` object can never
    /// deliver again: end it silently and hand back its teardown.
    @inlinable
    func tearDownIfUnreachableLocked() -> _CoreTeardown {
        guard case .alive = status, isSignalReleased, observers.isEmpty else { return .none }
        status = .terminated
        flags.bitwiseOr(Self.staleBit | Self.terminatedBit, ordering: .sequentiallyConsistent)
        return takeTeardownLocked()
    }

    /// Creates the lifetime of a producer's run (or a generator signal) and makes it the
    /// teardown, without locking: call before the core is published. The lifetime has no
    /// token; the core ends it when it terminates (also if that happens before the start
    /// handler runs, which then never does).
    @inlinable
    func makeRunLifetimeWhileUnshared() -> Lifetime {
        let lifetime = Lifetime()
        teardown = .lifetime(lifetime)
        return lifetime
    }

    /// Stores the generator's disposable, or disposes it at once if the signal has terminated.
    @inlinable
    func setDisposable(_ disposable: (any Disposable)?) {
        guard let disposable else { return }
        setTeardown(.disposable(disposable))
    }

    /// Stores what to run on termination, or runs it at once if the signal has terminated.
    /// Replaces nothing: call once, before anything else sets it.
    @inlinable
    func setTeardown(_ teardown: _CoreTeardown) {
        stateLock.lock()
        if case .terminated = status {
            stateLock.unlock()
            teardown.run()
            return
        }
        self.teardown = teardown
        stateLock.unlock()
    }

    /// Marks this producer run's core as delivering its interruption itself: disposing the
    /// run's interrupter then only ends the run's lifetime (`requestInterruption()`), and the
    /// start handler — which observes that lifetime — sends `interrupted` when it sees fit (on
    /// its scheduler, as ReactiveSwift's asynchronous operators do). Call from the start
    /// handler, before it sends anything.
    @inlinable
    func defersInterruption() {
        options.bitwiseOr(Self.defersInterruptionBit, ordering: .acquiringAndReleasing)
    }

    /// What disposing a run's interrupter does: sends `interrupted` — or, for a run that
    /// `defersInterruption()`, ends the run's lifetime at once (cancelling its work; the start
    /// handler delivers `interrupted` later) without terminating the signal. Idempotent.
    @inlinable
    func requestInterruption() {
        guard options.load(ordering: .acquiring) & Self.defersInterruptionBit != 0 else {
            sendTerminal(.interrupted)
            return
        }
        let old = options.bitwiseOr(Self.interruptionRequestedBit, ordering: .acquiringAndReleasing).oldValue
        guard old & Self.interruptionRequestedBit == 0 else { return }
        stateLock.lock()
        guard case .alive = status else {
            stateLock.unlock()
            return
        }
        let teardown = takeTeardownLocked()
        stateLock.unlock()
        teardown.run()
    }

    /// Whether the signal has terminated (or is delivering its terminal event).
    ///
    /// Lock-free: `terminatingBit`/`terminatedBit` change together with `status`, under
    /// `stateLock`, so "either bit set" is "`status` is not `.alive`".
    @inlinable
    var isTerminated: Bool {
        flags.load(ordering: .sequentiallyConsistent) & (Self.terminatingBit | Self.terminatedBit) != 0
    }
}

/// The part of a signal core that does not depend on its generic parameters, so that hot
/// non-specialised paths (an input observer's `deinit`) can read it without instantiating
/// generic metadata.
@usableFromInline
class _SignalCoreBase {
    /// `flags` bit: `snapshot` is stale.
    @usableFromInline
    static var staleBit: UInt8 { 1 }

    /// `flags` bit: a terminal event is waiting to be delivered.
    @usableFromInline
    static var terminatingBit: UInt8 { 2 }

    /// `flags` bit: the signal has terminated (or was torn down).
    @usableFromInline
    static var terminatedBit: UInt8 { 4 }

    /// `staleBit | terminatingBit | terminatedBit`; changed under `stateLock`, read under
    /// `sendLock` or after it.
    @usableFromInline
    let flags = Atomic<UInt8>(0)

    /// `options` bit: this is a producer's run whose start handler delivers the interruption
    /// itself (on a scheduler, see `requestInterruption()`).
    @usableFromInline
    static var defersInterruptionBit: UInt8 { 1 }

    /// `options` bit: the run's interrupter has been disposed (with `defersInterruptionBit`).
    @usableFromInline
    static var interruptionRequestedBit: UInt8 { 2 }

    /// `defersInterruptionBit | interruptionRequestedBit`, set once each, never cleared. Beside
    /// `flags`, in what would be padding: the core is no bigger for it.
    @usableFromInline
    let options = Atomic<UInt8>(0)

    /// `sendLock` and `stateLock`: one raw allocation, no reference count (taking a lock costs
    /// no retain of a lock object), freed by this non-generic deinit.
    @usableFromInline
    let locks = MutexPair()

    /// Held while an event is delivered; protects the core's `snapshot`.
    @inlinable
    final var sendLock: UnownedLock { locks.first }

    /// Protects the core's `status`, `observers`, `teardown`, `isSignalReleased`. Never held
    /// while user code runs.
    @inlinable
    final var stateLock: UnownedLock { locks.second }

    @inlinable
    init() {}

    deinit {
        locks.deallocate()
    }

    /// Whether the signal has certainly terminated (a cheap, lock-free check).
    @inlinable
    var hasTerminated: Bool {
        flags.load(ordering: .acquiring) & Self.terminatedBit != 0
    }

    /// Whether the run's interrupter has been disposed and the start handler is to deliver the
    /// interruption (see `_SignalCore.requestInterruption()`).
    @inlinable
    var isInterruptionRequested: Bool {
        options.load(ordering: .acquiring) & Self.interruptionRequestedBit != 0
    }
}

// Its stored properties are the `flags` atomic and the mutexes (`locks`), which are
// thread-safe by nature.
extension _SignalCoreBase: @unchecked Sendable {}

// Every mutable property is protected by `stateLock` or `sendLock`, as documented beside it.
extension _SignalCore: @unchecked Sendable {}

/// Detaches one observer from a signal; silent (the observer receives nothing more).
@usableFromInline
final class _ObserverRemoval<Value, Error: Swift.Error>: Disposable {
    @usableFromInline
    let state = Atomic<Bool>(false)

    @usableFromInline
    let core: _SignalCore<Value, Error>

    @usableFromInline
    let token: UInt64

    @inlinable
    init(core: _SignalCore<Value, Error>, token: UInt64) {
        self.core = core
        self.token = token
    }

    @inlinable
    var isDisposed: Bool { state.load(ordering: .acquiring) }

    @inlinable
    func dispose() {
        if !state.exchange(true, ordering: .acquiringAndReleasing) {
            core.removeObserver(token)
        }
    }
}

/// The status of a signal core. Not generic: a failure's error, the only generic payload a
/// pending terminal event can have, is boxed (the rare path), so destroying a status never
/// needs generic metadata — the core's deinit is not specialised, and looking up the metadata
/// of a generic status there was paid by every producer start (see docs/Performance.md).
@usableFromInline
enum _SignalStatus {
    case alive
    /// A terminal event is waiting for `sendLock`.
    case terminating(Terminal)
    case terminated

    /// A terminal event, type-erased.
    @usableFromInline
    enum Terminal {
        case completed
        case interrupted
        /// `_FailureBox<Error>`.
        case failed(AnyObject)

        /// `event`, which must be terminal.
        @inlinable
        init<Value, Error>(_ event: Event<Value, Error>) {
            switch event {
            case .completed: self = .completed
            case .interrupted: self = .interrupted
            case let .failed(error): self = .failed(_FailureBox(error))
            case .value: preconditionFailure("a value is not a terminal event")
            }
        }

        /// The event, for the core whose `Error` boxed it.
        @inlinable
        func event<Value, Error>() -> Event<Value, Error> {
            switch self {
            case .completed: return .completed
            case .interrupted: return .interrupted
            case let .failed(box): return .failed(unsafeDowncast(box, to: _FailureBox<Error>.self).error)
            }
        }
    }
}

/// A failure's error, boxed so that a pending terminal event is not generic.
@usableFromInline
final class _FailureBox<Error: Swift.Error> {
    @usableFromInline
    let error: Error

    @inlinable
    init(_ error: Error) {
        self.error = error
    }
}

/// What a signal core does when it terminates: dispose its generator's disposable, or end the
/// lifetime of its generator / producer run (which then needs no token and no disposable
/// wrapping one).
@usableFromInline
enum _CoreTeardown {
    case none
    case disposable(any Disposable)
    case lifetime(Lifetime)

    @inlinable
    func run() {
        switch self {
        case .none: break
        case let .disposable(disposable): disposable.dispose()
        case let .lifetime(lifetime): lifetime._end()
        }
    }
}

/// One observer of a signal, with the token that removes it and an unretained reference for
/// delivery.
@usableFromInline
struct _ObserverEntry<Value, Error: Swift.Error> {
    @usableFromInline
    let token: UInt64

    @usableFromInline
    let observer: Signal<Value, Error>.Observer

    @usableFromInline
    let unretained: Unmanaged<Signal<Value, Error>.Observer>

    @inlinable
    init(token: UInt64, observer: Signal<Value, Error>.Observer) {
        self.token = token
        self.observer = observer
        self.unretained = .passUnretained(observer)
    }
}

/// The observers of a signal, in insertion order, removable by token. Like `Bag`, but the
/// entries array can be shared with delivery without copying, and a list of one observer (the
/// common case: a producer's run, an operator's output) is held inline in `single`, with no
/// array. Not thread-safe: the core's `stateLock` protects it.
///
/// Invariant: `single` and `entries` are never both non-empty; a second observer moves
/// `single` into `entries`, which stays the list from then on (until it is emptied).
@usableFromInline
struct _ObserverList<Value, Error: Swift.Error> {
    /// The only observer, while `entries` is empty. (An optional class reference and a token,
    /// not an optional `_ObserverEntry`: the core's unspecialised deinit destroys this with
    /// a plain release instead of a generic value witness.)
    @usableFromInline
    var single: Signal<Value, Error>.Observer?

    /// `single`'s token.
    @usableFromInline
    var singleToken: UInt64 = 0

    @usableFromInline
    var entries: ContiguousArray<_ObserverEntry<Value, Error>> = []

    @usableFromInline
    var nextToken: UInt64 = 0

    @inlinable
    init() {}

    /// A list of one observer (token 0).
    @inlinable
    init(first observer: Signal<Value, Error>.Observer) {
        single = observer
        singleToken = 0
        nextToken = 1
    }

    @inlinable
    var isEmpty: Bool { single == nil && entries.isEmpty }

    @inlinable
    @discardableResult
    mutating func insert(_ observer: Signal<Value, Error>.Observer) -> UInt64 {
        let token = nextToken
        nextToken &+= 1
        if let first = single {
            single = nil
            entries = [_ObserverEntry(token: singleToken, observer: first), _ObserverEntry(token: token, observer: observer)]
        } else if entries.isEmpty {
            single = observer
            singleToken = token
        } else {
            entries.append(_ObserverEntry(token: token, observer: observer))
        }
        return token
    }

    /// - Complexity: O(n); O(1) for the most recent observer.
    @inlinable
    mutating func remove(using token: UInt64) -> Signal<Value, Error>.Observer? {
        if let first = single {
            guard singleToken == token else { return nil }
            single = nil
            return first
        }
        var index = entries.count - 1
        while index >= 0 {
            if entries[index].token == token { return entries.remove(at: index).observer }
            if entries[index].token < token { return nil }
            index -= 1
        }
        return nil
    }

    /// Empties the list and returns what it held (at most one of the two is non-empty).
    @inlinable
    mutating func removeAll() -> (single: Signal<Value, Error>.Observer?, entries: ContiguousArray<_ObserverEntry<Value, Error>>) {
        let taken = (single, entries)
        single = nil
        entries = []
        return taken
    }
}
