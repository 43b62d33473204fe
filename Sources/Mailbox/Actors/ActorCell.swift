#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// An actor: its mailbox, its activation word and its run loop.
///
/// ## Activation
/// `pending` counts messages (user and system) enqueued and not yet handled. A sender enqueues
/// first, then increments `pending`; the sender that moves it from 0 to 1 schedules one
/// *mailbox run*. A run handles system messages first, then up to *run length* user messages,
/// then subtracts what it handled: if anything remains it schedules the next run, otherwise the
/// actor is idle. There is never more than one run scheduled or running, so the state below
/// "consumer only" needs no lock: each run hands it to the next through the acquire/release
/// read-modify-writes on `pending` and the scheduler's own queue.
///
/// A sender that enqueues after the actor terminated (racing its final drain) still counts in
/// `pending`, so a run is scheduled and turns the message into a dead letter: nothing accepted
/// is silently lost.
@usableFromInline
// Shared state is atomic or immutable; the rest is touched only inside the single mailbox run.
final class ActorCell<Message: Sendable>: ActorRefTarget<Message>, @unchecked Sendable {
    // MARK: Shared with senders (atomics and immutable values)

    /// Enqueued and not yet handled messages, user and system; the activation word.
    @usableFromInline
    let pending = Atomic<Int>(0)
    /// User messages: the producers' half of the mailbox queue (the consumer's half is
    /// `mailboxHead`, at the end of the object, so that senders and the run do not share cache
    /// lines).
    /// Timer messages travel as system messages, tagged with their timer's generation, so
    /// that a cancelled timer's message can be recognised and skipped.
    @usableFromInline
    let mailboxTail = MPSCQueueTail<Message>()
    /// System messages, newest first: a lock-free stack drained (and reversed) by the run.
    @usableFromInline
    let systemMessages = Atomic<UnsafeMutableRawPointer?>(nil)
    /// User messages queued; maintained only for bounded mailboxes.
    @usableFromInline
    let userCount = Atomic<Int>(0)

    /// `Int.max` when unbounded.
    @usableFromInline
    let capacity: Int
    /// Senders suspended in `send(_:)` waiting for room (`backpressure` only).
    @usableFromInline
    let roomWaiters: RoomWaiters?
    /// The pool the actor runs on, if any: it queues the cell itself, no closure per run.
    /// Unowned: `scheduler` holds the same pool (loading a strong reference would retain and
    /// release it on every activation).
    unowned(unsafe) let pool: PoolScheduler?
    /// The scheduler the actor runs on (the pool, if `pool` is set).
    let scheduler: any Scheduler
    /// The mailbox run, specialised for `Message` where the actor was spawned (see
    /// `ActorSystem.spawn`): a run through the pool's virtual `run()` would otherwise execute
    /// unspecialised generic code that looks up type metadata on every message.
    let runLoop: (ActorCell<Message>) -> Bool

    /// Timers and ask time-outs run on this scheduler's clock: the actor's own scheduler when
    /// it tells time, otherwise the system's timer scheduler.
    var dateScheduler: any DateScheduler {
        // The pool tells time: no protocol-conformance look-up for the common case.
        if let pool { return pool }
        return (scheduler as? any DateScheduler) ?? system.timerScheduler
    }

    override var askScheduler: any DateScheduler { dateScheduler }

    // MARK: Consumer only (touched only inside a mailbox run)
    //
    // Exclusivity is not checked at run time for these: one mailbox run at a time is the
    // invariant that makes every access exclusive (and checking costs ~10% of a message).

    /// The current behavior. Assign through `install(_:)`, which keeps `receiveHandler` in step.
    @usableFromInline
    @exclusivity(unchecked)
    var behavior: Behavior<Message>

    // MARK: Small immutable fields (shared), in the behavior's tail padding
    //
    // Declared here, after the 33-byte behavior, they fill the bytes it leaves before the next
    // word instead of padding to words of their own (16 bytes less per actor).

