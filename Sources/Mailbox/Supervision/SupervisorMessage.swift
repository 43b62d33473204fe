/// Messages a `Supervisor` understands: questions about its children, and OTP's dynamic
/// child operations (`start_child`, `terminate_child`, `restart_child`, `delete_child`,
/// `which_children`, `count_children`).
///
/// Each carries a reply ref, so each can be asked (`supervisor.ask(timeout:) { .countChildren(replyTo: $0) }`,
/// or the `ActorRef<SupervisorMessage>` helpers such as `startChild(_:timeout:)`). Like an OTP
/// supervisor, a `Supervisor` does one thing at a time: a message that arrives while it starts
/// its children, restarts some, or carries out an earlier request waits until that is done,
/// then is answered in order.
public enum SupervisorMessage: Sendable {
    /// Replies with the children in start order (OTP `which_children`).
    case whichChildren(replyTo: ActorRef<[SupervisedChild]>)
    /// Replies with the live child with this id, if any.
    case child(id: String, replyTo: ActorRef<AnyActorRef?>)
    /// Adds `spec` after the other children and starts its child (OTP `start_child`); replies
    /// once the child's `setup` has run, with its ref. The child is then supervised like the
    /// children the supervisor started with, and like them it is lost when the supervisor
    /// itself restarts (which starts the children of its original specs only).
    ///
    /// Errors: `.alreadyStarted` (with the running child), `.alreadyPresent`, `.startFailed`
    /// (the spec is discarded, and the failure does not count as a restart).
    case startChild(ChildSpec, replyTo: ActorRef<Result<AnyActorRef, SupervisorError>>)
    /// Stops the child with this id and keeps its spec, not running, until `restartChild` or
    /// `deleteChild` (OTP `terminate_child`); a temporary child's spec is deleted. Replies once
    /// the child has terminated; the termination is not a reason to restart it. Stopping a
    /// child that is not running succeeds.
    ///
    /// Errors: `.notFound`.
    case terminateChild(id: String, replyTo: ActorRef<Result<Void, SupervisorError>>)
    /// Starts the child of a kept spec that is not running (OTP `restart_child`): a new actor
    /// under the same name; replies once its `setup` has run, with its ref.
    ///
    /// Errors: `.running`, `.notFound`, `.startFailed` (the spec stays, not running).
    case restartChild(id: String, replyTo: ActorRef<Result<AnyActorRef, SupervisorError>>)
    /// Removes the spec of a child that is not running (OTP `delete_child`).
    ///
    /// Errors: `.running`, `.notFound`.
    case deleteChild(id: String, replyTo: ActorRef<Result<Void, SupervisorError>>)
    /// Replies with the number of specs, running children, supervisors and workers (OTP
    /// `count_children`).
    case countChildren(replyTo: ActorRef<SupervisorChildCount>)
}
