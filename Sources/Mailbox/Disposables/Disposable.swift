import Synchronization

/// Represents something that can be "disposed": usually a resource to release, or work to
/// cancel (an observation, a scheduled action, a started producer).
///
/// Thread-safety: every conforming type in Mailbox may be disposed from any thread, any number
/// of times; only the first `dispose()` has an effect.
public protocol Disposable: AnyObject, Sendable {
    /// Whether this disposable has been disposed already.
    var isDisposed: Bool { get }

    /// Disposes the resource. Idempotent: calls after the first do nothing.
    func dispose()
}