    /// Flags shared with senders, in one byte: `terminatedFlag` (set once, when the actor has
    /// terminated; senders then dead-letter directly) and `parkedFlag` (see `park()`).
    @usableFromInline
    let flags = Atomic<UInt8>(0)
    @inlinable
    static var terminatedFlag: UInt8 { 1 }
    @inlinable
    static var parkedFlag: UInt8 { 2 }

    /// Whether the actor has terminated.
    @inlinable
    final func isTerminated() -> Bool {
        flags.load(ordering: .acquiring) & Self.terminatedFlag != 0
    }
    @usableFromInline
    let overflow: OverflowPolicy
    /// Whether the scheduled (or running) mailbox run holds a retain of the cell. Handed from
    /// whoever schedules a run to that run, like the rest of the consumer's state (see
    /// `scheduleRun`).
    @usableFromInline
    @exclusivity(unchecked)
    var runIsRetained = false
    /// User messages per mailbox run.
    @usableFromInline
    let runLength: Int32

    // MARK: Consumer only, continued

    /// The current behavior's message handler when it is a `receive` behavior: read on every
    /// message without copying the behavior enum.
    @usableFromInline
    @exclusivity(unchecked)
    var receiveHandler: ((ActorContext<Message>, Message) throws -> Behavior<Message>)?
    /// The same, for a `receiveMessage` behavior (at most one of the two is set).
    @usableFromInline
    @exclusivity(unchecked)
    var messageHandler: ((Message) throws -> Behavior<Message>)?
    @usableFromInline
    @exclusivity(unchecked)
    var lifecycle: Lifecycle = .new
    /// Created in `init`, before the cell is published (implicitly unwrapped only because it
    /// needs `self`).
    @usableFromInline
    @exclusivity(unchecked)
    var context: ActorContext<Message>!
    /// The parent, told `childTerminated` when this actor terminates. Cleared then.
    var parent: AnyTarget?
    /// Run after post-stop, set by `Behavior.stopped(postStop:)`.
    var postStopAction: (() -> Void)?
    /// Rules, restart counts and a restart in progress; `nil` for an unsupervised actor.
    var supervision: SupervisionState<Message>?
    /// The consumer's half of the mailbox queue (see `mailboxTail`). Last, as far as the object
    /// allows from the producers' half near its start: in fan-in, senders keep writing that
    /// half while the run reads this one.
    @usableFromInline
    @exclusivity(unchecked)
    var mailboxHead = MPSCQueueHead<Message>()

    @usableFromInline
    enum Lifecycle {
        case new
        case running
        /// Between a failure and the rebuilt state (see `SupervisionState.pending`): user
        /// messages wait in the mailbox (the run parks), or during a back-off are stashed for
        /// the new state.
        case restarting
        /// The parent hears of `failure` as `childFailed` if `supervision.isEscalating`.
        case stopping(failure: (any Error)?)
        case terminated
    }

    init(
        system: ActorSystem,
        address: ActorAddress,
        parent: AnyTarget,
        behavior: sending Behavior<Message>,
        props: Props,
        runLoop: @escaping (ActorCell<Message>) -> Bool
    ) {
        self.runLoop = runLoop
        switch props.mailbox {
        case .unbounded:
            capacity = .max
            overflow = .dropNewest
        case let .bounded(capacity, overflow):
            precondition(capacity > 0, "a bounded mailbox needs a positive capacity, not \(capacity)")
            self.capacity = capacity
            self.overflow = overflow
        }
        roomWaiters = overflow == .backpressure && capacity != .max ? RoomWaiters() : nil
        let scheduler = props.scheduler ?? system.configuration.scheduler ?? system.pool!
        self.scheduler = scheduler
        pool = scheduler as? PoolScheduler
        runLength = Int32(clamping: props.runLength ?? system.configuration.runLength)
        self.behavior = behavior
        self.parent = parent
        super.init(address: address, system: system, isActorCell: true, parent: parent)
        // Before the cell is published: a watch that arrives before `.start` has somewhere to go.
        context = ActorContext(cell: self, stashCapacity: props.stashCapacity)
    }

