import Foundation

/// The `Supervisor` behavior: a thin shell around its `SupervisorStateMachine`, which decides;
/// this performs what it decides (sending to children, spawning them, replying, counting
/// restarts in the intensity window, shutting down) — as swift-async-algorithms'
/// `MergeStorage` performs what its `MergeStateMachine` returns.
///
/// Runs inside its actor; the cell hands it its children's failures, restart acknowledgements
/// and terminations (`ActorCell.managingBehavior`), and it receives `SupervisorMessage`s.
final class SupervisorBehavior: AbstractBehavior<SupervisorMessage> {
    private typealias Machine = SupervisorStateMachine

    private var machine: Machine
    private let intensity: Int
    private let period: Duration
    /// Intensity/period, shared with one-for-one children: they restart themselves against it
    /// while it admits (no ordering to keep, nobody else to restart), so only a refused restart
    /// comes here.
    private let restartWindow: SharedRestartWindow

    init(context: ActorContext<SupervisorMessage>, strategy: Supervisor.RestartScope, intensity: Int, period: Duration, specs: [ChildSpec]) throws {
        self.machine = Machine(supervisor: context.address, strategy: strategy, specs: specs)
        self.intensity = intensity
        self.period = period
        self.restartWindow = SharedRestartWindow(intensity: intensity, period: period)
        super.init(context: context)
        context.registerAsManagingBehavior(self)
        try perform(machine.started())
    }

    override func receive(_ message: SupervisorMessage) throws -> Behavior<SupervisorMessage> {
        try perform(machine.messageReceived(message))
        return .same
    }

    // MARK: Called by the cell

    func childFailed(_ child: AnyTarget, error: any Error) throws {
        try perform(machine.childFailed(child, error: error))
    }

    /// A child terminated; `isShutdown` for a child `Supervisor` that exceeded its intensity.
    func childTerminated(_ child: AnyTarget, failure: (any Error)?, isShutdown: Bool) throws {
        try perform(machine.childTerminated(child, failure: failure, isShutdown: isShutdown))
    }

    /// A child acknowledged a `restartStop` or `restartStart` (or its first start); with
    /// `setupFailure` when its `setup` threw.
    func childStepDone(_ child: AnyTarget, setupFailure: (any Error)?) throws {
        try perform(machine.childStepDone(child, setupFailure: setupFailure))
    }

    // MARK: Performing

    /// Performs `action`, and what the machine decides on each report, until it waits for the
    /// next event. A loop, not recursion: starting many children is one report per child.
    private func perform(_ action: Machine.Action) throws {
        var action = action
        while true {
            for effect in action.effects {
                perform(effect)
            }
            switch action.then {
            case .wait:
                return
            case let .spawn(spec, sharingWindow):
                do {
                    let child = try spec.start(context, sharingWindow ? restartWindow : nil)
                    action = machine.childSpawned(child)
                } catch {
                    action = machine.childSpawnFailed(error)
                }
            case .countRestart:
                let admitted = restartWindow.admit(at: context.scheduler.currentDate) != nil
                action = machine.restartCounted(admitted: admitted)
            case let .fail(error):
                throw error
            }
        }
    }

    private func perform(_ effect: Machine.Effect) {
        switch effect {
        case let .send(message, child):
            child.sendSystem(message)
        case let .reply(reply):
            switch reply {
            case let .children(children, replyTo): replyTo.tell(children)
            case let .child(child, replyTo): replyTo.tell(child)
            case let .count(count, replyTo): replyTo.tell(count)
            case let .started(result, replyTo): replyTo.tell(result)
            case let .done(result, replyTo): replyTo.tell(result)
            }
        case .acknowledgeStart:
            context.acknowledgeStartToSupervisor()
        case let .deadLetter(message):
            context.system.publishUndelivered(message, to: context.address, reason: .recipientTerminated)
        case let .shutDown(lastFailure):
            context.myself.target.sendSystem(.intensityExceeded(
                SupervisorIntensityError(supervisor: context.address, intensity: intensity, period: period, lastFailure: lastFailure)))
        }
    }
}
