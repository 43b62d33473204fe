import Synchronization

/// Fans events out to observers, cheaply when nobody observes.
///
/// Thread-safety: observe, dispose and publish from any thread. Observers are called on the
/// publishing thread, outside the lock, in the order they subscribed.
final class EventBus<Event: Sendable>: Sendable {
    private let observers = LockedValueBox(Bag<@Sendable (Event) -> Void>())
    /// Mirrors the number of observers so `publish` skips the lock when there are none.
    private let count = Atomic<Int>(0)

    func observe(_ observer: @escaping @Sendable (Event) -> Void) -> any Disposable {
        let token = observers.withLockedValue { bag in
            let token = bag.insert(observer)
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
        for observer in snapshot { observer(event) }
    }

    func removeAll() {
        observers.withLockedValue { bag in
            _ = bag.removeAll()
            count.store(0, ordering: .releasing)
        }
    }
}
