// Runtime hooks for the `MailboxTestKit` library: `package` access, so they are visible to the
// test kit (same package) and not to users. Keep this file minimal.

extension ActorRef {
    /// Stops the actor from outside, as if its parent (or the system, for a top-level actor)
    /// had stopped it: its children stop first, then its post-stop runs, then watchers and the
    /// parent are told. Fault injection's "a child stops unexpectedly".
    ///
    /// Thread-safety: may be called from any thread. Stopping a terminated actor does nothing.
    package func stopFromOutside() {
        target.sendSystem(.stop)
    }
}

extension AnyActorRef {
    /// Stops the actor from outside; see `ActorRef.stopFromOutside()`.
    package func stopFromOutside() {
        target.sendSystem(.stop)
    }
}
