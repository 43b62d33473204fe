/// The named hooks through which behaviors built into the runtime (`Supervisor`) reach the
/// actor's cell, instead of touching `context.cell`. Internal; like every `ActorContext` member,
/// use them only inside the actor's mailbox run.
///
/// Only what a message cannot do is a hook. A `Supervisor` that exceeds its intensity does not
/// reach in to shut itself down: it tells itself so (`SystemMessage.intensityExceeded`), as an
/// Akka actor stops itself with a system message to itself.
extension ActorContext {
    /// Registers the actor's behavior as the one that manages its children's failures, restart
    /// acknowledgements and terminations (a `Supervisor`); cleared when the actor restarts or
    /// terminates.
    ///
    /// A hook, not a message: the registration must be in place before the behavior's `setup`
    /// spawns its first child (whose acknowledgement the cell then routes to it), and the cell,
    /// not the behavior, receives those children's system messages.
    func registerAsManagingBehavior(_ behavior: SupervisorBehavior) {
        cell.supervisionState().managing = behavior
    }

    /// Tells this actor's own `Supervisor`, if it has one, that the start (or the restart's
    /// start) it ordered is done: the behavior's children have started.
    ///
    /// A hook, not a message: the acknowledgement is a message, but to the parent, which a
    /// behavior cannot address (a context has no parent ref), naming this actor's cell as the
    /// child; and only the cell knows whether a `Supervisor` manages it.
    func acknowledgeStartToSupervisor() {
        cell.acknowledgeStartIfManaged()
    }
}
