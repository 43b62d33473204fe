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
