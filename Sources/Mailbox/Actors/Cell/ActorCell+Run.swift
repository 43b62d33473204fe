import Synchronization

/// The mailbox run and the handling of user messages: everything here runs inside the
/// actor's single mailbox run.
extension ActorCell {
    // MARK: The mailbox run

    /// The body of a mailbox run: system messages, then up to `runLength` user messages, then
    /// release the activation (or schedule the next run if messages remain).
    ///
    /// - Returns: Whether the run held a retain of the cell, to be given back by the pool
    ///   worker that ran it. Nothing here touches the cell after its activation is released:
    ///   from then on another run may terminate it, and its parent may free it.
    @inlinable
    final func runMailbox() -> Bool {
        #if DEBUG
        let previousRun = _MailboxRunMarker.enter(self)
        defer { _MailboxRunMarker.leave(restoring: previousRun) }
        #endif
        var handled = 0
        if case .terminated = lifecycle {
            if flags.isReleasing {
                // Not a run: the cell's `deinit` (nothing else can reach the cell now).
                mailboxHead.releaseAll(mailboxTail)
                return false
            }
            handled = drainAfterTermination()
        } else {
            if case .new = lifecycle, flags.isStartRequested {
                // The start, first of all system messages (see `CellFlags.isStartRequested`).
                flags.clearStartRequested()
                handled = 1
                handleSystemMessage(.start)
            }
            if systemMessages.load(ordering: .relaxed) != nil {
                handled += runSystemMessages()
            }
            var userHandled = 0
            let bounded = bounded
            while userHandled < runLength, isAcceptingUserMessages {
                if let bounded, bounded.overflow == .dropOldest, bounded.userCount.load(ordering: .relaxed) > bounded.capacity {
                    handled += dropOldestOverflow(bounded)
                }
                guard let message = mailboxHead.dequeue(mailboxTail) else { break }
                handled += 1
                userHandled += 1
                if let bounded { freeRoom(bounded) }
                if flags.mayHoldTimerMessage, !admitsTimerMessage() {
                    // A message of a timer cancelled or restarted after it fired.
                } else if case .running = lifecycle {
                    handle(message)
                } else {
                    handleWhileNotRunning(message)
                }
                if systemMessages.load(ordering: .relaxed) != nil {
                    handled += runSystemMessages()
                }
                // Everything counted so far is handled: skip the dequeue that would find the
                // queue empty. (A message enqueued and not yet counted is not lost: its sender's
                // count makes the release below see it and schedule the next run.) Asked only
                // when the next slot is not already written: under a backlog, reading the
                // senders' activation word for every message would cost a contended cache line.
                if !mailboxHead.nextIsWritten(), pending.load(ordering: .relaxed) == handled { break }
            }
            if let storage = contextStorage, !storage.queuedTerminations.isEmpty {
                deliverQueuedTerminations(storage)
            }
            if case .terminated = lifecycle {
                handled += drainAfterTermination()
            }
        }
        // Read before the activation is released: `scheduleRun` sets it for the next run.
        let wasRetained = runIsRetained
        let parks = isParkingForRestart
        let idleHook = flags.hasIdleHook ? contextStorage?.idleHook : nil
        let identity = ObjectIdentifier(self)
        if pending.wrappingSubtract(handled, ordering: .acquiringAndReleasing).newValue > 0 {
            if parks {
                park()
            } else {
                scheduleRun()
            }
        } else if let idleHook {
            // Idle: the cell may already be another run's (or freed); only its identity goes on.
            idleHook(identity)
        }
        return wasRetained
    }

    @inlinable
    final var isAcceptingUserMessages: Bool {
        switch lifecycle {
        case .running, .stopping: return true
        case .restarting: return isBufferingDuringRestart
        case .new, .terminated: return false
        }
    }

    /// Whether this run leaves the user messages queued: a restart waits for children or for a
    /// `Supervisor`'s decision, and user messages wait in the mailbox (not copied aside).
    @inlinable
    final var isParkingForRestart: Bool {
        if case .restarting = lifecycle { return !isBufferingDuringRestart }
        return false
    }

    /// Ends a run that leaves user messages queued without scheduling another: the sender of
    /// the next system message does (`sendSystem`). Store-buffer pattern with `sendSystem`'s
    /// push then check: either this sees the system message, or the sender sees the flag; the
    /// one that wins the exchange schedules the run.
    @usableFromInline
    func park() {
        flags.setParked()
        if systemMessages.load(ordering: .sequentiallyConsistent) != nil, unpark() {
            scheduleRun()
        }
    }

