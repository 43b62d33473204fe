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

    // MARK: Deciding

    /// A handler (or `setup`) threw: the innermost matching rule decides; without one, a
    /// `Supervisor` child asks its supervisor, a top-level actor follows the guardian strategy,
    /// any other actor stops.
    @usableFromInline
    func fail(_ error: any Error, message: (any Sendable)?, inSetup: Bool = false) {
        context.noteFailure()
        guard case .running = lifecycle else {
            system.log("actor \(address.path) failed while not running: \(error)")
            return
        }
        system.publish(.failed(address, error: error))
        var source: RestartSource?
        var strategy: SupervisorStrategy?
        if let state = supervision {
            for index in state.rules.indices.reversed() where state.rules[index].rule.matches(error) {
                source = .rule(index)
                strategy = state.rules[index].rule.strategy
                break
            }
        }
        var directive = strategy?.directive(for: error)
        var decider: SupervisionDecision.Decider = strategy == nil ? .none : .actor
        if directive == nil || directive == .escalate {
            if let state = supervision, state.isManaged {
                let logging = strategy?.isLoggingEnabled ?? true
                if !inSetup, let window = state.delegatedWindow, let count = window.admit(at: dateScheduler.currentDate) {
                    // A one-for-one supervisor's decision, taken here: no round trip. (A failing
                    // `setup` still goes to the supervisor: a local loop would never yield.)
                    publishDecision(error, message, .restart, .supervisor, restarts: .init(count, of: window), logging: logging)
                    beginRestart(.delegated, strategy: .restart, delay: nil)
                } else {
                    suspendForSupervisor(error, message: message, logging: logging)
                }
                return
            }
            if isTopLevel {
                let guardian = system.configuration.guardianStrategy
                strategy = guardian
                source = .guardian
                decider = .guardian
                directive = guardian.directive(for: error)
                if directive == .escalate {
                    publishDecision(error, message, .escalate, decider, restarts: restartsInWindow(.guardian, guardian), logging: guardian.isLoggingEnabled)
                    beginStopping(failure: error)
                    system.log("guardian: \(address.path) escalated \(error); shutting the system down")
                    system.beginShutdown()
                    return
                }
            }
        }
        var chosen = directive ?? .stop
        if inSetup {
            // Nothing to resume without a state; an unlimited immediate restart of a failing
            // setup would fail again at once, forever.
            if chosen == .resume || (chosen == .restart && strategy?.restartsWithoutLimit == true) {
                chosen = .stop
            }
        }
        let logging = strategy?.isLoggingEnabled ?? true
        switch chosen {
        case .resume, .stop, .escalate:
            let restarts = source.flatMap { source in strategy.map { restartsInWindow(source, $0) } } ?? RestartCount(0)
            publishDecision(error, message, chosen, decider, restarts: restarts, logging: logging)
            if chosen == .stop {
                beginStopping(failure: error)
            } else if chosen == .escalate {
                beginStopping(failure: error, exit: .escalated)
            }
        case .restart:
            guard let source, let strategy else {
                beginStopping(failure: error)
                return
            }
            switch admitRestart(source, strategy) {
            case let .allowed(delay, restarts):
                publishDecision(error, message, .restart, decider, backoff: delay, restarts: restarts, logging: logging)
                beginRestart(source, strategy: strategy, delay: delay)
            case let .refused(exceeded, restarts):
                let outcome: SupervisorDirective = exceeded == .escalate && !isTopLevel ? .escalate : .stop
                publishDecision(error, message, outcome, decider, restarts: restarts, logging: logging)
                system.log("actor \(address.path): restart limit of \(strategy) exceeded")
                beginStopping(failure: error, exit: outcome == .escalate ? .escalated : .stopped)
            }
        }
    }

    /// Restarts counted in a window, for decisions and their log lines: `count`, out of
    /// `limit` within `window` when the rule has such a limit.
    struct RestartCount {
        var count: Int
        var limit: Int?
        var window: Duration?

        init(_ count: Int, limit: Int? = nil, window: Duration? = nil) {
            self.count = count
            self.limit = limit
            self.window = window
        }

        init(_ count: Int, of window: SharedRestartWindow) {
            self.init(count, limit: window.intensity, window: window.period)
        }

        /// "2 of 3 in 10.0 seconds", "2 of 10", "2".
        var text: String {
            var text = "\(count)"
            if let limit { text += " of \(limit)" }
            if let window { text += " in \(window)" }
            return text
        }
    }

    private func publishDecision(
        _ error: any Error, _ message: (any Sendable)?, _ directive: SupervisorDirective,
        _ decider: SupervisionDecision.Decider, backoff: Duration? = nil, restarts: RestartCount, logging: Bool
    ) {
        if logging {
            // An autoclosure: built only if the system has a log handler.
            system.log(decisionLine(error, directive, restarts, backoff))
        }
        system.publish(.supervised(SupervisionDecision(
            actor: address, error: error, message: message, directive: directive, decider: decider, backoff: backoff,
            restartCount: restarts.count)))
    }

    /// "actor /user/w failed: Boom; restart 2 of 3 in 10.0 seconds after 0.1 seconds".
    private func decisionLine(_ error: any Error, _ directive: SupervisorDirective, _ restarts: RestartCount, _ backoff: Duration?) -> String {
        var line = "actor \(address.path) failed: \(error); \(directive)"
        if directive == .restart {
            line += " \(restarts.text)"
        } else if restarts.count > 0 {
            line += " (restarts: \(restarts.text))"
        }
        if let backoff { line += " after \(backoff)" }
        return line
    }

    private enum Admission {
        case allowed(backoff: Duration?, RestartCount)
        case refused(SupervisorStrategy.LimitExceeded, RestartCount)
    }

    /// Counts a restart against the strategy's limit; the back-off delay if allowed, and the
    /// restarts in the window (with this one, if allowed).
    private func admitRestart(_ source: RestartSource, _ strategy: SupervisorStrategy) -> Admission {
        let now = dateScheduler.currentDate
        let system = self.system
        return supervisionState().withActiveRule(source) { active -> Admission in
            let backoff = strategy.backoff
            if let backoff, let last = active.lastRestart, now.timeIntervalSince(last) >= backoff.resetAfter.timeInterval {
                active.consecutive = 0
            }
            var windowCount: Int?
            if let limit = strategy.limit {
                if let window = limit.window {
                    // The sliding window: restarts at t >= now - window count, with this one.
                    guard let count = active.window.admit(at: now, window: window, limit: limit.maxRestarts) else {
                        return .refused(limit.whenExceeded, RestartCount(active.window.count, limit: limit.maxRestarts, window: window))
                    }
                    windowCount = count
                } else if active.consecutive + 1 > limit.maxRestarts {
                    return .refused(limit.whenExceeded, RestartCount(active.consecutive, limit: limit.maxRestarts))
                }
            }
            let delay = backoff.map { Self.backoffDelay($0, restarts: active.consecutive, random: system.nextRandomUnit()) }
            active.consecutive += 1
            return .allowed(backoff: delay, RestartCount(
                windowCount ?? active.consecutive, limit: strategy.limit?.maxRestarts, window: strategy.limit?.window))
        } ?? .allowed(backoff: nil, RestartCount(0))
    }

    /// The restarts the rule `source` (with `strategy`) holds in its window now, without
    /// counting one: for decisions that do not restart.
    private func restartsInWindow(_ source: RestartSource, _ strategy: SupervisorStrategy) -> RestartCount {
        let now = dateScheduler.currentDate
        return supervision?.withActiveRule(source) { active -> RestartCount in
            if let limit = strategy.limit, let window = limit.window {
                return RestartCount(active.window.count(at: now, window: window), limit: limit.maxRestarts, window: window)
            }
            return RestartCount(active.consecutive, limit: strategy.limit?.maxRestarts)
        } ?? RestartCount(0)
    }

    /// `min(maxBackoff, minBackoff·2ⁿ) · (1 + random·randomFactor)`.
    static func backoffDelay(_ backoff: SupervisorStrategy.Backoff, restarts: Int, random: Double) -> Duration {
        let base = min(backoff.maxBackoff.timeInterval, backoff.minBackoff.timeInterval * pow(2, Double(min(restarts, 62))))
        return .seconds(base * (1 + random * backoff.randomFactor))
    }

    // MARK: Restarting

    /// A restart decided by this actor's rules (or the guardian strategy, or a one-for-one
    /// supervisor's shared window): the stop half now, then, once the children told to stop are
    /// gone and the back-off (if any) has elapsed, the rebuild.
    private func beginRestart(_ source: RestartSource, strategy: SupervisorStrategy, delay: Duration?) {
        let state = supervisionState()
        var backoff: RestartStateMachine.Backoff?
        if let delay, let plan = strategy.backoff {
            let generation = state.restart.nextBackoffGeneration()
            let timer = dateScheduler.schedule(after: delay) { [self] in
                sendSystem(.backoffElapsed(generation: generation))
            }
            backoff = .init(generation: generation, timer: timer, stashCapacity: plan.stashCapacity)
        }
        perform(state.restart.restartDecided(
            source: source, stopsChildren: strategy.stopsChildren, hasChildren: hasChildren,
            backoff: backoff))
    }

    /// Performs what the restart state machine decided.
    func perform(_ action: RestartStateMachine.Action) {
        switch action {
        case .none:
            return
        case .suspend:
            lifecycle = .restarting
            flags.bitwiseOr(Self.restartingFlag, ordering: .relaxed)
            context.cancelAllTimers()
            keepStashForNewState()
        case let .stopHalf(stopsChildren, then):
            lifecycle = .restarting
            flags.bitwiseOr(Self.restartingFlag, ordering: .relaxed)
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
        flags.bitwiseAnd(~Self.restartingFlag, ordering: .relaxed)
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

    /// No rule of this `Supervisor` child decided: suspend (messages wait in the mailbox) and ask
    /// the supervisor.
    private func suspendForSupervisor(_ error: any Error, message: (any Sendable)?, logging: Bool) {
        publishDecision(error, message, .escalate, .supervisor, restarts: RestartCount(0), logging: logging)
        perform(supervisionState().restart.suspendedForSupervisor())
        parent?.sendSystem(.childFailed(self, error: error))
    }

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

    /// A `Supervisor` exceeded its restart intensity. As in OTP, that is not a failure for its
    /// own supervision to decide (no `supervise` rule and no guardian restart applies): the
    /// report is published (`failed` with the error, then `stop` by `actor`), the children stop
    /// newest first, and the actor terminates with a *shutdown* exit, which a parent
    /// `Supervisor` treats as normal for a transient child and restarts for a permanent one.
    /// Under the guardian strategy `.escalate`, a top-level supervisor's shutdown also begins
    /// shutting the system down.
    func shutDownAfterExceedingIntensity(_ error: SupervisorIntensityError) {
        guard case .running = lifecycle else { return }
        system.publish(.failed(address, error: error))
        let restarts = RestartCount(error.intensity, limit: error.intensity, window: error.period)
        if isTopLevel, system.configuration.guardianStrategy.directive(for: error) == .escalate {
            publishDecision(error, nil, .escalate, .guardian, restarts: restarts, logging: true)
            beginStopping(failure: error, exit: .shutdown)
            system.log("guardian: \(address.path) shut down after exceeding its intensity; shutting the system down")
            system.beginShutdown()
            return
        }
        publishDecision(error, nil, .stop, .actor, restarts: restarts, logging: true)
        beginStopping(failure: error, exit: .shutdown)
    }

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
