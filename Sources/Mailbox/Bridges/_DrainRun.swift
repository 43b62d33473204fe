/// One run of `SignalProducer.drain(into:…)`: the state machine under a lock, the ack ref, the
/// watch of the actor, and an outbox of actions performed in order outside the lock.
///
/// Every event (an upstream event, an ack, the actor's termination, the run's disposal) updates
/// the state machine under `state`'s lock and appends its actions to the outbox; the caller
/// that finds nobody performing performs the outbox until it is empty (a trampoline, like
/// `_Emitter`). An event that arrives meanwhile — from another thread, or re-entrantly from this
/// one (an actor on an `ImmediateScheduler` acknowledging inside the `tell` that delivered the
/// value) — only appends, so the drain never deadlocks on its own lock, never recurses, and
/// tells the actor and sends on its run in the order the state machine decided.
///
/// What keeps what alive: while the drain runs, the upstream run (through its observer), the
/// drain's run (through its lifetime) and the watched actor (through the watch) retain this
/// object; the ack ref only points at it weakly, so an actor that keeps the ack ref keeps
/// nothing alive.
final class _DrainRun<Value: Sendable, Failure: Swift.Error, Message: Sendable, Ack: Sendable>: _DrainAcknowledgeable {
    typealias Machine = _DrainStateMachine<Value, Failure>

    private struct State {
        var machine: Machine
        /// Actions decided and not yet performed, oldest first.
        var outbox: [Machine.Action] = []
        /// Whether a caller is performing the outbox.
        var isPerforming = false
        /// Interrupts the upstream run; set once, when the upstream starts.
        var upstream: (any Disposable)?
        /// The watch of the actor; set once, in `begin()`.
        var watcher: _TerminationWatcher?
    }

    /// Protected by its own lock.
    private let state: LockedValueBox<State>
    private let target: ActorRef<Message>
    private let run: Signal<Value, DrainError<Failure>>.Observer
    private let makeInit: @Sendable (ActorRef<Ack>) -> Message
    private let makeMessage: @Sendable (ActorRef<Ack>, Value) -> Message
    private let completion: Message
    private let makeFailure: @Sendable (DrainError<Failure>) -> Message
    /// The ack ref handed to the actor; it points back here weakly.
    private let ackTo: ActorRef<Ack>

    init(
        target: ActorRef<Message>,
        run: Signal<Value, DrainError<Failure>>.Observer,
        bufferLimit: Int,
        overflow: DrainOverflow,
        makeInit: @escaping @Sendable (ActorRef<Ack>) -> Message,
        makeMessage: @escaping @Sendable (ActorRef<Ack>, Value) -> Message,
        completion: Message,
        makeFailure: @escaping @Sendable (DrainError<Failure>) -> Message
    ) {
        self.state = LockedValueBox(State(machine: Machine(target: target.address, bufferLimit: bufferLimit, overflow: overflow)))
        self.target = target
        self.run = run
        self.makeInit = makeInit
        self.makeMessage = makeMessage
        self.completion = completion
        self.makeFailure = makeFailure
        let system = target.target.system
        let ackTarget = _DrainAckTarget<Ack>(address: ActorAddress(system: system.name, path: "/temp/$ack", incarnation: system.nextIncarnation()), system: system)
        self.ackTo = ActorRef(ackTarget)
        ackTarget.receiver = self
    }

    // MARK: Events

    /// Starts watching the actor and tells it the init message. Returns whether the drain is
    /// still running (the actor may have terminated already).
    func begin() -> Bool {
        let watcher = _TerminationWatcher(watching: target.target) { [self] _ in
            update { $0.targetTerminated(&$1) }
        }
        state.withLockedValue { $0.watcher = watcher }
        watcher.start()
        update { $0.started(&$1) }
        return !isFinished
    }

