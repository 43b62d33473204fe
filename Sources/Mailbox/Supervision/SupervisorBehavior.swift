import Foundation

/// The `Supervisor` behavior. Runs inside its actor; the cell hands it its children's
/// failures, restart acknowledgements and terminations (`ActorCell.managingBehavior`).
///
/// Like an OTP supervisor it does one thing at a time: starting its children, a restart, or a
/// dynamic-child request (`startChild`, `terminateChild`, `restartChild`) runs as a list of
/// *steps*, each waiting for one child's acknowledgement or termination. Meanwhile children's
/// failures and terminations are queued, and so are `SupervisorMessage`s; once the steps are
/// done, the queued events are handled first, then the messages, in order.
final class SupervisorBehavior: AbstractBehavior<SupervisorMessage> {
    private struct Entry {
        let spec: ChildSpec
        var target: AnyTarget?
        /// Incremented each time the child is (re)started or stopped for good: an event from
        /// before that is stale.
        var epoch = 0
    }

    private enum Step {
        /// A restart's stop half (`restartStop`), acknowledged.
        case stop(String)
        /// Start the child: `restartStart` for a live one, spawn it otherwise; acknowledged.
        case start(String)
        /// A live child restarted alone: both halves in one exchange.
        case restartInPlace(String)
        /// Stop the child for good (`terminateChild`, a failed dynamic start); waits for its
        /// termination.
        case terminate(String)
    }

    private enum Pending {
        case failed(AnyTarget, error: any Error, epoch: Int)
        case terminated(id: String, failure: (any Error)?, isShutdown: Bool, epoch: Int)
    }

    /// A request answered once its steps are done.
    private enum Request {
        /// `startChild` (`isNew`: its entry goes if the start fails) or `restartChild`.
        case start(id: String, replyTo: ActorRef<Result<AnyActorRef, SupervisorError>>, isNew: Bool)
        case terminate(id: String, replyTo: ActorRef<Result<Void, SupervisorError>>)
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
    /// The work in progress: steps left, the next one *last* (a stack: taking a step is
    /// O(1); taking the first of an array was O(n), quadratic over a whole-tree restart), and
    /// the child whose acknowledgement (or, for `terminate`, termination) is awaited.
    private var steps: [Step] = []
    private var awaiting: (target: AnyTarget, step: Step)?
    /// The request the steps carry out, and why its child did not start, if it did not.
    private var request: Request?
    private var requestFailure: (any Error)?
    /// Failures and terminations that arrived during the steps, handled after them.
    private var queued: [Pending] = []
    /// Messages that arrived during the steps (or the start), answered after them: as OTP's
    /// `start_link` returns only once every child has started, nobody sees a half-started tree,
    /// nor a half-done restart.
    private var waitingMessages: [SupervisorMessage] = []
    /// This supervisor is itself a `Supervisor`'s child: it tells its parent it has started
    /// once its own children have started.
    private var owesStartAcknowledgement: Bool
    private var isStarting = true
    /// Set once the intensity is exceeded: the supervisor is shutting down, and does nothing more.
    private var isShutDown = false
    /// Set while `handleWaiting` runs: a request it answers that completes at once does not
    /// start another (nested) round.
    private var isHandlingWaiting = false

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
        steps = specs.reversed().map { .start($0.id) }
        try runSteps()
    }

    override func receive(_ message: SupervisorMessage) throws -> Behavior<SupervisorMessage> {
        if isBusy || !waitingMessages.isEmpty {
            waitingMessages.append(message)
        } else {
            try answer(message)
        }
        return .same
    }

    private var isBusy: Bool { awaiting != nil || !steps.isEmpty }

    private func index(of child: AnyTarget) -> Int? {
        entries.firstIndex { $0.target === child }
    }

    private func index(id: String) -> Int? {
        entries.firstIndex { $0.spec.id == id }
    }

    // MARK: Messages

