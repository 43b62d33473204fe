import Foundation

/// Failure handling: deciding, restarting (with limits and back-off), escalating, and a
/// `Supervisor`'s side of its children's restarts. Everything here runs inside the actor's
/// mailbox run.
extension ActorCell {
    /// Makes this new actor a `Supervisor`'s child, whose supervisor decides its failures.
    @usableFromInline
    func makeManaged(delegatedWindow: SharedRestartWindow?) {
        supervision = SupervisionState(isManaged: true, delegatedWindow: delegatedWindow)
    }

    /// The supervision state, created on first use.
    @usableFromInline
    func supervisionState() -> SupervisionState<Message> {
        if let supervision { return supervision }
        let state = SupervisionState<Message>(isManaged: false)
        supervision = state
        return state
    }

    /// The behavior, if it is a `Supervisor`: the cell hands it its children's failures,
    /// restart acknowledgements and terminations. (A class cast: cheaper than asking for a
    /// protocol conformance.)
    var managingBehavior: SupervisorBehavior? {
        supervision?.managing
    }

    /// Whether the behavior is a `Supervisor` (see `managingBehavior`).
    @usableFromInline
    var isManaging: Bool { supervision?.managing != nil }

    private var isTopLevel: Bool { parent === system.guardian }

    /// At start: a `Supervisor`'s child and a top-level actor under a guardian strategy that
    /// may restart keep their spawn behavior, which their restarts rebuild.
    @usableFromInline
    func prepareGuardianSupervision() {
        if let supervision, supervision.isManaged {
            supervision.spawnBehavior = behavior
            return
        }
        guard isTopLevel else { return }
        let strategy = system.configuration.guardianStrategy
        if case .stop = strategy.kind, strategy.decider == nil { return }
        let state = supervisionState()
        state.spawnBehavior = behavior
        state.guardianRule = .init(rule: SupervisionRule(behavior: behavior, strategy: strategy, matches: { _ in true }))
    }

    /// Builds the state from `initial` (running its `setup`), as at start and after a restart.
    ///
    /// A `Supervisor`'s child then tells its supervisor that it has started (so that the
    /// supervisor starts the next child only now, as OTP does) — before reporting a failure of
    /// that `setup`. A child that is itself a `Supervisor` tells once its own children have
    /// started.
    @inlinable
    func installInitial(_ initial: Behavior<Message>, acknowledging: Bool = true) {
        do {
            install(try canonicalize(initial, registersRules: true))
        } catch {
            if acknowledging { acknowledgeStartIfManaged(setupFailure: error) }
            fail(error, message: nil, inSetup: true)
            return
        }
        if acknowledging, supervision != nil, !isManaging {
            acknowledgeStartIfManaged()
        }
        if case let .stopped(postStop) = behavior.kind {
            postStopAction = postStop
            beginStopping(failure: nil)
        }
    }

    @usableFromInline
    func acknowledgeStartIfManaged(setupFailure: (any Error)? = nil) {
        if let supervision, supervision.isManaged {
            parent?.sendSystem(.restartStepDone(self, setupFailure: setupFailure))
        }
    }

    // MARK: Deciding, then performing

    /// A handler (or `setup`) threw: `SupervisionDecider` decides, `perform` acts.
    @usableFromInline
    func fail(_ error: any Error, message: (any Sendable)?, inSetup: Bool = false) {
        context.noteFailure()
        guard case .running = lifecycle else {
            system.log("actor \(address.path) failed while not running: \(error)")
            return
        }
        system.publish(.failed(address, error: error))
        let system = self.system
        perform(decider.decide(
            error, inSetup: inSetup, state: supervision, now: dateScheduler.currentDate,
            randomUnit: { system.nextRandomUnit() }),
            for: error, message: message)
    }

