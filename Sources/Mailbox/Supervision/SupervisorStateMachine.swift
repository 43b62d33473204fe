/// A `Supervisor`'s bookkeeping (OTP's supervisor process), as a pure state machine: events in,
/// named after what happened, an action out for `SupervisorBehavior` to perform — the shape of
/// swift-async-algorithms' `MergeStateMachine` + `MergeStorage`, and of this codebase's
/// `RestartStateMachine`. It sends nothing, spawns nothing and reads no clock: it holds the
/// children's table and what is in progress, and says what to do. So it is tested alone, every
/// event in every state (`SupervisorStateMachineTests`).
///
/// Like an OTP supervisor it does one thing at a time. Starting its children, a restart, or a
/// request (`startChild`, `terminateChild`, `restartChild`) is *work*: a list of steps, each
/// waiting for one child's acknowledgement or termination. Children's failures and
/// terminations and `SupervisorMessage`s that arrive meanwhile wait in the work's *backlog*;
/// once the steps are done, the backlog is handled in order, failures and terminations first.
///
/// ```
///            started
///  initial ──────────► busy(start) ──(steps done: acknowledgeStart, then the backlog)──► idle
///                       │    ▲                                                            │
///              spawn a  │    │ childSpawned       a request ─────────► busy(request) ◄──────┤
///              child    ▼    │                                                            │
///                   (awaiting the spawn)      failure or termination to restart:          │
///                       │ childSpawnFailed    countRestart ◄──────────────────────────────┘
///                       ▼ (not requested)        │ restartCounted(admitted: true) ─► busy(restart)
///                     failed                     │ restartCounted(admitted: false)
///                                                ▼
///                                             shutDown
/// ```
///
/// The states and what may happen in each:
/// - `initial`: only `started`.
/// - `idle`: nothing in progress, the backlog is empty. Failures, terminations and messages are
///   handled at once; a late acknowledgement (`childStepDone`) is ignored.
/// - `busy`: work in progress, waiting for one child (its acknowledgement, or its termination)
///   or — between `Then.spawn` and its report — for the behavior to spawn one. While it waits
///   for a child, failures, terminations of other children and messages go to the backlog;
///   while it waits for a spawn, only `childSpawned` and `childSpawnFailed` can happen (the
///   behavior reports at once, in the same handler).
/// - `countingRestart`: a restart is planned; only `restartCounted(admitted:)` can happen (the
///   behavior counts it in the shared intensity window at once, in the same handler).
/// - `shutDown` (past the intensity: the supervisor has told itself to shut down) and `failed`
///   (a child it had to start could not be spawned: the handler throws, and the supervisor's
///   own supervision decides): final. A child's event does nothing more; a message, should one
///   still be handed over, is a dead letter.
///
/// Illegal transitions are runtime bugs, caught by `preconditionFailure` naming the state and
/// the event. Events that can legitimately arrive late (an acknowledgement nobody waits for, a
/// failure of a child that has been restarted since) do nothing, or go to the backlog, where a
/// stale one is recognised by the child's epoch.
///
/// Touched only inside the supervisor's mailbox run (it lives in its `SupervisorBehavior`).
struct SupervisorStateMachine {
    /// A child's spec and, while it runs, its actor.
    struct Child {
        let spec: ChildSpec
        var target: AnyTarget?
        /// Incremented each time the child is (re)started or stopped for good: an event from
        /// before that is stale.
        var epoch = 0
    }

    /// One step of work.
    enum Step: Equatable {
        /// A restart's stop half (`restartStop`), acknowledged.
        case stop(String)
        /// Start the child: `restartStart` for a live one, spawn it otherwise; acknowledged.
        case start(String)
        /// A live child restarted alone: both halves in one exchange (`restartNow`).
        case restartInPlace(String)
        /// Stop the child for good (`terminateChild`, a failed requested start); waits for its
        /// termination.
        case terminate(String)
    }