    private func answer(_ message: SupervisorMessage) throws {
        switch message {
        case let .whichChildren(replyTo):
            replyTo.tell(entries.map {
                SupervisedChild(id: $0.spec.id, ref: $0.target.map(AnyActorRef.init), restart: $0.spec.restart, type: $0.spec.type)
            })
        case let .child(id, replyTo):
            replyTo.tell(entries.first { $0.spec.id == id }?.target.map(AnyActorRef.init))
        case let .countChildren(replyTo):
            let supervisors = entries.count(where: { $0.spec.type == .supervisor })
            replyTo.tell(SupervisorChildCount(
                specs: entries.count, active: entries.count(where: { $0.target != nil }),
                supervisors: supervisors, workers: entries.count - supervisors))
        case let .startChild(spec, replyTo):
            if let index = index(id: spec.id) {
                if let target = entries[index].target {
                    replyTo.tell(.failure(error(.alreadyStarted, spec.id, child: AnyActorRef(target))))
                } else {
                    replyTo.tell(.failure(error(.alreadyPresent, spec.id)))
                }
                return
            }
            entries.append(Entry(spec: spec))
            request = .start(id: spec.id, replyTo: replyTo, isNew: true)
            steps = [.start(spec.id)]
            try runSteps()
        case let .restartChild(id, replyTo):
            guard stoppedChildIndex(id, answeringOtherwise: replyTo) != nil else { return }
            request = .start(id: id, replyTo: replyTo, isNew: false)
            steps = [.start(id)]
            try runSteps()
        case let .terminateChild(id, replyTo):
            guard let index = index(id: id) else {
                replyTo.tell(.failure(error(.notFound, id)))
                return
            }
            request = .terminate(id: id, replyTo: replyTo)
            steps = [.terminate(entries[index].spec.id)]
            try runSteps()
        case let .deleteChild(id, replyTo):
            guard let index = stoppedChildIndex(id, answeringOtherwise: replyTo) else { return }
            entries.remove(at: index)
            replyTo.tell(.success(()))
        }
    }

    /// The index of child `id` if it has a spec here and is not running; otherwise answers
    /// `replyTo` with why not (`notFound`, `running`) and returns `nil`.
    private func stoppedChildIndex<Success>(_ id: String, answeringOtherwise replyTo: ActorRef<Result<Success, SupervisorError>>) -> Int? {
        guard let index = index(id: id) else {
            replyTo.tell(.failure(error(.notFound, id)))
            return nil
        }
        guard entries[index].target == nil else {
            replyTo.tell(.failure(error(.running, id)))
            return nil
        }
        return index
    }

    private func error(_ code: SupervisorError.Code, _ id: String, child: AnyActorRef? = nil, underlying: (any Error)? = nil) -> SupervisorError {
        SupervisorError(code, supervisor: context.address, id: id, child: child, underlying: underlying)
    }

    /// Answers the request whose steps are done.
    private func completeRequest() {
        guard let request else { return }
        self.request = nil
        let failure = requestFailure
        requestFailure = nil
        switch request {
        case let .start(id, replyTo, isNew):
            let index = index(id: id)
            if let index, failure == nil, let target = entries[index].target {
                replyTo.tell(.success(AnyActorRef(target)))
                return
            }
            if isNew, let index, entries[index].target == nil {
                // OTP discards the spec of a child that did not start.
                entries.remove(at: index)
            }
            replyTo.tell(.failure(error(.startFailed, id, underlying: failure ?? ChildStoppedError(id: id))))
        case let .terminate(_, replyTo):
            replyTo.tell(.success(()))
        }
    }

    // MARK: Called by the cell

    func childFailed(_ child: AnyTarget, error: any Error) throws {
        guard !isShutDown else { return }
        guard let index = index(of: child) else {
            child.sendSystem(.stop)
            return
        }
        if isBusy {
            queued.append(.failed(child, error: error, epoch: entries[index].epoch))
            return
        }
        try handle(index: index, failure: error, hasTerminated: false, isShutdown: false)
    }

    /// A child terminated; `isShutdown` for a child `Supervisor` that exceeded its intensity.
    func childTerminated(_ child: AnyTarget, failure: (any Error)?, isShutdown: Bool) throws {
        guard !isShutDown, let index = index(of: child) else { return }
        entries[index].target = nil
        if let awaiting, child === awaiting.target {
            // Its step is done: it stopped instead of acknowledging (a start step spawns it
            // anew), or it was stopped for good.
            self.awaiting = nil
            if case .terminate = awaiting.step, entries[index].spec.restart == .temporary {
                entries.remove(at: index)
            }
            try runSteps()
            return
        }
        if isBusy {
            queued.append(.terminated(id: entries[index].spec.id, failure: failure, isShutdown: isShutdown, epoch: entries[index].epoch))
            return
        }
        try handle(index: index, failure: failure, hasTerminated: true, isShutdown: isShutdown)
    }

    /// A child acknowledged a `restartStop` or `restartStart` (or its first start); with
    /// `setupFailure` when its `setup` threw.
    func childStepDone(_ child: AnyTarget, setupFailure: (any Error)?) throws {
        guard !isShutDown, let awaiting, child === awaiting.target else { return }
        self.awaiting = nil
        if let setupFailure, case let .start(id, _, _)? = request, case .start(id) = awaiting.step {
            // A requested start failed: stop the child for good, then answer the error. (Its
            // failure, on its way here, is then stale.)
            requestFailure = setupFailure
            steps.append(.terminate(id))   // next
        }
        try runSteps()
    }

    // MARK: Deciding and restarting