    deinit {
        mailboxHead.releaseAll(mailboxTail)
        var node = systemMessages.load(ordering: .acquiring)
        while let current = node {
            let box = Unmanaged<SystemMessageNode>.fromOpaque(current).takeRetainedValue()
            node = box.next
        }
    }

    // MARK: Sending

    @usableFromInline
    override func tell(_ message: Message) -> TellResult {
        tellCell(message)
    }

    /// `tell`, inlinable so that a sender's module runs it specialised for `Message`.
    @inlinable
    final func tellCell(_ message: Message) -> TellResult {
        if isTerminated() {
            return refuseTerminated(message)
        }
        if capacity != .max, let refused = reserveRoom(for: message) {
            return refused
        }
        mailboxTail.enqueue(message)
        activate()
        return .enqueued
    }

    @usableFromInline
    func refuseTerminated(_ message: Message) -> TellResult {
        system.publishDeadLetter(message, to: address, reason: .recipientTerminated)
        return .dropped(.recipientTerminated)
    }

    /// Counts a user message against the capacity, applying the overflow policy when full.
    /// Returns the result to give the sender if the message is refused.
    @usableFromInline
    func reserveRoom(for message: Message) -> TellResult? {
        let count = userCount.wrappingAdd(1, ordering: .sequentiallyConsistent).newValue
        // `dropOldest` accepts; the consumer drops the oldest while the count exceeds capacity.
        guard count > capacity, overflow != .dropOldest else { return nil }
        userCount.wrappingSubtract(1, ordering: .sequentiallyConsistent)
        system.publishDeadLetter(message, to: address, reason: .mailboxFull(overflow))
        return .dropped(.mailboxFull(overflow))
    }

    override func send(_ message: Message) async throws {
        guard let roomWaiters else {
            if case let .dropped(reason) = tell(message) {
                throw SendError(recipient: address, reason: reason)
            }
            return
        }
        while true {
            if isTerminated() {
                system.publishDeadLetter(message, to: address, reason: .recipientTerminated)
                throw SendError(recipient: address, reason: .recipientTerminated)
            }
            if userCount.wrappingAdd(1, ordering: .sequentiallyConsistent).newValue <= capacity {
                mailboxTail.enqueue(message)
                activate()
                return
            }
            userCount.wrappingSubtract(1, ordering: .sequentiallyConsistent)
            try await roomWaiters.wait { [self] in
                userCount.load(ordering: .sequentiallyConsistent) < capacity || flags.load(ordering: .sequentiallyConsistent) & Self.terminatedFlag != 0
            }
        }
    }

    /// Delivers a timer's message (from the timer's scheduler thread) as a system message, so
    /// it is never dropped by a full mailbox and can be discarded if its timer was cancelled.
    func tellTimer(key: TimerKey, generation: UInt64, message: Message) {
        if isTerminated() { return }
        sendSystem(.timer(key: key, generation: generation, message: message))
    }

    override func sendSystem(_ message: SystemMessage) {
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
        if flags.load(ordering: .sequentiallyConsistent) & Self.parkedFlag != 0, unpark() {
            scheduleRun()
        }
    }

    /// Clears the parked flag; whether this call cleared it (and so must schedule the run).
    func unpark() -> Bool {
        flags.bitwiseAnd(~Self.parkedFlag, ordering: .sequentiallyConsistent).oldValue & Self.parkedFlag != 0
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
        if let pool {
            if isTerminated() {
                runIsRetained = true
                pool.enqueue(Unmanaged.passRetained(self))
            } else {
                runIsRetained = false
                pool.enqueue(Unmanaged.passUnretained(self))
            }
            return
        }
        // Elsewhere the scheduler's own reference (the trampoline's retain, the closure's
        // capture) keeps the cell alive through the run.
        runIsRetained = true
        if ObjectIdentifier(type(of: scheduler)) == ObjectIdentifier(ImmediateScheduler.self) {
            // On the sending thread, trampolined: no recursion, FIFO kept.
            Trampoline.run(Unmanaged.passRetained(self))
        } else {
            scheduler.schedule { self.run() }
        }
    }