    /// A `Supervisor` exceeded its restart intensity (see
    /// `SupervisionDecider.decideIntensityExceeded`): it shuts down, and may shut the system
    /// down. The report is published as for a failure: `failed` with the error, then the
    /// decision.
    func shutDownAfterExceedingIntensity(_ error: SupervisorIntensityError) {
        guard case .running = lifecycle else { return }
        system.publish(.failed(address, error: error))
        perform(decider.decideIntensityExceeded(error), for: error, message: nil)
    }

    private var decider: SupervisionDecider {
        SupervisionDecider(guardianStrategy: isTopLevel ? system.configuration.guardianStrategy : nil)
    }

    /// Performs a supervision decision about `error` (thrown handling `message`, if any): the
    /// one place a failure is acted on. Publishes the decision, then acts.
    private func perform(_ decision: SupervisionDecider.Decision, for error: any Error, message: (any Sendable)?) {
        let report = decision.report
        if report.logging {
            // An autoclosure: built only if the system has a log handler.
            system.log(decisionLine(error, decision.directive, report.restarts, decision.backoffDelay))
        }
        system.publish(.supervised(SupervisionDecision(
            actor: address, error: error, message: message, directive: decision.directive, decider: report.decider,
            backoff: decision.backoffDelay, restartCount: report.restarts.count)))
        switch decision {
        case .resume:
            return
        case let .stop(_, exit, limitExceeded):
            if let limitExceeded { logLimitExceeded(limitExceeded) }
            beginStopping(failure: error, exit: exit)
        case let .escalate(_, limitExceeded):
            if let limitExceeded { logLimitExceeded(limitExceeded) }
            beginStopping(failure: error, exit: .escalated)
        case let .restart(source, stopsChildren, backoff, _):
            beginRestart(source, stopsChildren: stopsChildren, backoff: backoff)
        case .askSupervisor:
            // Messages wait in the mailbox until the supervisor's order.
            perform(supervisionState().restart.suspendedForSupervisor())
            parent?.sendSystem(.childFailed(self, error: error))
        case let .shutDownSystem(_, exit):
            beginStopping(failure: error, exit: exit)
            if exit == .shutdown {
                system.log("guardian: \(address.path) shut down after exceeding its intensity; shutting the system down")
            } else {
                system.log("guardian: \(address.path) escalated \(error); shutting the system down")
            }
            system.beginShutdown()
        }
    }

    private func logLimitExceeded(_ limit: SupervisionDecider.LimitExceeded) {
        system.log("actor \(address.path): restart limit of \(limit.strategy) exceeded")
    }

    /// "actor /user/w failed: Boom; restart 2 of 3 in 10.0 seconds after 0.1 seconds".
    private func decisionLine(
        _ error: any Error, _ directive: SupervisorDirective, _ restarts: SupervisionDecider.RestartCount, _ backoff: Duration?
    ) -> String {
        var line = "actor \(address.path) failed: \(error); \(directive)"
        if directive == .restart {
            line += " \(restarts.text)"
        } else if restarts.count > 0 {
            line += " (restarts: \(restarts.text))"
        }
        if let backoff { line += " after \(backoff)" }
        return line
    }

    // MARK: Restarting

    /// A restart decided by this actor's rules (or the guardian strategy, or a one-for-one
    /// supervisor's shared window): the stop half now, then, once the children told to stop are
    /// gone and the back-off (if any) has elapsed, the rebuild.
    private func beginRestart(_ source: RestartSource, stopsChildren: Bool, backoff: SupervisionDecider.Backoff?) {
        let state = supervisionState()
        var timedBackoff: RestartStateMachine.Backoff?
        if let backoff {
            let generation = state.restart.nextBackoffGeneration()
            let timer = dateScheduler.schedule(after: backoff.delay) { [self] in
                sendSystem(.backoffElapsed(generation: generation))
            }
            timedBackoff = .init(generation: generation, timer: timer, stashCapacity: backoff.stashCapacity)
        }
        perform(state.restart.restartDecided(
            source: source, stopsChildren: stopsChildren, hasChildren: hasChildren, backoff: timedBackoff))
    }