    /// Applies the restart type and the strategy to the child at `index`, which failed
    /// (suspended, or terminated with `failure`), terminated normally (`failure == nil`), or
    /// — a child supervisor — shut down after exceeding its intensity (`isShutdown`).
    private func handle(index: Int, failure: (any Error)?, hasTerminated: Bool, isShutdown: Bool) throws {
        let spec = entries[index].spec
        let restarts: Bool
        switch spec.restart {
        case .permanent: restarts = true
        // OTP: `shutdown` is a normal exit for a transient child.
        case .transient: restarts = failure != nil && !isShutdown
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
        guard countRestart(failure: failure ?? ChildStoppedError(id: spec.id)) else { return }
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
            let inOrder: [Step] = set.reversed().map { .stop($0.spec.id) }
                + set.filter { $0.spec.restart != .temporary || $0.spec.id == spec.id }.map { .start($0.spec.id) }
            steps = inOrder.reversed()
        }
        try runSteps()
    }

    /// Counts a restart in the sliding window. One too many shuts the supervisor down (OTP):
    /// its children stop, newest first, and it terminates with a shutdown exit. Returns whether
    /// the restart may go ahead.
    private func countRestart(failure: any Error) -> Bool {
        if restartWindow.admit(at: context.scheduler.currentDate) != nil { return true }
        isShutDown = true
        steps = []
        queued = []
        for message in waitingMessages {
            context.system.publishUndelivered(message, to: context.address, reason: .recipientTerminated)
        }
        waitingMessages = []
        context.shutDownAfterExceedingIntensity(
            SupervisorIntensityError(supervisor: context.address, intensity: intensity, period: period, lastFailure: failure))
        return false
    }

    /// Runs the steps until one waits for a child; then, once they are all done, answers the
    /// request they carried out, and handles the queued events and messages.
    private func runSteps() throws {
        while !isShutDown, awaiting == nil, !steps.isEmpty {
            let step = steps.removeLast()
            switch step {
            case let .stop(id):
                guard let index = index(id: id), let target = entries[index].target else { continue }
                if entries[index].spec.restart == .temporary {
                    // Never restarted: stopped for good.
                    target.sendSystem(.stop)
                    entries.remove(at: index)
                } else {
                    awaiting = (target, step)
                    target.sendSystem(.restartStop)
                }
            case let .restartInPlace(id):
                guard let index = index(id: id), let target = entries[index].target else { continue }
                entries[index].epoch += 1
                target.sendSystem(.restartNow)
                awaiting = (target, step)
            case let .start(id):
                guard let index = index(id: id) else { continue }
                entries[index].epoch += 1
                if let target = entries[index].target {
                    target.sendSystem(.restartStart)
                    awaiting = (target, step)
                } else {
                    let spec = entries[index].spec
                    let target: AnyTarget
                    do {
                        target = try spec.start(context, spec.restart == .temporary ? nil : delegatedWindow)
                    } catch where isRequested(id) {
                        // A requested start that cannot spawn is the requester's error, not
                        // this supervisor's failure.
                        requestFailure = error
                        continue
                    }
                    entries[index].target = target
                    awaiting = (target, step)
                }
            case let .terminate(id):
                guard let index = index(id: id) else { continue }
                entries[index].epoch += 1
                guard let target = entries[index].target else {
                    if entries[index].spec.restart == .temporary { entries.remove(at: index) }
                    continue
                }
                awaiting = (target, step)
                target.sendSystem(.stop)
            }
        }
        guard !isShutDown, !isBusy else { return }
        completeRequest()
        if isStarting {
            isStarting = false
            if owesStartAcknowledgement {
                owesStartAcknowledgement = false
                context.acknowledgeRestartStepToSupervisor()
            }
        }
        try handleWaiting()
    }

    private func isRequested(_ id: String) -> Bool {
        if case .start(id, _, _)? = request { return true }
        return false
    }

    /// While nothing is in progress: the queued failures and terminations first, then the
    /// waiting messages, in order (each may start new steps, which the rest then waits for).
    private func handleWaiting() throws {
        guard !isHandlingWaiting else { return }
        isHandlingWaiting = true
        defer { isHandlingWaiting = false }
        while !isShutDown, !isBusy {
            if !queued.isEmpty {
                switch queued.removeFirst() {
                case let .failed(child, error, epoch):
                    guard let index = index(of: child), entries[index].epoch == epoch else { continue }
                    try handle(index: index, failure: error, hasTerminated: false, isShutdown: false)
                case let .terminated(id, failure, isShutdown, epoch):
                    // Stale if the steps spawned it again, or stopped it for good, meanwhile.
                    guard let index = index(id: id), entries[index].target == nil, entries[index].epoch == epoch else { continue }
                    try handle(index: index, failure: failure, hasTerminated: true, isShutdown: isShutdown)
                }
            } else if !waitingMessages.isEmpty {
                try answer(waitingMessages.removeFirst())
            } else {
                return
            }
        }
    }
}