    /// A child's failure or termination that arrived during work, handled after it.
    enum ChildEvent {
        case failed(AnyTarget, error: any Error, epoch: Int)
        case terminated(id: String, failure: (any Error)?, isShutdown: Bool, epoch: Int)
    }

    /// A request answered once its steps are done.
    enum Request {
        /// `startChild` (`isNew`: its spec goes if the start fails) or `restartChild`.
        case start(id: String, replyTo: ActorRef<Result<AnyActorRef, SupervisorError>>, isNew: Bool)
        case terminate(id: String, replyTo: ActorRef<Result<Void, SupervisorError>>)
    }

    /// What work is for, and so what happens once its steps are done.
    enum Purpose {
        /// Starting the children of the specs, in order (OTP's `init`); then the supervisor
        /// tells its own supervisor, if it has one, that it has started.
        case start
        /// Restarting the children the strategy names, after a failure or termination.
        case restart
        /// Carrying out `request`, answered once done; `failure`: why its child did not start.
        case request(Request, failure: (any Error)?)
    }

    /// What work waits for before its next step.
    enum Awaited {
        /// The child's acknowledgement of `step` (or, for a `terminate` step, its
        /// termination). A child that terminates instead of acknowledging also ends the wait.
        case child(AnyTarget, Step)
        /// The behavior spawning the child `id` (`Then.spawn`).
        case spawn(id: String)
    }

    /// Failures, terminations and messages that arrived during work, in arrival order.
    struct Backlog {
        var childEvents: [ChildEvent] = []
        /// As OTP's `start_link` returns only once every child has started, nobody sees a
        /// half-started tree, nor a half-done restart: messages wait too.
        var messages: [SupervisorMessage] = []
    }

    /// Work in progress.
    struct Work {
        var purpose: Purpose
        /// Steps left, the next one *last* (a stack: taking a step is O(1); taking the first of
        /// an array was O(n), quadratic over a whole-tree restart).
        var steps: [Step]
        var awaited: Awaited?
        var backlog = Backlog()
    }

    /// A restart to count before it goes ahead.
    struct PlannedRestart {
        /// The restart's steps, the next one last.
        var steps: [Step]
        /// The failure that asked for it (a `ChildStoppedError` for a normal termination).
        var failure: any Error
        /// What is still to handle after it.
        var backlog: Backlog
    }

    enum State {
        /// Created; `started` comes next.
        case initial
        /// Nothing in progress; the backlog is empty.
        case idle
        /// Work in progress.
        case busy(Work)
        /// The behavior counts a restart in the intensity window.
        case countingRestart(PlannedRestart)
        /// The intensity was exceeded: the supervisor shuts down.
        case shutDown
        /// A child it had to start could not be spawned: the supervisor failed.
        case failed
        /// Never observed: taken while an event mutates the work, so that its arrays are
        /// referenced once and not copied (as `MergeStateMachine` does).
        case modifying
    }

    /// A reply to a message or a request.
    enum Reply {
        case children([SupervisedChild], to: ActorRef<[SupervisedChild]>)
        case child(AnyActorRef?, to: ActorRef<AnyActorRef?>)
        case count(SupervisorChildCount, to: ActorRef<SupervisorChildCount>)
        case started(Result<AnyActorRef, SupervisorError>, to: ActorRef<Result<AnyActorRef, SupervisorError>>)
        case done(Result<Void, SupervisorError>, to: ActorRef<Result<Void, SupervisorError>>)
    }

    /// Something the behavior does, in order, before `Action.then`.
    enum Effect {
        /// Send `message` to `child`.
        case send(SystemMessage, to: AnyTarget)
        /// Answer a message or a request.
        case reply(Reply)
        /// The children have started: tell the supervisor's own `Supervisor`, if it has one.
        case acknowledgeStart
        /// Publish `message` as a dead letter (the supervisor is shutting down, or failed).
        case deadLetter(SupervisorMessage)
        /// Shut down after exceeding the intensity; `lastFailure` asked for one restart too many.
        case shutDown(lastFailure: any Error)
    }

