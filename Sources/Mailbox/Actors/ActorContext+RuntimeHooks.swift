/// The named hooks through which behaviors built into the runtime (`Supervisor`) reach the
/// actor's cell, instead of touching `context.cell`. Internal; like every `ActorContext` member,
/// use them only inside the actor's mailbox run.
extension ActorContext {
    /// Whether a `Supervisor` decides this actor's failures (it is a `Supervisor`'s child).
    var isManagedBySupervisor: Bool {
        cell.supervision?.isManaged == true
    }

    /// Registers the actor's behavior as the one that manages its children's failures, restart
    /// acknowledgements and terminations (a `Supervisor`); cleared when the actor restarts or
    /// terminates.
    func registerAsManagingBehavior(_ behavior: SupervisorBehavior) {
        cell.supervisionState().managing = behavior
    }

    /// Tells this actor's own `Supervisor` that a step of the restart (or start) it ordered is
    /// done.
    func acknowledgeRestartStepToSupervisor() {
        cell.parent?.sendSystem(.restartStepDone(cell, setupFailure: nil))
    }

    /// A `Supervisor` exceeded its restart intensity: report it, stop the children (newest
    /// first) and terminate with a shutdown exit (see `ActorCell.shutDownAfterExceedingIntensity`).
    func shutDownAfterExceedingIntensity(_ error: SupervisorIntensityError) {
        cell.shutDownAfterExceedingIntensity(error)
    }
}
