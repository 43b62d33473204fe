import Synchronization

/// Senders suspended in `send(_:)` on a full back-pressure mailbox, resumed one per freed slot.
@usableFromInline
final class RoomWaiters: Sendable {
    private struct Waiter {
        let id: UInt64
        let continuation: CheckedContinuation<Void, any Error>
        /// The message the sender waits to enqueue: a dead letter if the actor terminates first.
        let message: any Sendable
    }

    /// Thrown to a waiting sender when the actor terminated: its message has been published as
    /// a dead letter already.
    struct RecipientTerminated: Error {}

    private struct State {
        var waiters: [Waiter] = []
        var nextID: UInt64 = 0
    }

    /// Protected by its lock.
    private let state = LockedValueBox(State())
    /// Mirrors the number of waiters, so the consumer skips the lock when nobody waits.
    private let count = Atomic<Int>(0)

    /// The number of senders waiting.
    @usableFromInline
    var waitingCount: Int { count.load(ordering: .relaxed) }

    /// Suspends until resumed (a slot was freed), unless `hasRoom` is already true after
    /// registering. Throws `CancellationError` on cancellation, and `RecipientTerminated`
    /// (after publishing `message` as a dead letter) if the actor terminated meanwhile.
    func wait(for message: any Sendable, unless hasRoom: @escaping @Sendable () -> Bool) async throws {
        let id = state.withLockedValue { state -> UInt64 in
            defer { state.nextID += 1 }
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                state.withLockedValue { $0.waiters.append(Waiter(id: id, continuation: continuation, message: message)) }
                count.wrappingAdd(1, ordering: .sequentiallyConsistent)
                // Room may have been freed between the failed reservation and registering, and
                // a cancellation that came before registering found nothing to resume.
                if hasRoom() {
                    resume(id: id, with: .success(()))
                } else if Task.isCancelled {
                    resume(id: id, with: .failure(CancellationError()))
                }
            }
        } onCancel: {
            resume(id: id, with: .failure(CancellationError()))
        }
    }

    private func resume(id: UInt64, with result: Result<Void, any Error>) {
        let waiter: Waiter? = state.withLockedValue { state in
            guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
            return state.waiters.remove(at: index)
        }
        if let waiter {
            count.wrappingSubtract(1, ordering: .relaxed)
            waiter.continuation.resume(with: result)
        }
    }

    @usableFromInline
    func resumeOne() {
        guard count.load(ordering: .sequentiallyConsistent) > 0 else { return }
        let waiter: Waiter? = state.withLockedValue { state in
            state.waiters.isEmpty ? nil : state.waiters.removeFirst()
        }
        if let waiter {
            count.wrappingSubtract(1, ordering: .relaxed)
            waiter.continuation.resume()
        }
    }

    /// The actor terminated: every waiting sender's message becomes a dead letter (published
    /// here, before this returns, so that a shutdown report counts it) and the sender throws.
    /// A sender registering later finds the actor terminated through its `hasRoom` check.
    func recipientTerminated(deadLetter: (any Sendable) -> Void) {
        let waiters = state.withLockedValue { state in
            defer { state.waiters = [] }
            return state.waiters
        }
        count.wrappingSubtract(waiters.count, ordering: .relaxed)
        for waiter in waiters {
            deadLetter(waiter.message)
            waiter.continuation.resume(throwing: RecipientTerminated())
        }
    }
}