    /// What the behavior does after the effects.
    enum Then {
        /// Nothing more until the next event.
        case wait
        /// Spawn the child of `spec`, with the supervisor's shared intensity window when
        /// `sharingWindow`; report `childSpawned` or `childSpawnFailed`.
        case spawn(ChildSpec, sharingWindow: Bool)
        /// Count a restart in the intensity window; report `restartCounted(admitted:)`.
        case countRestart
        /// Throw `error` from the handler: a failure of the supervisor itself.
        case fail(any Error)
    }

    /// What the behavior must do after an event.
    struct Action {
        var effects: [Effect]
        var then: Then

        static var none: Action { Action(effects: [], then: .wait) }
    }

    private let supervisor: ActorAddress
    private let strategy: Supervisor.RestartScope
    /// The children, in start order.
    private(set) var children: [Child]
    private(set) var state: State = .initial

    init(supervisor: ActorAddress, strategy: Supervisor.RestartScope, specs: [ChildSpec]) {
        self.supervisor = supervisor
        self.strategy = strategy
        self.children = specs.map { Child(spec: $0) }
    }

    // MARK: Events

    /// The supervisor started: its children start one at a time, in order (each child's `setup`
    /// runs before the next child is spawned).
    mutating func started() -> Action {
        guard case .initial = state else { illegal("started") }
        return proceed(Work(purpose: .start, steps: children.reversed().map { .start($0.spec.id) }))
    }

    /// A `SupervisorMessage` arrived.
    mutating func messageReceived(_ message: SupervisorMessage) -> Action {
        switch state {
        case .idle:
            var effects: [Effect] = []
            guard let work = answer(message, backlog: Backlog(), &effects) else { return Action(effects: effects, then: .wait) }
            return proceed(work, effects)
        case .busy:
            var work = takeWork("messageReceived")
            work.backlog.messages.append(message)
            state = .busy(work)
            return .none
        case .shutDown, .failed:
            return Action(effects: [.deadLetter(message)], then: .wait)
        case .initial, .countingRestart, .modifying:
            illegal("messageReceived")
        }
    }

    /// `child` failed and waits, suspended, for a decision.
    mutating func childFailed(_ child: AnyTarget, error: any Error) -> Action {
        switch state {
        case .idle, .busy:
            if isSpawning { illegal("childFailed") }
            guard let index = index(of: child) else {
                // Not (or no longer) a child of the specs: it does not run on.
                return Action(effects: [.send(.stop, to: child)], then: .wait)
            }
            if case .busy = state {
                var work = takeWork("childFailed")
                work.backlog.childEvents.append(.failed(child, error: error, epoch: children[index].epoch))
                state = .busy(work)
                return .none
            }
            var effects: [Effect] = []
            return next(handle(index, failure: error, hasTerminated: false, isShutdown: false, backlog: Backlog(), &effects), effects)
        case .shutDown, .failed:
            return .none
        case .initial, .countingRestart, .modifying:
            illegal("childFailed")
        }
    }

    /// `child` terminated, with `failure` if it failed; `isShutdown` for a child `Supervisor`
    /// that exceeded its intensity.
    mutating func childTerminated(_ child: AnyTarget, failure: (any Error)?, isShutdown: Bool) -> Action {
        switch state {
        case .idle, .busy:
            if isSpawning { illegal("childTerminated") }
            guard let index = index(of: child) else { return .none }
            children[index].target = nil
            guard case .busy = state else {
                var effects: [Effect] = []
                return next(handle(index, failure: failure, hasTerminated: true, isShutdown: isShutdown, backlog: Backlog(), &effects), effects)
            }
            var work = takeWork("childTerminated")
            if case let .child(awaited, step)? = work.awaited, awaited === child {
                // Its step is done: it stopped instead of acknowledging (a start step spawns it
                // anew), or it was stopped for good.
                work.awaited = nil
                if case .terminate = step, children[index].spec.restart == .temporary {
                    children.remove(at: index)
                }
                return proceed(work)
            }
            let id = children[index].spec.id
            work.backlog.childEvents.append(.terminated(id: id, failure: failure, isShutdown: isShutdown, epoch: children[index].epoch))
            state = .busy(work)
            return .none
        case .shutDown, .failed:
            return .none
        case .initial, .countingRestart, .modifying:
            illegal("childTerminated")
        }
    }

