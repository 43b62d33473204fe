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
    /// Runs `action` once when the actor terminates — at once if it already has — with the
    /// failure that terminated it (`nil` for a stop). For a ref to an actor on another node
    /// (MailboxCluster), when it terminates there (its failure's description, as
    /// `RemoteActorFailure`) or its node goes down (`ClusterNodeDownError`).
    ///
    /// A watch from outside any actor (Akka's `watchWith` for code that is not an actor): use
    /// `ActorContext.watch` inside an actor, which delivers `.terminated` in the actor's order.
    ///
    /// - Returns: a disposable that stops watching; after `dispose()` the action does not run.
    /// - Thread-safety: call from any thread. The action runs once, outside any lock, on the
    ///   thread that delivers the termination (the actor's last mailbox run, or the cluster's
    ///   receiving thread): keep it short and do not block; it may call back into the ref (or
    ///   register another `onTermination`).
    @discardableResult
    public func onTermination(_ action: @escaping @Sendable (_ failure: (any Error)?) -> Void) -> any Disposable {
        let watcher = whenTerminated(action)
        return AnyDisposable { watcher.cancel() }
    }
}