    // MARK: The mailbox run

    /// One mailbox run, from a scheduler that keeps the cell alive through it. Only ever one
    /// at a time per actor (see the type's documentation).
    override func run() {
        _ = runLoop(self)
    }

    /// One mailbox run from a pool worker; returns whether the worker must give back a retain.
    override func runFromPool() -> Bool {
        runLoop(self)
    }

    /// Whether a queued run of this cell holds a retain (read only while the run is queued).
    override var isRetainedByQueue: Bool { runIsRetained }

    /// The body of a mailbox run: system messages, then up to `runLength` user messages, then
    /// release the activation (or schedule the next run if messages remain).
    ///
    /// - Returns: Whether the run held a retain of the cell, to be given back by the pool
    ///   worker that ran it. Nothing here touches the cell after its activation is released:
    ///   from then on another run may terminate it, and its parent may free it.
    @inlinable
    final func runMailbox() -> Bool {
        var handled = 0
        if case .terminated = lifecycle {
            handled = drainAfterTermination()
        } else {
            if systemMessages.load(ordering: .relaxed) != nil {
                handled = runSystemMessages()
            }
            var userHandled = 0
            while userHandled < runLength, isAcceptingUserMessages {
                if capacity != .max, overflow == .dropOldest, userCount.load(ordering: .relaxed) > capacity {
                    handled += dropOldestOverflow()
                }
                guard let message = mailboxHead.dequeue(mailboxTail) else { break }
                handled += 1
                userHandled += 1
                if capacity != .max { freeRoom() }
                if case .running = lifecycle {
                    handle(message)
                } else {
                    handleWhileNotRunning(message)
                }
                if systemMessages.load(ordering: .relaxed) != nil {
                    handled += runSystemMessages()
                }
            }
            if case .terminated = lifecycle {
                handled += drainAfterTermination()
            }
        }
        // Read before the activation is released: `scheduleRun` sets it for the next run.
        let wasRetained = runIsRetained
        let parks = isParkingForRestart
        if pending.wrappingSubtract(handled, ordering: .acquiringAndReleasing).newValue > 0 {
            if parks {
                park()
            } else {
                scheduleRun()
            }
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
        flags.bitwiseOr(Self.parkedFlag, ordering: .sequentiallyConsistent)
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
            system.publishDeadLetter(message, to: address, reason: .recipientTerminated)
        }
    }

    @usableFromInline
    func freeRoom() {
        // Sequentially consistent with the waiter's register-then-check (`RoomWaiters.wait`):
        // either this sees the waiter or the waiter sees the room (store-buffer pattern).
        userCount.wrappingSubtract(1, ordering: .sequentiallyConsistent)
        roomWaiters?.resumeOne()
    }

    /// Drops the oldest messages while more than `capacity` are queued (`dropOldest`). Only
    /// the consumer dequeues, so the count it compares is never ahead of the queue for long:
    /// a sender counts before it enqueues, and `dequeue` waits for a counted, claimed slot.
    @usableFromInline
    func dropOldestOverflow() -> Int {
        var dropped = 0
        while userCount.load(ordering: .relaxed) > capacity, let message = mailboxHead.dequeue(mailboxTail) {
            userCount.wrappingSubtract(1, ordering: .relaxed)
            system.publishDeadLetter(message, to: address, reason: .mailboxFull(.dropOldest))
            dropped += 1
        }
        return dropped
    }

    /// Handles every queued system message, oldest first; returns how many.
    @usableFromInline
    func runSystemMessages() -> Int {
        var handled = 0
        while let top = systemMessages.exchange(nil, ordering: .acquiring) {
            // The stack is newest first: reverse its links in place (no array), then handle
            // oldest first, releasing each node after its message.
            var oldest: UnsafeMutableRawPointer?
            var node: UnsafeMutableRawPointer? = top
            while let current = node {
                let box = Unmanaged<SystemMessageNode>.fromOpaque(current).takeUnretainedValue()
                node = box.next
                box.next = oldest
                oldest = current
            }
            node = oldest
            while let current = node {
                let box = Unmanaged<SystemMessageNode>.fromOpaque(current).takeRetainedValue()
                node = box.next
                handleSystemMessage(box.message)
                handled += 1
            }
        }
        return handled
    }