    /// `child` acknowledged a `restartStop`, `restartStart` or `restartNow` (or its first
    /// start), with `setupFailure` if its `setup` threw (its failure follows).
    mutating func childStepDone(_ child: AnyTarget, setupFailure: (any Error)?) -> Action {
        switch state {
        case .idle, .shutDown, .failed:
            // Nobody waits for it: a child that restarted itself by its own rules, or late.
            return .none
        case .busy:
            var work = takeWork("childStepDone")
            guard case let .child(awaited, step)? = work.awaited, awaited === child else {
                state = .busy(work)
                return .none
            }
            work.awaited = nil
            if let setupFailure, case let .request(.start(id, replyTo, isNew), _) = work.purpose, case .start(id) = step {
                // A requested start failed: stop the child for good, then answer the error. (Its
                // failure, on its way here, is then stale.)
                work.purpose = .request(.start(id: id, replyTo: replyTo, isNew: isNew), failure: setupFailure)
                work.steps.append(.terminate(id))   // next
            }
            return proceed(work)
        case .initial, .countingRestart, .modifying:
            illegal("childStepDone")
        }
    }

    /// The behavior spawned the child that `Then.spawn` asked for.
    mutating func childSpawned(_ target: AnyTarget) -> Action {
        var work = takeWork("childSpawned", spawning: true)
        guard case let .spawn(id)? = work.awaited, let index = index(id: id) else {
            preconditionFailure("supervisor state machine: childSpawned for a child without a spec: \(work)")
        }
        children[index].target = target
        work.awaited = .child(target, .start(id))
        state = .busy(work)
        return .none
    }

    /// The behavior could not spawn the child that `Then.spawn` asked for.
    mutating func childSpawnFailed(_ error: any Error) -> Action {
        var work = takeWork("childSpawnFailed", spawning: true)
        guard case let .spawn(id)? = work.awaited else { preconditionFailure("unreachable: takeWork checked the spawn") }
        work.awaited = nil
        guard case .request(.start(id, let replyTo, let isNew), _) = work.purpose else {
            // A child of the specs, or of a restart: the supervisor itself fails.
            state = .failed
            return Action(effects: [], then: .fail(error))
        }
        // A requested start that cannot spawn is the requester's error, not this supervisor's
        // failure.
        work.purpose = .request(.start(id: id, replyTo: replyTo, isNew: isNew), failure: error)
        return proceed(work)
    }

    /// The behavior counted the planned restart in the intensity window: `admitted`, or one
    /// too many.
    mutating func restartCounted(admitted: Bool) -> Action {
        guard case let .countingRestart(planned) = state else { illegal("restartCounted(admitted: \(admitted))") }
        state = .modifying
        guard admitted else {
            // One restart too many (OTP): the supervisor shuts down; its children stop, newest
            // first, and it terminates with a shutdown exit. What waited is not handled.
            state = .shutDown
            let deadLetters = planned.backlog.messages.map(Effect.deadLetter)
            return Action(effects: deadLetters + [.shutDown(lastFailure: planned.failure)], then: .wait)
        }
        return proceed(Work(purpose: .restart, steps: planned.steps, backlog: planned.backlog))
    }

    // MARK: Work

