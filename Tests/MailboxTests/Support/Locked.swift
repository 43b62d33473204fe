@testable import Mailbox

/// The tests' name for the package's one value box, for recording what actions did from any
/// thread; the members below are the tests' shorthands.
typealias Locked<Value> = LockedValueBox<Value>

extension LockedValueBox {
    /// `withLockedValue`, as the tests spell it.
    func withLock<T, E: Error>(_ body: (inout Value) throws(E) -> T) throws(E) -> T {
        try withLockedValue(body)
    }

    /// A copy of the value, read under the lock.
    var snapshot: Value {
        withLockedValue { $0 }
    }
}

extension LockedValueBox where Value == Int {
    /// Adds one and returns the new value.
    @discardableResult
    func increment() -> Int {
        withLockedValue { value in
            value += 1
            return value
        }
    }
}

extension LockedValueBox {
    /// Appends `element` to a locked array.
    func append<Element>(_ element: Element) where Value == [Element] {
        withLockedValue { $0.append(element) }
    }
}
