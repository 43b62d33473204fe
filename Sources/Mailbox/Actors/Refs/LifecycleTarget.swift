/// A target that is no actor but can be watched like one: it takes no messages (they are dead
/// letters) and terminates when its owner says so, telling its watchers once. The cluster
/// layer stands one in for each local `distributed actor`, so that death watch (local
/// `context.watch`, `onTermination`, and remote watches through its export) follows the
/// distributed actor's life.
// Safe: `state` is the only mutable part, in its `LockedValueBox`.
final class _LifecycleTarget<Message: Sendable>: ActorRefTarget<Message>, @unchecked Sendable {
    private struct State {
        var terminated = false
        var failure: (any Error)?
        var watchers: [ObjectIdentifier: AnyTarget] = [:]
    }

    private let state = LockedValueBox(State())

    override func tell(_ message: Message) -> TellResult {
        system.publishUndelivered(message, to: address, reason: .recipientTerminated)
        return .dropped(.recipientTerminated)
    }

    override var hasTerminated: Bool { state.withLockedValue { $0.terminated } }

    override func sendSystem(_ message: SystemMessage) {
        switch message {
        case let .watch(watcher):
            let failure = state.withLockedValue { state -> (any Error)?? in
                guard !state.terminated else { return .some(state.failure) }
                state.watchers[ObjectIdentifier(watcher)] = watcher
                return .none
            }
            if case let .some(failure) = failure { watcher.sendSystem(.terminated(self, failure: failure)) }
        case let .unwatch(watcher):
            state.withLockedValue { _ = $0.watchers.removeValue(forKey: ObjectIdentifier(watcher)) }
        default:
            break
        }
    }

    /// Terminates the target: every watcher is told once (outside the lock); later watches
    /// are answered at once. Idempotent.
    func terminate(failure: (any Error)?) {
        let watchers = state.withLockedValue { state -> [AnyTarget] in
            guard !state.terminated else { return [] }
            state.terminated = true
            state.failure = failure
            defer { state.watchers = [:] }
            return Array(state.watchers.values)
        }
        for watcher in watchers { watcher.sendSystem(.terminated(self, failure: failure)) }
    }
}

extension ActorRef {
    /// A ref at `address` that is no actor but can be watched, and the function that
    /// terminates it (telling its watchers once). It takes no messages: they are dead letters.
    /// For the cluster layer's distributed actors.
    package static func lifecycle(at address: ActorAddress, system: ActorSystem) -> (ref: ActorRef<Message>, terminate: @Sendable ((any Error)?) -> Void) {
        let target = _LifecycleTarget<Message>(address: address, system: system)
        return (ActorRef(target), { failure in target.terminate(failure: failure) })
    }
}