    /// Runs `work`'s steps until one waits; once they are all done, finishes the work and
    /// handles the backlog, which may start more work. Leaves the machine in the state it
    /// reaches and returns what the behavior does.
    private mutating func proceed(_ work: Work, _ effects: [Effect] = []) -> Action {
        var effects = effects
        var work = work
        while true {
            if let then = runSteps(&work, &effects) { return Action(effects: effects, then: then) }
            finish(work.purpose, &effects)
            switch nextFromBacklog(work.backlog, &effects) {
            case nil:
                state = .idle
                return Action(effects: effects, then: .wait)
            case let .work(next)?:
                work = next
            case let .countRestart(planned)?:
                state = .countingRestart(planned)
                return Action(effects: effects, then: .countRestart)
            }
        }
    }

    /// Takes steps until one waits: then stores the work (`busy`) and returns what to do.
    /// Returns `nil` once no step is left.
    private mutating func runSteps(_ work: inout Work, _ effects: inout [Effect]) -> Then? {
        while work.awaited == nil, let step = work.steps.popLast() {
            switch step {
            case let .stop(id):
                guard let index = index(id: id), let target = children[index].target else { continue }
                if children[index].spec.restart == .temporary {
                    // Never restarted: stopped for good.
                    effects.append(.send(.stop, to: target))
                    children.remove(at: index)
                } else {
                    work.awaited = .child(target, step)
                    effects.append(.send(.restartStop, to: target))
                }
            case let .restartInPlace(id):
                guard let index = index(id: id), let target = children[index].target else { continue }
                children[index].epoch += 1
                effects.append(.send(.restartNow, to: target))
                work.awaited = .child(target, step)
            case let .start(id):
                guard let index = index(id: id) else { continue }
                children[index].epoch += 1
                if let target = children[index].target {
                    effects.append(.send(.restartStart, to: target))
                    work.awaited = .child(target, step)
                } else {
                    let spec = children[index].spec
                    work.awaited = .spawn(id: id)
                    state = .busy(work)
                    // One-for-one children restart themselves against the shared window while
                    // it admits; a temporary child is never restarted.
                    return .spawn(spec, sharingWindow: strategy == .oneForOne && spec.restart != .temporary)
                }
            case let .terminate(id):
                guard let index = index(id: id) else { continue }
                children[index].epoch += 1
                guard let target = children[index].target else {
                    if children[index].spec.restart == .temporary { children.remove(at: index) }
                    continue
                }
                work.awaited = .child(target, step)
                effects.append(.send(.stop, to: target))
            }
        }
        guard work.awaited == nil else {
            state = .busy(work)
            return .wait
        }
        return nil
    }

    /// The steps of `purpose` are done.
    private mutating func finish(_ purpose: Purpose, _ effects: inout [Effect]) {
        switch purpose {
        case .start:
            effects.append(.acknowledgeStart)
        case .restart:
            break
        case let .request(.start(id, replyTo, isNew), failure):
            let index = index(id: id)
            if let index, failure == nil, let target = children[index].target {
                effects.append(.reply(.started(.success(AnyActorRef(target)), to: replyTo)))
                return
            }
            if isNew, let index, children[index].target == nil {
                // OTP discards the spec of a child that did not start.
                children.remove(at: index)
            }
            let error = self.error(.startFailed, id, underlying: failure ?? ChildStoppedError(id: id))
            effects.append(.reply(.started(.failure(error), to: replyTo)))
        case let .request(.terminate(_, replyTo), _):
            effects.append(.reply(.done(.success(()), to: replyTo)))
        }
    }

    /// What handling a backlog item (or an event while idle) leads to, beyond its effects.
    private enum Next {
        case work(Work)
        case countRestart(PlannedRestart)
    }