    /// After termination: every user message becomes a dead letter, every system message gets
    /// the answer a terminated actor gives.
    @usableFromInline
    func drainAfterTermination() -> Int {
        var handled = runSystemMessages()
        while let message = mailboxHead.dequeue(mailboxTail) {
            if capacity != .max { freeRoom() }
            system.publishDeadLetter(message, to: address, reason: .recipientTerminated)
            handled += 1
        }
        return handled
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
                    preconditionFailure("actor \(address.path) is running with non-canonical or uncached behavior \(behavior)")
                }
            }
            if case .same = next.kind { return }
            try become(next, unhandled: message)
        } catch {
            fail(error, message: message)
        }
    }

    /// Switches to `next`, the result of handling a message or event.
    @usableFromInline
    func become(_ next: Behavior<Message>, unhandled message: (any Sendable)?) throws {
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
            install(try canonicalize(next, registersRules: false))
        case .empty, .ignore, .receive, .receiveMessage, .object:
            install(next)
        }
    }

    func install(_ newBehavior: Behavior<Message>) {
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
    func canonicalize(_ behavior: Behavior<Message>, registersRules: Bool) throws -> Behavior<Message> {
        var current = behavior
        var isFirstRule = true
        while true {
            if case let .setup(factory) = current.kind {
                current = try factory(context)
            } else if case let .supervised(rule) = current.kind {
                let state = supervisionState()
                if !registersRules, isFirstRule {
                    state.rules.removeSubrange(state.baseRuleCount...)
                }
                isFirstRule = false
                state.rules.append(.init(rule: rule))
                if registersRules { state.baseRuleCount = state.rules.count }
                current = rule.behavior
            } else {
                break
            }
        }
        switch current.kind {
        case .same, .unhandled:
            preconditionFailure("setup of \(address.path) returned \(current), which is only valid as the result of handling a message")
        default:
            return current
        }
    }

    /// Delivers a lifecycle event to the behavior; returns whether it was handled.
    @discardableResult
    func deliver(_ event: LifecycleEvent) throws -> Bool {
        let next: Behavior<Message>
        switch behavior.kind {
        case let .receive(_, lifecycle?), let .receiveMessage(_, lifecycle?):
            next = try lifecycle(context, event)
        case let .object(object):
            next = try object.receiveLifecycle(event)
        default:
            return false
        }
        if case .unhandled = next.kind { return false }
        try become(next, unhandled: nil)
        return true
    }

    func handleSystemMessage(_ message: SystemMessage) {
        switch message {
        case .start:
            guard case .new = lifecycle else { return }
            lifecycle = .running
            prepareGuardianSupervision()
            installInitial(behavior)
        case .stop:
            switch lifecycle {
            case .new:
                lifecycle = .running
                beginStopping(failure: nil)
            case .running, .restarting:
                beginStopping(failure: nil)
            case .stopping, .terminated:
                break
            }
        case let .watch(watcher):
            if case .terminated = lifecycle {
                watcher.sendSystem(.terminated(self, failure: nil))
            } else if watcher !== self {
                context?.watchers[ObjectIdentifier(watcher)] = watcher
            }
        case let .unwatch(watcher):
            _ = context?.watchers.removeValue(forKey: ObjectIdentifier(watcher))
        case let .terminated(ref, failure):
            if case .restarting = lifecycle, context.watching[ObjectIdentifier(ref)] != nil {
                // For the new state, once it is built.
                supervisionState().deferred.append(message)
                return
            }
            guard case .running = lifecycle, let context,
                  let watch = context.watching.removeValue(forKey: ObjectIdentifier(ref)) else { return }
            if let customMessage = watch.message {
                handle(customMessage)
                return
            }
            let isChild = context.children.contains(ref)
            if isChild {
                // The child is gone; its `childTerminated` will find nothing left to remove.
                context.children.remove(ref)
            }
            let event: LifecycleEvent = if let failure, isChild {
                .childFailed(AnyActorRef(ref), error: failure)
            } else {
                .terminated(AnyActorRef(ref))
            }
            do {
                if try !deliver(event) {
                    throw DeathPactError(terminated: AnyActorRef(ref))
                }
            } catch {
                fail(error, message: nil)
            }
        case let .timer(key, generation, message):
            guard case .running = lifecycle, context.timers.shouldDeliver(key: key, generation: generation) else { return }
            handle(message as! Message)
        case let .childTerminated(child, failure, escalated):
            guard let context else { return }
            context.children.remove(child)
            switch lifecycle {
            case .running:
                childTerminatedWhileRunning(child, failure: failure, escalated: escalated)
            case .stopping:
                if context.children.isEmpty {
                    finishTermination()
                } else if managingBehavior != nil, let youngest = context.children.youngest {
                    // A `Supervisor` stops its children one at a time, newest first.
                    youngest.sendSystem(.stop)
                }
            case .restarting:
                childTerminatedWhileRestarting()
            case .new, .terminated:
                break
            }
        case let .backoffElapsed(generation):
            backoffElapsed(generation: generation)
        case let .childFailed(child, error):
            managedChildFailed(child, error: error)
        case .restartStop:
            restartStopFromParent()
        case .restartStart:
            restartStartFromParent()
        case .restartNow:
            restartStopFromParent(thenStart: true)
        case let .restartStepDone(child):
            managedChildStepDone(child)
        }
    }

    // MARK: Stopping

    /// Starts stopping: cancel timers, stop children (newest first); terminate once they have
    /// all terminated. With `escalate`, the parent hears of `failure` as `childFailed`.
    func beginStopping(failure: (any Error)?, escalate: Bool = false) {
        switch lifecycle {
        case .new, .running:
            break
        case .restarting:
            cancelPendingRestart()
        case .stopping, .terminated:
            return
        }
        if escalate { supervisionState().isEscalating = true }
        lifecycle = .stopping(failure: failure)
        context.cancelAllTimers()
        if context.children.isEmpty {
            finishTermination()
        } else if managingBehavior != nil, let youngest = context.children.youngest {
            // A `Supervisor` stops its children one at a time, newest first, as OTP does.
            youngest.sendSystem(.stop)
        } else {
            // Newest first, as an OTP supervisor stops its children: deterministic on a
            // TestScheduler, and dependants stop before what they depend on.
            for child in context.children.inStartOrder.reversed() {
                child.sendSystem(.stop)
            }
        }
    }

    private func finishTermination() {
        guard case let .stopping(failure) = lifecycle else { return }
        let escalate = supervision?.isEscalating ?? false
        if !runIsRetained {
            // From the first message this sends on (post-stop handlers, `terminated` to a
            // watching parent, `childTerminated`), the parent may drop the last reference while
            // this run still has work to do: keep the cell alive until the run returns (the
            // pool worker gives this retain back; see `scheduleRun`).
            _ = Unmanaged.passUnretained(self).retain()
            runIsRetained = true
        }
        do {
            try deliver(.postStop)
        } catch {
            system.log("actor \(address.path) threw in post-stop: \(error)")
        }
        postStopAction?()
        postStopAction = nil
        lifecycle = .terminated
        flags.bitwiseOr(Self.terminatedFlag, ordering: .releasing)
        roomWaiters?.resumeAll()

        let parent = self.parent
        for watcher in context.watchers.values where !(escalate && watcher === parent) {
            watcher.sendSystem(.terminated(self, failure: failure))
        }
        deadLetterRestartBuffer()
        for watched in context.watching.values {
            watched.target.sendSystem(.unwatch(self))
        }
        context.releaseAfterTermination()
        install(.stopped)
        system.publish(.stopped(address))
        self.parent = nil
        parent?.sendSystem(.childTerminated(self, failure: failure, escalated: escalate))
    }
}