    /// A user message taken out of the mailbox while restarting (kept for the new state) or
    /// stopping (a dead letter).
    @usableFromInline
    func handleWhileNotRunning(_ message: Message) {
        if case .restarting = lifecycle {
            bufferDuringRestart(message)
        } else {
            system.publishUndelivered(message, to: address, reason: .recipientTerminated)
        }
    }

    @usableFromInline
    func freeRoom(_ bounded: CellOptions) {
        // Sequentially consistent with the waiter's register-then-check (`RoomWaiters.wait`):
        // either this sees the waiter or the waiter sees the room (store-buffer pattern).
        bounded.userCount.wrappingSubtract(1, ordering: .sequentiallyConsistent)
        bounded.roomWaiters?.resumeOne()
    }

    /// Drops the oldest messages while more than `capacity` are queued (`dropOldest`). Only
    /// the consumer dequeues, so the count it compares is never ahead of the queue for long:
    /// a sender counts before it enqueues, and `dequeue` waits for a counted, claimed slot.
    @usableFromInline
    func dropOldestOverflow(_ bounded: CellOptions) -> Int {
        var dropped = 0
        while bounded.userCount.load(ordering: .relaxed) > bounded.capacity, let message = mailboxHead.dequeue(mailboxTail) {
            bounded.userCount.wrappingSubtract(1, ordering: .relaxed)
            system.publishUndelivered(message, to: address, reason: .mailboxFull(.dropOldest))
            dropped += 1
        }
        return dropped
    }
    /// After termination: every user message becomes a dead letter, every system message gets
    /// the answer a terminated actor gives.
    @inlinable
    func drainAfterTermination() -> Int {
        var handled = runSystemMessages()
        if flags.isStartRequested {
            // A start that came after a stop (a spawn racing a shutdown): counted, nothing to
            // start. (Left uncounted, it would keep the activation word above zero for ever.)
            flags.clearStartRequested()
            handled += 1
        }
        let bounded = bounded
        while let message = mailboxHead.dequeue(mailboxTail) {
            if let bounded { freeRoom(bounded) }
            // A timer's message after termination is dropped silently: its timer is gone.
            if !flags.mayHoldTimerMessage || !takesTimerMark() {
                system.publishUndelivered(message, to: address, reason: .recipientTerminated)
            }
            handled += 1
        }
        return handled
    }

    /// Called for a message just dequeued while timer messages may be queued: whether to handle
    /// it. A message that is no timer's is; a timer's message is only while its timer is the
    /// current one for its key and the actor runs (a restart or stop cancels every timer), and
    /// then a fixed-delay timer re-arms and a single timer retires (`TimerScheduler.shouldDeliver`).
    @usableFromInline
    func admitsTimerMessage() -> Bool {
        guard let mark = takeTimerMark() else { return true }
        guard case .running = lifecycle, let timers = context.timerSchedulerIfCreated else { return false }
        return timers.shouldDeliver(key: mark.key, generation: mark.generation)
    }

    /// Whether the message just dequeued is a timer's (its mark is then taken).
    @usableFromInline
    func takesTimerMark() -> Bool {
        takeTimerMark() != nil
    }

    /// The timer mark of the message just dequeued, if it is a timer's message.
    func takeTimerMark() -> TimerMarks.Mark? {
        guard let marks = context.timerSchedulerIfCreated?.marks else { return nil }
        // `dequeue` has moved past the message: its position is one before the head.
        return marks.take(at: mailboxHead.headIndex &- 1) {
            flags.clearTimerMessageQueued()
        }
    }

    // MARK: Handling messages

    @inlinable
    final func handle(_ message: Message) {
        do {
            let next: Behavior<Message>
            if let messageHandler {
                next = try messageHandler(message)
            } else if let receiveHandler {
                next = try receiveHandler(context, message)
            } else {
                // `install` caches the handler of every `receive`/`receiveMessage` behavior.
                switch behavior.kind {
                case let .object(object):
                    next = try object.receive(message)
                case .empty:
                    next = .unhandled
                case .ignore:
                    return
                case .receive, .receiveMessage, .same, .unhandled, .stopped, .setup, .supervised:
                    // Unreachable (`become` installs only canonical behaviors and caches their
                    // handlers); should it ever happen, it is this actor's failure, not the
                    // process's.
                    throw nonCanonicalBehavior()
                }
            }
            if flags.hasUsageError { try throwUsageError() }
            if case .same = next.kind { return }
            try become(next, unhandled: message)
        } catch {
            fail(error, message: message)
        }
    }

