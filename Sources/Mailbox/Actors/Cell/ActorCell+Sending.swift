import Synchronization

/// Sending: enqueue, count against the capacity, activate, schedule the mailbox run. Runs on
/// the senders' threads; touches only the shared (atomic or immutable) half of the cell, and
/// `runIsRetained`, which the sender that activates the idle actor owns until the run starts.
extension ActorCell {
    /// `tell`, inlinable so that a sender's module runs it specialised for `Message`.
    @inlinable
    final func tellCell(_ message: Message) -> TellResult {
        if isTerminated() {
            return refuseTerminated(message)
        }
        if let bounded, let refused = reserveRoom(in: bounded, for: message) {
            return refused
        }
        mailboxTail.enqueue(message)
        activate()
        return .enqueued
    }

    @usableFromInline
    func refuseTerminated(_ message: Message) -> TellResult {
        system.publishUndelivered(message, to: address, reason: .recipientTerminated)
        return .dropped(.recipientTerminated)
    }

    /// Counts a user message against the capacity, applying the overflow policy when full.
    /// Returns the result to give the sender if the message is refused.
    @usableFromInline
    func reserveRoom(in bounded: CellOptions, for message: Message) -> TellResult? {
        let count = bounded.userCount.wrappingAdd(1, ordering: .sequentiallyConsistent).newValue
        // `dropOldest` accepts; the consumer drops the oldest while the count exceeds capacity.
        guard count > bounded.capacity, bounded.overflow != .dropOldest else { return nil }
        bounded.userCount.wrappingSubtract(1, ordering: .sequentiallyConsistent)
        system.publishUndelivered(message, to: address, reason: .mailboxFull(bounded.overflow))
        return .dropped(.mailboxFull(bounded.overflow))
    }

    /// `send(_:)`: waits for room in a back-pressure mailbox; otherwise `tell`, throwing what it
    /// dropped.
    func sendWaitingForRoom(_ message: Message) async throws {
        guard let bounded, let roomWaiters = bounded.roomWaiters else {
            if case let .dropped(reason) = tell(message) {
                throw SendError(recipient: address, reason: reason)
            }
            return
        }
        while true {
            if isTerminated() {
                system.publishUndelivered(message, to: address, reason: .recipientTerminated)
                throw SendError(recipient: address, reason: .recipientTerminated)
            }
            if bounded.userCount.wrappingAdd(1, ordering: .sequentiallyConsistent).newValue <= bounded.capacity {
                mailboxTail.enqueue(message)
                activate()
                return
            }
            bounded.userCount.wrappingSubtract(1, ordering: .sequentiallyConsistent)
            do {
                try await roomWaiters.wait(for: message) { [self] in
                    bounded.userCount.load(ordering: .sequentiallyConsistent) < bounded.capacity || flags.isTerminated
                }
            } catch is RoomWaiters.RecipientTerminated {
                // Published as a dead letter when the actor terminated.
                throw SendError(recipient: address, reason: .recipientTerminated)
            }
        }
    }

    /// Delivers a timer's message (from the timer's scheduler thread) into the mailbox, in
    /// order with the messages already queued, marked so that the run can discard it if its
    /// timer was cancelled or restarted meanwhile. It is counted against a bounded mailbox's
    /// capacity but never refused by it (a timer's message is not dropped on arrival; under
    /// `dropOldest` it ages like any other message).
    func tellTimer(key: TimerKey, generation: UInt64, message: Message, marks: TimerMarks) {
        if isTerminated() { return }
        bounded?.userCount.wrappingAdd(1, ordering: .sequentiallyConsistent)
        marks.record(key: key, generation: generation) {
            flags.setTimerMessageQueued()
            return mailboxTail.enqueue(message)
        }
        activate()
    }

    /// Pushes a system message on the lock-free stack and activates the actor (waking a parked
    /// run).
    func pushSystemMessage(_ message: SystemMessage) {
        let node = Unmanaged.passRetained(SystemMessageNode(message)).toOpaque()
        var head = systemMessages.load(ordering: .relaxed)
        while true {
            Unmanaged<SystemMessageNode>.fromOpaque(node).takeUnretainedValue().next = head
            let (exchanged, original) = systemMessages.compareExchange(
                expected: head, desired: node, successOrdering: .sequentiallyConsistent, failureOrdering: .relaxed)
            if exchanged { break }
            head = original
        }
        activate()
        // A run parked with user messages queued (see `park()`): this message wakes it.
        if flags.isParked, unpark() {
            scheduleRun()
        }
    }

    /// Clears the parked flag; whether this call cleared it (and so must schedule the run).
    func unpark() -> Bool {
        flags.clearParked()
    }

    @inlinable
    final func activate() {
        if pending.wrappingAdd(1, ordering: .acquiringAndReleasing).oldValue == 0 {
            scheduleRun()
        }
    }

    /// Schedules the next mailbox run. Called by the sender whose message activated the idle
    /// actor, or by the run itself when messages remain; either way no run is scheduled or
    /// running but this one, so `runIsRetained` is ours to set.
    ///
    /// On a pool, a run of an actor that has not terminated is queued *without* a retain: the
    /// actor's parent keeps it alive (a child stays in its parent's registry until the parent
    /// hears of its termination), and only a run of the actor itself can terminate it. The run
    /// that does takes a retain before anything that could make the parent drop the actor
    /// (`finishTermination`), and runs
    /// after termination are queued with one. Saves a retain/release pair per activation.
    @usableFromInline
    func scheduleRun() {
        if let poolReference {
            let job: Unmanaged<PoolJob>
            if isTerminated() {
                runIsRetained = true
                job = Unmanaged.passRetained(self)
            } else {
                runIsRetained = false
                job = Unmanaged.passUnretained(self)
            }
            poolReference._withUnsafeGuaranteedRef { $0.enqueue(job) }
            return
        }
        // Elsewhere the scheduler's own reference (the trampoline's retain, the closure's
        // capture) keeps the cell alive through the run.
        runIsRetained = true
        if ObjectIdentifier(type(of: scheduler)) == ObjectIdentifier(ImmediateScheduler.self) {
            // On the sending thread, trampolined: no recursion, FIFO kept.
            Trampoline.run(Unmanaged.passRetained(self))
        } else {
            scheduler.schedule { self.runJob() }
        }
    }
}