/// One system message on a cell's lock-free stack.
final class SystemMessageNode {
    let message: SystemMessage
    var next: UnsafeMutableRawPointer?

    init(_ message: SystemMessage) {
        self.message = message
    }
}

/// Senders suspended in `send(_:)` on a full back-pressure mailbox, resumed one per freed slot.
@usableFromInline
final class RoomWaiters: Sendable {
    private struct Waiter {
        let id: UInt64
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var waiters: [Waiter] = []
        var nextID: UInt64 = 0
    }

    /// Protected by its lock.
    private let state = LockedValueBox(State())
    /// Mirrors the number of waiters, so the consumer skips the lock when nobody waits.
    private let count = Atomic<Int>(0)

    /// Suspends until resumed (a slot was freed, or the actor terminated), unless
    /// `hasRoom` is already true after registering. Throws `CancellationError` on cancellation.
    func wait(unless hasRoom: @escaping @Sendable () -> Bool) async throws {
        let id = state.withLockedValue { state -> UInt64 in
            defer { state.nextID += 1 }
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                state.withLockedValue { $0.waiters.append(Waiter(id: id, continuation: continuation)) }
                count.wrappingAdd(1, ordering: .sequentiallyConsistent)
                // Room may have been freed between the failed reservation and registering, and
                // a cancellation that came before registering found nothing to resume.
                if hasRoom() {
                    resume(id: id, with: .success(()))
                } else if Task.isCancelled {
                    resume(id: id, with: .failure(CancellationError()))
                }
            }
        } onCancel: {
            resume(id: id, with: .failure(CancellationError()))
        }
    }

    private func resume(id: UInt64, with result: Result<Void, any Error>) {
        let waiter: Waiter? = state.withLockedValue { state in
            guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
            return state.waiters.remove(at: index)
        }
        if let waiter {
            count.wrappingSubtract(1, ordering: .relaxed)
            waiter.continuation.resume(with: result)
        }
    }

    func resumeOne() {
        guard count.load(ordering: .sequentiallyConsistent) > 0 else { return }
        let waiter: Waiter? = state.withLockedValue { state in
            state.waiters.isEmpty ? nil : state.waiters.removeFirst()
        }
        if let waiter {
            count.wrappingSubtract(1, ordering: .relaxed)
            waiter.continuation.resume()
        }
    }

    func resumeAll() {
        let waiters = state.withLockedValue { state in
            defer { state.waiters = [] }
            return state.waiters
        }
        count.wrappingSubtract(waiters.count, ordering: .relaxed)
        for waiter in waiters { waiter.continuation.resume() }
    }
}