    /// Hands over the upstream's interrupt handle; interrupts it at once if the drain has ended.
    func upstreamStarted(_ interrupter: any Disposable) {
        let hasEnded = state.withLockedValue { state -> Bool in
            state.upstream = interrupter
            return state.machine.isFinished
        }
        if hasEnded { interrupter.dispose() }
    }

    func upstream(_ event: Event<Value, Failure>) {
        switch event {
        case let .value(value): update { $0.upstreamSent(value, &$1) }
        case let .failed(error): update { $0.upstreamFailed(error, &$1) }
        case .completed: update { $0.upstreamCompleted(&$1) }
        case .interrupted: update { $0.upstreamInterrupted(&$1) }
        }
    }

    /// The drain's run ended (disposed, or terminated by this object).
    func runEnded() {
        update { $0.runDisposed(&$1) }
    }

    func acknowledge() -> Bool {
        update { $0.acknowledged(&$1) }
    }

    var isFinished: Bool {
        state.withLockedValue { $0.machine.isFinished }
    }

    // MARK: Performing

    /// Applies `event` to the state machine and performs the actions, unless a caller is
    /// performing already (then it will).
    @discardableResult
    private func update<T>(_ event: (inout Machine, inout [Machine.Action]) -> T) -> T {
        var batch: [Machine.Action] = []
        let result = state.withLockedValue { state -> T in
            let result = event(&state.machine, &state.outbox)
            if !state.isPerforming && !state.outbox.isEmpty {
                state.isPerforming = true
                swap(&batch, &state.outbox)
            }
            return result
        }
        while !batch.isEmpty {
            for action in batch { perform(action) }
            batch.removeAll(keepingCapacity: true)
            state.withLockedValue { state in
                if state.outbox.isEmpty {
                    state.isPerforming = false
                } else {
                    swap(&batch, &state.outbox)
                }
            }
        }
        return result
    }

    private func perform(_ action: Machine.Action) {
        switch action {
        case .tellInit:
            deliver(makeInit(ackTo))
        case let .tellValue(value):
            deliver(makeMessage(ackTo, value))
        case .tellCompletion:
            target.tell(completion)
        case let .tellFailure(error):
            target.tell(makeFailure(error))
        case let .emitAcknowledged(value):
            run.send(value: value)
        case .completeRun:
            run.sendCompleted()
        case let .failRun(error):
            run.send(error: error)
        case .interruptRun:
            run.sendInterrupted()
        case .interruptUpstream:
            state.withLockedValue { $0.upstream }?.dispose()
        case .stopWatching:
            state.withLockedValue { $0.watcher }?.cancel()
        }
    }

    /// Tells a message that must be acknowledged; one the mailbox refuses ends the drain.
    private func deliver(_ message: Message) {
        if case let .dropped(reason) = target.tell(message) {
            update { $0.deliveryFailed(reason, &$1) }
        }
    }
}

// Safe: every mutable stored property is inside `state`, protected by its lock.
extension _DrainRun: @unchecked Sendable {}

/// What the ack ref of a drain reports to.
protocol _DrainAcknowledgeable: AnyObject, Sendable {
    /// Records an ack; returns `false` if the drain has ended (the ack is then a dead letter).
    func acknowledge() -> Bool
}

/// The ack ref of one drain: any message told to it is an acknowledgement. After the drain has
/// ended (or once nothing retains it), a message told to it is a dead letter (`.noRecipient`).
///
/// `receiver` is written once, in `_DrainRun.init`, before the ref is handed to anybody (the
/// `tell` that hands it over publishes it); the rest is immutable.
// Safe: `receiver` is written once before publication (through the mailbox's atomics), then only read.
final class _DrainAckTarget<Ack: Sendable>: ActorRefTarget<Ack>, @unchecked Sendable {
    weak var receiver: (any _DrainAcknowledgeable)?

    init(address: ActorAddress, system: ActorSystem) {
        super.init(address: address, system: system)
    }

    override func tell(_ message: Ack) -> TellResult {
        if let receiver, receiver.acknowledge() { return .enqueued }
        return super.tell(message)
    }
}
