/// A value captured by a `@Sendable` closure that only moves it across threads in the way the
/// stream contracts already allow for `Value` (stored, then handed to an observer).
@usableFromInline
struct _Carried<T> {
    @usableFromInline
    let value: T

    @inlinable
    init(_ value: T) {
        self.value = value
    }
}

// Immutable after `init`; the value is handed on exactly as a signal hands on its values.
extension _Carried: @unchecked Sendable {}
