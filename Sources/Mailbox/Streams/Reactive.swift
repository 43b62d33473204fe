import Foundation

/// A type that hosts reactive extensions under `reactive` (`center.reactive.notifications(…)`),
/// so that they do not collide with the type's own members. Conform your own types to add
/// extensions to `Reactive where Base: YourType`.
public protocol ReactiveExtensionsProvider {}

extension ReactiveExtensionsProvider {
    /// A proxy for the reactive extensions of `self`.
    public var reactive: Reactive<Self> {
        Reactive(self)
    }

    /// The proxy type for static reactive extensions of `Self`.
    public static var reactive: Reactive<Self>.Type {
        Reactive<Self>.self
    }
}

/// A proxy that hosts reactive extensions of `Base`: `extension Reactive where Base: T { … }`.
public struct Reactive<Base> {
    /// The instance the extensions act on.
    public let base: Base

    fileprivate init(_ base: Base) {
        self.base = base
    }
}

extension Reactive: Sendable where Base: Sendable {}

extension NotificationCenter: ReactiveExtensionsProvider {}

extension Reactive where Base: NotificationCenter {
    /// A signal of the notifications named `name` (every notification if `nil`) posted by
    /// `object` (by anyone if `nil`), sent on the posting thread. Never terminates: the
    /// observation ends when the signal is released unobserved, or is torn down.
    public func notifications(forName name: Notification.Name?, object: AnyObject? = nil) -> Signal<Notification, Never> {
        let center = _Carried(base)
        return Signal { observer, lifetime in
            let token = _Carried(center.value.addObserver(forName: name, object: object, queue: nil) { notification in
                observer.send(value: notification)
            })
            lifetime.observeEnded { center.value.removeObserver(token.value) }
        }
    }
}