/// Runs mailbox runs scheduled on the `ImmediateScheduler` on the sending thread without
/// recursion: a run scheduled while another is running on the same thread is queued and runs
/// after it, in FIFO order.
enum Trampoline {
    final class Queue {
        var jobs: [Unmanaged<PoolJob>] = []
        var isDraining = false
    }

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        let error = pthread_key_create(&key) { pointer in
            if let pointer { Unmanaged<Queue>.fromOpaque(pointer).release() }
        }
        precondition(error == 0, "pthread_key_create failed with error \(error)")
        return key
    }()

    private static var queue: Queue {
        if let pointer = pthread_getspecific(key) {
            return Unmanaged<Queue>.fromOpaque(pointer).takeUnretainedValue()
        }
        let queue = Queue()
        pthread_setspecific(key, Unmanaged.passRetained(queue).toOpaque())
        return queue
    }

    /// Runs `job` now, or after the run in progress on this thread; consumes the retain.
    static func run(_ job: Unmanaged<PoolJob>) {
        let queue = self.queue
        queue.jobs.append(job)
        guard !queue.isDraining else { return }
        queue.isDraining = true
        var index = 0
        while index < queue.jobs.count {
            let next = queue.jobs[index]
            index += 1
            next.takeUnretainedValue().run()
            next.release()
        }
        queue.jobs.removeAll(keepingCapacity: true)
        queue.isDraining = false
    }
}
