/// Receives `terminated` from the one actor it watches and runs an action once: how the
/// bridges (outputs, actor-backed properties, `ref <~ source`, `Store`) learn that an actor
/// terminated without touching the actor cell.
///
/// `start(watching:)` sends `.watch(self)` to the actor; the actor answers with
/// `.terminated(_, failure:)` when it terminates, or at once if it already has. `cancel(…)`
/// sends `.unwatch(self)` and drops the action. The action runs at most once, on the thread
/// that delivers `terminated` (the actor's own mailbox run), outside any lock.
///
/// What keeps what alive: the watched actor retains the watcher (in its watchers) until it
/// terminates or is told `unwatch`; the watcher retains the action until it runs or is
/// cancelled.
@usableFromInline
// `action` is protected by its `LockedValueBox`; the watched target is immutable after init.
final class _TerminationWatcher: AnyTarget, @unchecked Sendable {
    @usableFromInline
    typealias Action = @Sendable (_ failure: (any Error)?) -> Void

    private let action: LockedValueBox<Action?>
    private let watched: AnyTarget

    /// A watcher of `target` (of `system`); call `start()` to begin watching.
    @usableFromInline
    init(watching target: AnyTarget, system: ActorSystem, onTerminated action: @escaping Action) {
        self.action = LockedValueBox(action)
        self.watched = target.watchedTarget
        super.init(address: ActorAddress(system: system.name, path: "/temp/$watch", incarnation: system.nextIncarnation()))
    }

    /// A watcher of the actor behind `target` (of `target`'s system).
    @usableFromInline
    convenience init<Message>(watching target: ActorRefTarget<Message>, onTerminated action: @escaping Action) {
        self.init(watching: target, system: target.system, onTerminated: action)
    }

    /// Starts watching: the action runs when the actor terminates (at once if it has).
    @usableFromInline
    func start() {
        watched.sendSystem(.watch(self))
    }

    /// Stops watching; the action will not run. Idempotent, from any thread.
    @usableFromInline
    func cancel() {
        let wasPending = action.withLockedValue { action -> Bool in
            defer { action = nil }
            return action != nil
        }
        if wasPending { watched.sendSystem(.unwatch(self)) }
    }

    override func sendSystem(_ message: SystemMessage) {
        guard case let .terminated(_, failure) = message else { return }
        let pending = action.withLockedValue { action -> Action? in
            defer { action = nil }
            return action
        }
        pending?(failure)
    }
}
