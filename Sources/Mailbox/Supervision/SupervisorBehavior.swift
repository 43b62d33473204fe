import Foundation

/// The `Supervisor` behavior. Runs inside its actor; the cell hands it its children's
/// failures, restart acknowledgements and terminations (`ActorCell.managingBehavior`).
final class SupervisorBehavior: AbstractBehavior<SupervisorMessage> {
    private struct Entry {
        let spec: ChildSpec
        var target: AnyTarget?
        /// Incremented each time the child is (re)started: an event from before that is stale.
        var epoch = 0
    }

    private enum Step {
        case stop(String)
        case start(String)
        /// A live child restarted alone: both halves in one exchange.
        case restartInPlace(String)
    }

    private enum Pending {
        case failed(AnyTarget, error: any Error, epoch: Int)
        case terminated(id: String, failure: (any Error)?, epoch: Int)
    }

    private let strategy: Supervisor.RestartScope
    private let intensity: Int
    private let period: Duration
    private var entries: [Entry]
    /// Intensity/period, shared with one-for-one children (`delegatedWindow`).
    private let restartWindow: SharedRestartWindow
    /// One-for-one children restart themselves against `restartWindow` while it admits (no
    /// ordering to keep, nobody else to restart): only a refused restart comes here.
    private var delegatedWindow: SharedRestartWindow? { strategy == .oneForOne ? restartWindow : nil }
    /// The restart in progress: steps left, and the child whose acknowledgement is awaited.
    private var steps: [Step] = []
    private var awaiting: AnyTarget?
    /// Failures and terminations that arrived during a restart, handled after it.
    private var queued: [Pending] = []
    /// This supervisor is itself a `Supervisor`'s child: it tells its parent it has started
    /// once its own children have started.
    private var owesStartAcknowledgement: Bool
    /// Until every child has started, questions wait here (as OTP's `start_link` returns only
    /// then, nobody sees a half-started tree).
    private var isStarting = true
    private var questionsDuringStart: [SupervisorMessage] = []

    init(context: ActorContext<SupervisorMessage>, strategy: Supervisor.RestartScope, intensity: Int, period: Duration, specs: [ChildSpec]) throws {
        self.strategy = strategy
        self.intensity = intensity
        self.period = period
        self.entries = specs.map { Entry(spec: $0) }
        self.restartWindow = SharedRestartWindow(intensity: intensity, period: period)
        self.owesStartAcknowledgement = context.isManagedBySupervisor
        super.init(context: context)
        context.registerAsManagingBehavior(self)
        // One at a time, in order: each child's `setup` runs before the next child is spawned.
        steps = specs.map { .start($0.id) }
        try runSteps()
    }

    override func receive(_ message: SupervisorMessage) throws -> Behavior<SupervisorMessage> {
        if isStarting {
            questionsDuringStart.append(message)
            return .same
        }
        answer(message)
        return .same
    }

    private func answer(_ message: SupervisorMessage) {
        switch message {
        case let .whichChildren(replyTo):
            replyTo.tell(entries.map { SupervisedChild(id: $0.spec.id, ref: $0.target.map(AnyActorRef.init), restart: $0.spec.restart) })
        case let .child(id, replyTo):
            replyTo.tell(entries.first { $0.spec.id == id }?.target.map(AnyActorRef.init))
        }
    }

    private var isRestarting: Bool { awaiting != nil || !steps.isEmpty }

    private func index(of child: AnyTarget) -> Int? {
        entries.firstIndex { $0.target === child }
    }

    private func index(id: String) -> Int? {
        entries.firstIndex { $0.spec.id == id }
    }

    // MARK: Called by the cell

    func childFailed(_ child: AnyTarget, error: any Error) throws {
        guard let index = index(of: child) else {
            child.sendSystem(.stop)
            return
        }
        if isRestarting {
            queued.append(.failed(child, error: error, epoch: entries[index].epoch))
            return
        }
        try handle(index: index, failure: error, hasTerminated: false)
    }

