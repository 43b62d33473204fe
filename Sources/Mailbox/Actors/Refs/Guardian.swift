import Dispatch
import Foundation
import Synchronization

/// The parent of top-level actors (`/user`). Not an actor: its children map is behind a lock,
/// because top-level spawns come from any thread.
@usableFromInline
// `state` is protected by its own lock; `address` is immutable.
final class Guardian: AnyTarget, @unchecked Sendable {
    private struct State {
        var children = ChildRegistry()
        var emptyWaiters: [@Sendable () -> Void] = []
        /// Set by `closeForShutdown()`; no top-level actor is adopted after it.
        var isClosed = false
    }

    private let state = LockedValueBox(State())

    deinit {
        state.withLockedValue { $0.children.removeAll() }
    }

    /// Registers a new top-level actor, unless the system is shutting down: the check and the
    /// insertion are one step under the lock that `closeForShutdown()` takes, so every actor is
    /// either refused or among those told to stop.
    func adopt(_ child: AnyTarget, name: String, systemName: String) throws {
        try state.withLockedValue { state in
            guard !state.isClosed else { throw ActorSystemError.shuttingDown(systemName) }
            guard !state.children.isNameTaken(name) else {
                throw ActorSystemError.duplicateName(name, parent: address.path)
            }
            state.children.insert(child, named: name)
        }
    }

    /// Refuses every later `adopt` and returns the live top-level actors, oldest first.
    func closeForShutdown() -> [AnyTarget] {
        state.withLockedValue { state in
            state.isClosed = true
            return state.children.inStartOrder
        }
    }

    var childTargets: [AnyTarget] {
        state.withLockedValue { $0.children.inStartOrder }
    }

    var childRefs: [AnyActorRef] {
        childTargets.map(AnyActorRef.init)
    }

    override func sendSystem(_ message: SystemMessage) {
        guard case let .childTerminated(child, _, _) = message else { return }
        let waiters: [@Sendable () -> Void] = state.withLockedValue { state in
            state.children.remove(child)
            guard state.children.isEmpty else { return [] }
            defer { state.emptyWaiters = [] }
            return state.emptyWaiters
        }
        for waiter in waiters { waiter() }
    }

    /// Waits until every top-level actor has terminated, or `timeout` (wall clock) passes.
    /// Returns whether they all terminated.
    func waitUntilEmpty(timeout: Duration) async -> Bool {
        await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let once = ResumeOnce(continuation)
            let isEmpty = state.withLockedValue { state -> Bool in
                if state.children.isEmpty { return true }
                state.emptyWaiters.append { once.resume(returning: true) }
                return false
            }
            if isEmpty {
                once.resume(returning: true)
                return
            }
            DispatchQueue.global().asyncAfter(deadline: .now() + timeout.timeInterval) {
                once.resume(returning: false)
            }
        }
    }
}
