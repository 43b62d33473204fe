/// Asking a `Supervisor` about its children from `async` code: OTP's `supervisor:start_child/2`
/// and friends, each an `ask` of the matching `SupervisorMessage` (from inside an actor, tell or
/// `context.ask` the message instead).
///
/// Every call has a time-out, on the supervisor's scheduler clock; it covers the whole request,
/// including the wait while the supervisor finishes what it was doing (a start, a restart, an
/// earlier request) and, for a start, the child's `setup`.
///
/// Thread-safety: callable from any task.
extension ActorRef where Message == SupervisorMessage {
    /// Adds `spec` and starts its child (OTP `start_child`); returns the child once its
    /// `setup` has run.
    ///
    /// - Throws: `SupervisorError` (`.alreadyStarted`, `.alreadyPresent`, `.startFailed`);
    ///   `AskError` if the supervisor does not answer in time or has terminated.
    public func startChild(_ spec: ChildSpec, timeout: Duration) async throws -> AnyActorRef {
        try await ask(timeout: timeout) { .startChild(spec, replyTo: $0) }.get()
    }

    /// Stops the child with this id for good, keeping its spec (OTP `terminate_child`);
    /// returns once it has terminated.
    ///
    /// - Throws: `SupervisorError` (`.notFound`); `AskError`.
    public func terminateChild(id: String, timeout: Duration) async throws {
        try await ask(timeout: timeout) { .terminateChild(id: id, replyTo: $0) }.get()
    }

    /// Starts the child of a kept spec that is not running (OTP `restart_child`).
    ///
    /// - Throws: `SupervisorError` (`.running`, `.notFound`, `.startFailed`); `AskError`.
    public func restartChild(id: String, timeout: Duration) async throws -> AnyActorRef {
        try await ask(timeout: timeout) { .restartChild(id: id, replyTo: $0) }.get()
    }

    /// Removes the spec of a child that is not running (OTP `delete_child`).
    ///
    /// - Throws: `SupervisorError` (`.running`, `.notFound`); `AskError`.
    public func deleteChild(id: String, timeout: Duration) async throws {
        try await ask(timeout: timeout) { .deleteChild(id: id, replyTo: $0) }.get()
    }

    /// The children in start order (OTP `which_children`).
    ///
    /// - Throws: `AskError`.
    public func whichChildren(timeout: Duration) async throws -> [SupervisedChild] {
        try await ask(timeout: timeout) { .whichChildren(replyTo: $0) }
    }

    /// The number of specs, running children, supervisors and workers (OTP `count_children`).
    ///
    /// - Throws: `AskError`.
    public func countChildren(timeout: Duration) async throws -> SupervisorChildCount {
        try await ask(timeout: timeout) { .countChildren(replyTo: $0) }
    }
}
