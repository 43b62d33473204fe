extension ActorRef {
    /// Runs `action` once when the actor terminates (at once if it has), with the failure
    /// that terminated it, if any. Returns the watcher, whose `cancel()` stops watching.
    @usableFromInline
    @discardableResult
    func whenTerminated(_ action: @escaping @Sendable (_ failure: (any Error)?) -> Void) -> _TerminationWatcher {
        let watcher = _TerminationWatcher(watching: target, system: target.system, onTerminated: action)
        watcher.start()
        return watcher
    }
}

extension ActorRef {
    /// Runs `action` once when the actor terminates (at once if it has); disposing the result
    /// stops watching. `package`: for the other targets' bridges (the NATS subscription's
    /// delivery into an actor).
    @discardableResult
    package func whenTerminatedDisposable(_ action: @escaping @Sendable (_ failure: (any Error)?) -> Void) -> any Disposable {
        let watcher = whenTerminated(action)
        return AnyDisposable { watcher.cancel() }
    }
}
