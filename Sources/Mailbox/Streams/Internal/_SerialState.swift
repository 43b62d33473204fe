/// Mutable state of a single-input operator, touched only while the upstream signal delivers
/// an event.
///
/// A signal delivers its events serially, under its `sendLock`, so an operator that observes
/// exactly one signal needs no lock of its own for its state: the upstream lock orders every
/// access (and ThreadSanitizer sees that ordering).
@usableFromInline
final class _SerialState<State> {
    /// Accessed only from inside the serial delivery of the one signal this state belongs to.
    @usableFromInline
    var value: State

    @inlinable
    init(_ value: State) {
        self.value = value
    }
}

// Accessed only within one signal's serial delivery, ordered by that signal's `sendLock`.
extension _SerialState: @unchecked Sendable {}