    /// Handles the backlog in order, failures and terminations first, until an item starts
    /// work or plans a restart (which carry the rest of the backlog), or none is left.
    private mutating func nextFromBacklog(_ backlog: Backlog, _ effects: inout [Effect]) -> Next? {
        var backlog = backlog
        while true {
            if !backlog.childEvents.isEmpty {
                switch backlog.childEvents.removeFirst() {
                case let .failed(child, error, epoch):
                    guard let index = index(of: child), children[index].epoch == epoch else { continue }
                    if let next = handle(index, failure: error, hasTerminated: false, isShutdown: false, backlog: backlog, &effects) {
                        return next
                    }
                case let .terminated(id, failure, isShutdown, epoch):
                    // Stale if the steps spawned it again, or stopped it for good, meanwhile.
                    guard let index = index(id: id), children[index].target == nil, children[index].epoch == epoch else { continue }
                    if let next = handle(index, failure: failure, hasTerminated: true, isShutdown: isShutdown, backlog: backlog, &effects) {
                        return next
                    }
                }
            } else if !backlog.messages.isEmpty {
                let message = backlog.messages.removeFirst()
                if let work = answer(message, backlog: backlog, &effects) { return .work(work) }
            } else {
                return nil
            }
        }
    }

    /// Performs what an event handled while idle led to.
    private mutating func next(_ next: Next?, _ effects: [Effect]) -> Action {
        switch next {
        case nil:
            state = .idle
            return Action(effects: effects, then: .wait)
        case let .work(work)?:
            return proceed(work, effects)
        case let .countRestart(planned)?:
            state = .countingRestart(planned)
            return Action(effects: effects, then: .countRestart)
        }
    }

    // MARK: Deciding

    /// Applies the restart type and the strategy to the child at `index`, which failed
    /// (suspended, or terminated with `failure`), terminated normally (`failure == nil`), or
    /// — a child supervisor — shut down after exceeding its intensity (`isShutdown`). Returns
    /// the restart to count, with `backlog` after it, or `nil` if the child is not restarted.
    private mutating func handle(
        _ index: Int, failure: (any Error)?, hasTerminated: Bool, isShutdown: Bool, backlog: Backlog, _ effects: inout [Effect]
    ) -> Next? {
        let spec = children[index].spec
        let restarts: Bool
        switch spec.restart {
        case .permanent: restarts = true
        // OTP: `shutdown` is a normal exit for a transient child.
        case .transient: restarts = failure != nil && !isShutdown
        case .temporary: restarts = false
        }
        guard restarts else {
            if !hasTerminated, let target = children[index].target { effects.append(.send(.stop, to: target)) }
            if spec.restart == .temporary {
                children.remove(at: index)
            } else {
                children[index].target = nil
            }
            return nil
        }
        let set: ArraySlice<Child>
        switch strategy {
        case .oneForOne: set = children[index...index]
        case .allForOne: set = children[...]
        case .restForOne: set = children[index...]
        }
        let steps: [Step]
        if set.count == 1, !hasTerminated, children[index].target != nil {
            // Nothing to order: one exchange instead of two.
            steps = [.restartInPlace(spec.id)]
        } else {
            let inOrder: [Step] = set.reversed().map { .stop($0.spec.id) }
                + set.filter { $0.spec.restart != .temporary || $0.spec.id == spec.id }.map { .start($0.spec.id) }
            steps = inOrder.reversed()
        }
        return .countRestart(PlannedRestart(steps: steps, failure: failure ?? ChildStoppedError(id: spec.id), backlog: backlog))
    }

    // MARK: Messages