    /// Performs what the restart state machine decided.
    func perform(_ action: RestartStateMachine.Action) {
        switch action {
        case .none:
            return
        case .suspend:
            lifecycle = .restarting
            context.cancelAllTimers()
            keepStashForNewState()
        case let .stopHalf(stopsChildren, then):
            lifecycle = .restarting
            runStopHalf(stopsChildren: stopsChildren)
            perform(then)
        case let .replaceBackoff(timer, then):
            timer?.dispose()
            perform(then)
        case let .proceed(step):
            perform(step)
        case let .cancelBackoff(timer):
            timer.dispose()
        }
    }

    private func perform(_ step: RestartStateMachine.Step) {
        switch step {
        case .wait:
            return
        case .acknowledgeStop:
            parent?.sendSystem(.restartStepDone(self, setupFailure: nil))
        case let .complete(source):
            completeRestart(source)
        }
    }

    /// The stop half of a restart: pre-restart, timers, the stash kept for the new state, and
    /// (when `stopsChildren`) the children told to stop, newest first.
    private func runStopHalf(stopsChildren: Bool) {
        notifyPreRestart()
        context.cancelAllTimers()
        keepStashForNewState()
        if stopsChildren {
            for child in childrenInStartOrder.reversed() {
                // The new state does not hear of the old state's children.
                contextStorage?.watching[ObjectIdentifier(child)] = nil
                child.sendSystem(.stop)
            }
        }
    }

    /// The failed incarnation's stash goes before everything kept meanwhile.
    private func keepStashForNewState() {
        guard context.stashSize > 0 else { return }
        supervisionState().prepend(Array(context.takeStash()))
    }

    /// Delivers `preRestart` to the failed state; what its handler returns is ignored (the
    /// state is being replaced), and so is what it throws (logged).
    private func notifyPreRestart() {
        do {
            switch behavior.kind {
            case let .receive(_, lifecycle?), let .receiveMessage(_, lifecycle?):
                _ = try lifecycle.handle(context, .preRestart)
            case let .object(object):
                _ = try object.receiveLifecycle(.preRestart)
            default:
                break
            }
        } catch {
            system.log("actor \(address.path) threw in pre-restart: \(error)")
        }
    }

    /// Rebuilds the state from what `source` restarts, then hands it what arrived meanwhile.
    private func completeRestart(_ source: RestartSource) {
        let state = supervisionState()
        // A `Supervisor` being rebuilt registers its new self.
        state.managing = nil
        lifecycle = .running
        let now = dateScheduler.currentDate
        let initial: Behavior<Message>
        switch source {
        case let .rule(index):
            if index + 1 < state.rules.count { state.rules.removeSubrange((index + 1)...) }
            state.rules[index].lastRestart = now
            state.baseRuleCount = index + 1
            initial = state.rules[index].rule.behavior
        case .guardian:
            if !state.rules.isEmpty { state.rules.removeAll() }
            state.baseRuleCount = 0
            state.guardianRule?.lastRestart = now
            initial = state.spawnBehavior!
        case .parent, .delegated:
            if !state.rules.isEmpty { state.rules.removeAll() }
            state.baseRuleCount = 0
            initial = state.spawnBehavior!
        }
        // The failed state is gone (it had its `preRestart`): if the new `setup` throws, no
        // lifecycle event reaches the old state again.
        install(Behavior(.empty))
        // A restart the supervisor ordered is acknowledged; one the child took itself is not.
        installInitial(initial, acknowledging: source != .delegated)
        replayAfterRestart()
    }

    /// Hands the new state the system and user messages kept during the restart, oldest first.
    /// Not re-entered: a restart completed while replaying leaves the rest to the outer loop.
    private func replayAfterRestart() {
        guard let state = supervision, !state.isReplaying else { return }
        state.isReplaying = true
        defer { state.isReplaying = false }
        while case .running = lifecycle, !state.deferred.isEmpty {
            handleSystemMessage(state.deferred.removeFirst())
        }
        while case .running = lifecycle, let message = state.popFirst() {
            handle(message)
        }
    }

