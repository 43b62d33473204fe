import Synchronization

/// Fans events out to observers, cheaply when nobody observes.
///
/// Thread-safety: observe, dispose and publish from any thread. Observers are called on the
/// publishing thread, outside the lock, in the order they subscribed.
final class EventBus<Event: Sendable>: Sendable {
    private struct Observation: Sendable {
        let onEvent: @Sendable (Event) -> Void
        let onClose: (@Sendable () -> Void)?
    }

    private let observers = LockedValueBox(Bag<Observation>())
    /// Mirrors the number of observers so `publish` skips the lock when there are none.
    private let count = Atomic<Int>(0)

    /// Calls `observer` with each event published from now on, and `onClose` (if given) when
    /// the bus closes.
    func observe(_ observer: @escaping @Sendable (Event) -> Void, onClose: (@Sendable () -> Void)? = nil) -> any Disposable {
        let token = observers.withLockedValue { bag in
            let token = bag.insert(Observation(onEvent: observer, onClose: onClose))
            count.store(bag.count, ordering: .releasing)
            return token
        }
        return AnyDisposable { [weak self] in
            guard let self else { return }
            observers.withLockedValue { bag in
                bag.remove(using: token)
                count.store(bag.count, ordering: .releasing)
            }
        }
    }

    var hasObservers: Bool { count.load(ordering: .acquiring) > 0 }

    func publish(_ event: Event) {
        guard hasObservers else { return }
        let snapshot = observers.withLockedValue { $0.elements }
        for observer in snapshot { observer.onEvent(event) }
    }

    /// Removes every observer, telling each that the bus closed.
    func close() {
        let removed = observers.withLockedValue { bag in
            defer { count.store(0, ordering: .releasing) }
            return bag.removeAll()
        }
        for observer in removed { observer.onClose?() }
    }
}