    /// Answers `message` (while nothing is in progress); returns the work it starts, with
    /// `backlog` after it, if it starts any.
    private mutating func answer(_ message: SupervisorMessage, backlog: Backlog, _ effects: inout [Effect]) -> Work? {
        switch message {
        case let .whichChildren(replyTo):
            let children = children.map {
                SupervisedChild(id: $0.spec.id, ref: $0.target.map(AnyActorRef.init), restart: $0.spec.restart, type: $0.spec.type)
            }
            effects.append(.reply(.children(children, to: replyTo)))
        case let .child(id, replyTo):
            effects.append(.reply(.child(children.first { $0.spec.id == id }?.target.map(AnyActorRef.init), to: replyTo)))
        case let .countChildren(replyTo):
            let supervisors = children.count(where: { $0.spec.type == .supervisor })
            let count = SupervisorChildCount(
                specs: children.count, active: children.count(where: { $0.target != nil }),
                supervisors: supervisors, workers: children.count - supervisors)
            effects.append(.reply(.count(count, to: replyTo)))
        case let .startChild(spec, replyTo):
            if let index = index(id: spec.id) {
                let taken = children[index].target.map { self.error(.alreadyStarted, spec.id, child: AnyActorRef($0)) }
                    ?? self.error(.alreadyPresent, spec.id)
                effects.append(.reply(.started(.failure(taken), to: replyTo)))
                return nil
            }
            children.append(Child(spec: spec))
            let request = Request.start(id: spec.id, replyTo: replyTo, isNew: true)
            return Work(purpose: .request(request, failure: nil), steps: [.start(spec.id)], backlog: backlog)
        case let .restartChild(id, replyTo):
            if case let .failure(error) = stoppedChildIndex(id) {
                effects.append(.reply(.started(.failure(error), to: replyTo)))
                return nil
            }
            let request = Request.start(id: id, replyTo: replyTo, isNew: false)
            return Work(purpose: .request(request, failure: nil), steps: [.start(id)], backlog: backlog)
        case let .terminateChild(id, replyTo):
            guard index(id: id) != nil else {
                effects.append(.reply(.done(.failure(error(.notFound, id)), to: replyTo)))
                return nil
            }
            return Work(purpose: .request(.terminate(id: id, replyTo: replyTo), failure: nil), steps: [.terminate(id)], backlog: backlog)
        case let .deleteChild(id, replyTo):
            switch stoppedChildIndex(id) {
            case let .success(index):
                children.remove(at: index)
                effects.append(.reply(.done(.success(()), to: replyTo)))
            case let .failure(error):
                effects.append(.reply(.done(.failure(error), to: replyTo)))
            }
        }
        return nil
    }

    /// The index of child `id` if it has a spec here and is not running; otherwise why not
    /// (`notFound`, `running`).
    private func stoppedChildIndex(_ id: String) -> Result<Int, SupervisorError> {
        guard let index = index(id: id) else { return .failure(error(.notFound, id)) }
        guard children[index].target == nil else { return .failure(error(.running, id)) }
        return .success(index)
    }

    private func error(_ code: SupervisorError.Code, _ id: String, child: AnyActorRef? = nil, underlying: (any Error)? = nil) -> SupervisorError {
        SupervisorError(code, supervisor: supervisor, id: id, child: child, underlying: underlying)
    }

    // MARK: Helpers

    private func index(of child: AnyTarget) -> Int? {
        children.firstIndex { $0.target === child }
    }

    private func index(id: String) -> Int? {
        children.firstIndex { $0.spec.id == id }
    }

    /// The work of `busy`, taken out (the state is `modifying` until it is put back); `event`
    /// is illegal in any other state, and (`spawning == false`) while the behavior spawns a
    /// child.
    private mutating func takeWork(_ event: String, spawning: Bool = false) -> Work {
        guard case let .busy(work) = state else { illegal(event) }
        let spawns: Bool
        if case .spawn? = work.awaited { spawns = true } else { spawns = false }
        guard spawns == spawning else { illegal(event) }
        state = .modifying
        return work
    }

    /// Whether the behavior is spawning a child (between `Then.spawn` and its report).
    private var isSpawning: Bool {
        guard case let .busy(work) = state, case .spawn? = work.awaited else { return false }
        return true
    }

    private func illegal(_ event: String) -> Never {
        preconditionFailure("supervisor state machine: \(event) in state \(state)")
    }
}
