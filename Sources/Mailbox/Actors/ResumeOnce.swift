import Synchronization

/// Resumes a continuation the first time `resume` is called; later calls do nothing.
final class ResumeOnce<Value: Sendable>: Sendable {
    private let resumed = Atomic<Bool>(false)
    private let continuation: CheckedContinuation<Value, Never>

    init(_ continuation: CheckedContinuation<Value, Never>) {
        self.continuation = continuation
    }

    func resume(returning value: Value) {
        if !resumed.exchange(true, ordering: .acquiringAndReleasing) {
            continuation.resume(returning: value)
        }
    }
}