    /// Whether user messages are taken out of the mailbox during this restart: during a
    /// back-off they are stashed (up to a bound); otherwise the run parks and they wait in the
    /// mailbox.
    @usableFromInline
    var isBufferingDuringRestart: Bool {
        supervision?.restart.stashCapacity != nil
    }

    /// A user message taken out of the mailbox during a back-off: kept for the new state (up to
    /// the back-off's stash capacity).
    func bufferDuringRestart(_ message: Message) {
        let state = supervisionState()
        if let capacity = state.restart.stashCapacity, state.bufferedCount >= capacity {
            system.publishUndelivered(message, to: address, reason: .backoffStashFull)
        } else {
            state.append(message)
        }
    }

    /// The back-off timer of generation `generation` fired (while restarting).
    func backoffElapsed(generation: UInt64) {
        guard case .restarting = lifecycle, let state = supervision else { return }
        perform(state.restart.backoffElapsed(generation: generation))
    }

    /// A child terminated while restarting.
    func childTerminatedWhileRestarting() {
        guard let state = supervision else { return }
        perform(state.restart.childTerminated(allChildrenGone: !hasChildren))
    }

    /// Stopping instead of completing a restart in progress: its back-off timer is cancelled.
    @usableFromInline
    func abandonRestart() {
        guard let state = supervision else { return }
        perform(state.restart.stopped())
    }

    /// At termination: what a restart had kept becomes dead letters.
    func deadLetterRestartBuffer() {
        guard let state = supervision else { return }
        state.managing = nil
        for message in state.removeAllBuffered() {
            system.publishUndelivered(message, to: address, reason: .recipientTerminated)
        }
        state.deferred = []
    }

    // MARK: Children

    /// A child terminated while this actor runs: a `Supervisor` hears of every termination
    /// (an escalated failure is a failed termination to it); any other actor gets an
    /// escalated failure as `childFailed` (see `childEscalated`).
    func childTerminatedWhileRunning(_ child: AnyTarget, failure: (any Error)?, exit: ChildExit) {
        do {
            if let managing = managingBehavior {
                try managing.childTerminated(child, failure: failure, isShutdown: exit == .shutdown)
            } else if exit == .escalated, let failure {
                try childEscalated(child, failure: failure)
            }
        } catch {
            fail(error, message: nil)
        }
    }

    // MARK: A Supervisor's child

    /// The supervisor restarts this actor: stop half (pre-restart, timers, children), then
    /// acknowledge once the children are gone — or, `thenStart`, go on with the start half and
    /// acknowledge only that. A stopping or terminated actor does not answer: its supervisor
    /// hears of its termination instead.
    func restartStopFromParent(thenStart: Bool = false) {
        switch lifecycle {
        case .running, .restarting:
            let state = supervisionState()
            perform(state.restart.stopOrdered(thenStart: thenStart, hasChildren: hasChildren))
        case .new, .stopping, .terminated:
            return
        }
    }

    /// The supervisor restarts this actor: start half (rebuild from the spawn behavior).
    func restartStartFromParent() {
        guard case .restarting = lifecycle, let state = supervision else { return }
        perform(state.restart.startOrdered())
    }

    // MARK: A Supervisor's side

    func managedChildFailed(_ child: AnyTarget, error: any Error) {
        guard case .running = lifecycle, contextStorage?.children.contains(child) == true else { return }
        guard let managing = managingBehavior else {
            child.sendSystem(.stop)
            return
        }
        do {
            try managing.childFailed(child, error: error)
        } catch {
            fail(error, message: nil)
        }
    }

    func managedChildStepDone(_ child: AnyTarget, setupFailure: (any Error)?) {
        guard case .running = lifecycle, let managing = managingBehavior else { return }
        do {
            try managing.childStepDone(child, setupFailure: setupFailure)
        } catch {
            fail(error, message: nil)
        }
    }
}