    /// Throws the usage error the handler that just returned recorded (see
    /// `ActorContext.recordUsageError`), clearing it.
    @usableFromInline
    func throwUsageError() throws {
        flags.clearUsageError()
        if let error = context.takeUsageError() { throw error }
    }

    /// The failure for a behavior `handle` cannot run (out of line: off the hot path).
    @usableFromInline
    @inline(never)
    func nonCanonicalBehavior() -> ActorSystemError {
        .invalidBehavior("\(address.path) is running with the non-canonical behavior \(behavior)")
    }

    /// Switches to `next`, the result of handling a message or event.
    @inlinable
    func become(_ next: Behavior<Message>, unhandled message: (any Sendable)?) throws {
        assertInMailboxRun()
        switch next.kind {
        case .same:
            return
        case .unhandled:
            if let message {
                system.publish(.unhandled(address, message: message))
            }
        case let .stopped(postStop):
            postStopAction = postStop
            beginStopping(failure: nil)
        case .setup, .supervised:
            // What `setup` returns may itself be `.stopped` (never `.same`, `.unhandled`, a
            // `setup` or a rule: `canonicalize` throws or unwraps those): switch to it as to
            // any other result.
            try become(try canonicalize(next, registersRules: false), unhandled: message)
        case .empty, .ignore, .receive, .receiveMessage, .object:
            install(next)
        }
    }

    @inlinable
    func install(_ newBehavior: Behavior<Message>) {
        assertInMailboxRun()
        behavior = newBehavior
        switch newBehavior.kind {
        case let .receive(handler, _):
            receiveHandler = handler
            messageHandler = nil
        case let .receiveMessage(handler, _):
            receiveHandler = nil
            messageHandler = handler
        default:
            receiveHandler = nil
            messageHandler = nil
        }
    }

    /// Installs `behavior` before stashed messages are replayed to it.
    func becomeFromUnstash(_ behavior: Behavior<Message>) throws {
        try become(behavior, unhandled: nil)
    }

    /// Runs `setup` behaviors until a behavior that handles messages (or `stopped`) is reached,
    /// registering the `supervise` rules met on the way: appended to the rules in force when
    /// the actor starts or restarts (`registersRules`), replacing the rules added after those
    /// otherwise.
    @inlinable
    func canonicalize(_ behavior: Behavior<Message>, registersRules: Bool) throws -> Behavior<Message> {
        var current = behavior
        var isFirstRule = true
        while true {
            if case let .setup(factory) = current.kind {
                current = try factory(context)
                if flags.hasUsageError { try throwUsageError() }
            } else if case let .supervised(rule) = current.kind {
                current = register(rule, registersRules: registersRules, isFirstRule: isFirstRule)
                isFirstRule = false
            } else {
                break
            }
        }
        switch current.kind {
        case .same, .unhandled:
            throw resultOnlyStartBehavior(current)
        default:
            return current
        }
    }

    /// `canonicalize`'s step for a `supervise` rule: records it, returns what it wraps.
    @usableFromInline
    func register(_ rule: SupervisionRule<Message>, registersRules: Bool, isFirstRule: Bool) -> Behavior<Message> {
        let state = supervisionState()
        if !registersRules, isFirstRule {
            state.rules.removeSubrange(state.baseRuleCount...)
        }
        state.rules.append(.init(rule: rule))
        if registersRules { state.baseRuleCount = state.rules.count }
        return rule.behavior
    }

    /// A failure of this actor's start (or of the switch to `behavior`), handed to its
    /// supervision: never a trap that would take the process down.
    @usableFromInline
    @inline(never)
    func resultOnlyStartBehavior(_ behavior: Behavior<Message>) -> ActorSystemError {
        .invalidStartBehavior("\(behavior)", actor: address.path, returnedBySetup: true)
    }

    /// Delivers a lifecycle event to the behavior; returns whether it was handled.
    @inlinable
    @discardableResult
    func deliver(_ event: LifecycleEvent) throws -> Bool {
        let next: Behavior<Message>
        switch behavior.kind {
        case let .receive(_, lifecycle?), let .receiveMessage(_, lifecycle?):
            next = try lifecycle.handle(context, event)
        case let .object(object):
            next = try object.receiveLifecycle(event)
        default:
            return false
        }
        if flags.hasUsageError { try throwUsageError() }
        if case .unhandled = next.kind { return false }
        try become(next, unhandled: nil)
        return true
    }
}