    func childTerminated(_ child: AnyTarget, failure: (any Error)?) throws {
        guard let index = index(of: child) else { return }
        entries[index].target = nil
        if child === awaiting {
            // It stopped instead of acknowledging: its step is done (a start step spawns it anew).
            awaiting = nil
            try runSteps()
            return
        }
        if isRestarting {
            queued.append(.terminated(id: entries[index].spec.id, failure: failure, epoch: entries[index].epoch))
            return
        }
        try handle(index: index, failure: failure, hasTerminated: true)
    }

    func childStepDone(_ child: AnyTarget) throws {
        guard child === awaiting else { return }
        awaiting = nil
        try runSteps()
    }

    // MARK: Deciding and restarting

    /// Applies the restart type and the strategy to the child at `index`, which failed
    /// (suspended, or terminated with `failure`) or terminated normally (`failure == nil`).
    private func handle(index: Int, failure: (any Error)?, hasTerminated: Bool) throws {
        let spec = entries[index].spec
        let restarts: Bool
        switch spec.restart {
        case .permanent: restarts = true
        case .transient: restarts = failure != nil
        case .temporary: restarts = false
        }
        guard restarts else {
            if !hasTerminated { entries[index].target?.sendSystem(.stop) }
            if spec.restart == .temporary {
                entries.remove(at: index)
            } else {
                entries[index].target = nil
            }
            return
        }
        try countRestart(failure: failure ?? ChildStoppedError(id: spec.id))
        let set: ArraySlice<Entry>
        switch strategy {
        case .oneForOne: set = entries[index...index]
        case .allForOne: set = entries[...]
        case .restForOne: set = entries[index...]
        }
        if set.count == 1, !hasTerminated, entries[index].target != nil {
            // Nothing to order: one exchange instead of two.
            steps = [.restartInPlace(spec.id)]
        } else {
            steps = set.reversed().map { .stop($0.spec.id) }
                + set.filter { $0.spec.restart != .temporary || $0.spec.id == spec.id }.map { .start($0.spec.id) }
        }
        try runSteps()
    }

    /// Counts a restart in the sliding window; throws when it is one too many.
    private func countRestart(failure: any Error) throws {
        if restartWindow.admit(at: context.scheduler.currentDate) == nil {
            steps = []
            throw SupervisorIntensityError(supervisor: context.address, intensity: intensity, period: period, lastFailure: failure)
        }
    }

    /// Runs the restart's steps until one waits for a child's acknowledgement; then the queued
    /// events, once the restart is over.
    private func runSteps() throws {
        while awaiting == nil, !steps.isEmpty {
            let step = steps.removeFirst()
            switch step {
            case let .stop(id):
                guard let index = index(id: id), let target = entries[index].target else { continue }
                if entries[index].spec.restart == .temporary {
                    // Never restarted: stopped for good.
                    target.sendSystem(.stop)
                    entries.remove(at: index)
                } else {
                    awaiting = target
                    target.sendSystem(.restartStop)
                }
            case let .restartInPlace(id):
                guard let index = index(id: id), let target = entries[index].target else { continue }
                entries[index].epoch += 1
                target.sendSystem(.restartNow)
                awaiting = target
            case let .start(id):
                guard let index = index(id: id) else { continue }
                entries[index].epoch += 1
                if let target = entries[index].target {
                    target.sendSystem(.restartStart)
                    awaiting = target
                } else {
                    let target = try entries[index].spec.start(context, entries[index].spec.restart == .temporary ? nil : delegatedWindow)
                    entries[index].target = target
                    awaiting = target
                }
            }
        }
        if isStarting, !isRestarting {
            isStarting = false
            if owesStartAcknowledgement {
                owesStartAcknowledgement = false
                context.acknowledgeRestartStepToSupervisor()
            }
            for question in questionsDuringStart { answer(question) }
            questionsDuringStart = []
        }
        while !isRestarting, !queued.isEmpty {
            switch queued.removeFirst() {
            case let .failed(child, error, epoch):
                guard let index = index(of: child), entries[index].epoch == epoch else { continue }
                try handle(index: index, failure: error, hasTerminated: false)
            case let .terminated(id, failure, epoch):
                // Stale if the restart spawned it again meanwhile.
                guard let index = index(id: id), entries[index].target == nil, entries[index].epoch == epoch else { continue }
                try handle(index: index, failure: failure, hasTerminated: true)
            }
        }
    }
}
