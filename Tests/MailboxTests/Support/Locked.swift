import Foundation

/// A value behind an `NSLock`, for recording what actions did from any thread.
///
/// Deliberately built on Foundation rather than on Mailbox's own `Lock`, so that a broken lock
/// in the library cannot hide itself by breaking the tests' bookkeeping too.
final class Locked<Value> {
    private let lock = NSLock()
    /// Protected by `lock`.
    private var value: Value

    init(_ value: Value) {
        self.value = value
    }

    func withLock<T>(_ body: (inout Value) throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }

    /// A copy of the value, read under the lock.
    var snapshot: Value {
        withLock { $0 }
    }
}

// `value` is only reachable through `withLock`, which holds `lock` (an NSLock).
extension Locked: @unchecked Sendable where Value: Sendable {}

extension Locked where Value == Int {
    /// Adds one and returns the new value.
    @discardableResult
    func increment() -> Int {
        withLock { value in
            value += 1
            return value
        }
    }
}

extension Locked {
    /// Appends `element` to a locked array.
    func append<Element>(_ element: Element) where Value == [Element] {
        withLock { $0.append(element) }
    }
}
