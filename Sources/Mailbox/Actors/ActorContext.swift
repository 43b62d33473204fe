/// An actor's view of itself and the runtime, passed to its handlers.
///
/// Use it to spawn and stop children, watch other actors, set timers, stash messages, adapt
/// other message types, and move async work out of the handler (`pipeToSelf`, `ask`).
///
/// A context is a view of its actor, not an object of its own: copying it costs nothing and
/// every copy reaches the same actor and the same state (children, watches, stash, timers).
///
/// Thread-safety: a context belongs to its actor and may be used only inside that actor's
/// handlers (and `setup`), never from another thread or after the handler returned into an
/// escaping closure. Refs (`myself`, children) are `Sendable` and may go anywhere.
public struct ActorContext<Message: Sendable> {
    // A context is used only inside its actor's handlers, while the cell is alive.
    @usableFromInline
    unowned(unsafe) let cell: ActorCell<Message>

    /// A view of `cell`: the context is one word, made for each handler call, and allocates
    /// nothing. Its state lives in the cell's `ContextState`, created on first use.
    @inlinable
    init(cell: ActorCell<Message>) {
        self.cell = cell
    }

    // Every state below is touched only inside the actor's mailbox run (checked in DEBUG builds
    // by `cell.assertInMailboxRun()` in each mutator): one run at a time is what makes it safe.

    /// The state of children, watches, stash, timers and adapters, created on first use.
    @usableFromInline
    var state: ContextState<Message> { cell.contextState() }

    /// The state if it was ever created (without creating it).
    @inlinable
    var stateIfCreated: ContextState<Message>? { cell.contextStorage }

    /// The children, in start order. Mailbox run only.
    var children: ChildRegistry {
        get { cell.contextStorage?.children ?? ChildRegistry() }
        nonmutating _modify { yield &state.children }
    }

    /// Whether the actor has children (without creating the state).
    @inlinable
    var hasChildren: Bool { cell.hasChildren }

    /// Messages the stash may hold (`Props.stashCapacity`).
    @inlinable
    var stashCapacity: Int32 { cell.stashCapacity }

    /// The actor's timers; all are cancelled when the actor stops.
    public var timers: TimerScheduler<Message> {
        cell.assertInMailboxRun()
        let state = state
        if let timers = state.timerStorage { return timers }
        let timers = TimerScheduler(cell: cell)
        state.timerStorage = timers
        return timers
    }

    /// The timer scheduler, if `timers` was ever used (without creating it).
    var timerSchedulerIfCreated: TimerScheduler<Message>? { cell.contextStorage?.timerStorage }

    /// Cancels every timer, if any was ever started (without creating the timer scheduler).
    @inlinable
    func cancelAllTimers() {
        cell.contextStorage?.timerStorage?.cancelAll()
    }

    /// The actor's own ref (Akka's `context.self`; `self` is reserved in Swift).
    public var myself: ActorRef<Message> { ActorRef(cell) }

    /// The actor system.
    public var system: ActorSystem { cell.system }

    /// The actor's address.
    public var address: ActorAddress { cell.address }

    /// The actor's name.
    public var name: String { cell.address.name }

    /// The scheduler the actor's timers use: its own scheduler when that tells time, otherwise
    /// the system's timer scheduler.
    public var scheduler: any DateScheduler { cell.dateScheduler }

    // MARK: Children

    /// Spawns a child actor named `name`.
    ///
    /// - Throws: `ActorSystemError` with code `.invalidName` or `.duplicateName` (naming the
    ///   problem and the parent), `.parentNotRunning` if this actor is stopping,
    ///   `.invalidBehavior` or `.invalidProps` as `ActorSystem.spawn(_:name:props:)` explains.
    ///   Thrown from a handler, that is a failure of this actor.
    @inlinable
    @discardableResult
    public func spawn<Child: Sendable>(_ behavior: sending Behavior<Child>, name: String, props: Props = Props()) throws -> ActorRef<Child> {
        try spawnChild(behavior, name: name, props: props) { $0.runMailbox() }
    }

    /// Spawns a child with a generated name (`$a1`, `$a2`, …).
    @inlinable
    @discardableResult
    public func spawnAnonymous<Child: Sendable>(_ behavior: sending Behavior<Child>, props: Props = Props()) throws -> ActorRef<Child> {
        try spawnChild(behavior, name: nil, props: props) { $0.runMailbox() }
    }

    @inlinable
    func spawnChild<Child: Sendable>(
        _ behavior: sending Behavior<Child>,
        name: String?,
        props: Props,
        managed: Bool = false,
        delegatedWindow: SharedRestartWindow? = nil,
        specializedRunMailbox: @escaping (ActorCell<Child>) -> Bool
    ) throws -> ActorRef<Child> {
        let (name, childAddress) = try childAddress(name, props: props)
        try ActorCell<Child>.checkBehavior(behavior, parent: address.path, name: name)
        let child = ActorCell(
            system: system, address: childAddress,
            parent: cell, behavior: behavior, settings: CellSettings(props: props, system: system), specializedRunMailbox: specializedRunMailbox)
        if managed {
            // A `Supervisor`'s child: its supervisor decides its failures.
            child.makeManaged(delegatedWindow: delegatedWindow)
        }
        adopt(child, name: name)
        return ActorRef(child)
    }

    /// `spawnChild`'s checks of the parent, the name and `props`; the child's name and address.
    @usableFromInline
    func childAddress(_ name: String?, props: Props) throws -> (String, ActorAddress) {
        cell.assertInMailboxRun()
        guard case .running = cell.lifecycle else {
            // A child spawned while stopping (in post-stop) would outlive its parent unseen.
            throw ActorSystemError.parentNotRunning(address.path)
        }
        let name = try system.resolveName(name, parent: address.path)
        guard !children.isNameTaken(name) else {
            throw ActorSystemError.duplicateName(name, parent: address.path)
        }
        try system.checkProps(props, parent: address.path, name: name)
        // No shutdown check here: a child spawned while the system shuts down is stopped with
        // its parent, children first, like every other child.
        return (name, address.child(name, incarnation: system.nextIncarnation()))
    }

    /// Lists `child` among the children and starts it.
    @usableFromInline
    func adopt(_ child: AnyTarget, name: String) {
        children.insert(child, named: name)
        system.start(child)
    }

    /// The children that have not terminated yet, in start order.
    ///
    /// - Complexity: O(n) in the number of children.
    public var childRefs: [AnyActorRef] {
        children.inStartOrder.map(AnyActorRef.init)
    }

    /// The child named `name`, if it has not terminated.
    ///
    /// - Complexity: O(1) for a name you chose; O(n) in the number of children for a generated
    ///   name (`$a…`), which is not indexed.
    public func child(named name: String) -> AnyActorRef? {
        children[name].map(AnyActorRef.init)
    }

    /// Stops a child: its own children stop first, then it; the parent is told
    /// `terminated` if it watches the child.
    ///
    /// Idempotent: stopping a child that is already stopping, or has already terminated, does
    /// nothing.
    ///
    /// - Throws: `ActorSystemError` with code `.notAChild` if `child` never was a child of this
    ///   actor (another actor's child, this actor itself, a message adapter).
    public func stop<Child>(_ child: ActorRef<Child>) throws {
        cell.assertInMailboxRun()
        let target = child.target.actorTarget
        if children.contains(target) {
            target.sendSystem(.stop)
        } else if !isOrWasChild(target) {
            throw ActorSystemError.notAChild(child.path, parent: address.path)
        }
    }

    /// Whether `target` is, or was, spawned by this actor — also once it has terminated and
    /// left `children`.
    ///
    /// A child records its parent's object identity. That identity can be reused by a new
    /// object once the old parent is freed, so the child must also be younger than this actor
    /// (a higher incarnation) and live under its path.
    func isOrWasChild(_ target: AnyTarget) -> Bool {
        guard target.parentIdentity == ObjectIdentifier(cell),
              target.address.incarnation > address.incarnation else { return false }
        let path = target.address.path
        let prefix = address.path
        return path.count > prefix.count && path.hasPrefix(prefix)
            && path[path.index(path.startIndex, offsetBy: prefix.count)] == "/"
    }

    // MARK: Death watch

    /// Watches `ref`: when it terminates this actor receives `LifecycleEvent.terminated(ref)`
    /// (or `childFailed` if it is a child that failed), exactly once, at once if it has already
    /// terminated. An unhandled `terminated` event fails this actor (a death pact).
    ///
    /// Watching again the same way does nothing. Watching an actor already watched with
    /// `watch(_:with:)` is a usage error (as in Akka): the handler fails, once it returns, with
    /// `ActorSystemError` code `.conflictingWatch`; `unwatch` first to switch.
    public func watch<Other>(_ ref: ActorRef<Other>) {
        watch(ref.target, message: nil)
    }

    /// Watches `ref`, receiving `message` instead of a lifecycle event when it terminates.
    ///
    /// Watching again with a message replaces the message. Watching an actor already watched
    /// with `watch(_:)` is a usage error: the handler fails, once it returns, with
    /// `ActorSystemError` code `.conflictingWatch`.
    public func watch<Other>(_ ref: ActorRef<Other>, with message: Message) {
        watch(ref.target, message: message)
    }

    private func watch(_ ref: AnyTarget, message: Message?) {
        cell.assertInMailboxRun()
        // Watching an adapter watches its owner, whose `terminated` names the owner.
        let target = ref.watchedTarget
        guard target !== cell else { return }
        let id = ObjectIdentifier(target)
        let state = state
        if let existing = state.watching[id] {
            guard (existing.message == nil) == (message == nil) else {
                // Akka: a watch is either `watch` or `watchWith`; switching is a usage error.
                recordUsageError(ActorSystemError.conflictingWatch(
                    watcher: address.path, target: target.address.path, nowWithMessage: message != nil))
                return
            }
            // The same kind of watch again: kept (with the new message, for `watch(_:with:)`).
            state.watching[id] = .init(target: target, message: message)
            return
        }
        state.watching[id] = .init(target: target, message: message)
        target.sendSystem(.watch(cell))
    }

    // MARK: Usage errors

    /// A misuse of this context found inside a handler that cannot throw (as `watch`): the
    /// handler fails with `error` once it returns, as if it had thrown it (the first error wins).
    func recordUsageError(_ error: any Error) {
        let state = state
        if state.usageError == nil { state.usageError = error }
        cell.flags.setUsageError()
    }

    /// The recorded usage error, cleared.
    func takeUsageError() -> (any Error)? {
        guard let state = stateIfCreated else { return nil }
        defer { state.usageError = nil }
        return state.usageError
    }

    /// Stops watching `ref`; a `terminated` already on its way is discarded.
    public func unwatch<Other>(_ ref: ActorRef<Other>) {
        cell.assertInMailboxRun()
        let target = ref.target.watchedTarget
        if stateIfCreated?.watching.removeValue(forKey: ObjectIdentifier(target)) != nil {
            target.sendSystem(.unwatch(cell))
        }
    }

    // MARK: Stash

    /// Sets `message` aside until `unstashAll(_:)` or `unstash(_:count:)`.
    ///
    /// - Throws: `StashOverflowError` if the stash already holds `Props.stashCapacity`
    ///   messages; thrown from a handler, that is a failure of the actor.
    public func stash(_ message: Message) throws {
        cell.assertInMailboxRun()
        guard stashSize < stashCapacity else {
            throw StashOverflowError(actor: address, capacity: Int(stashCapacity))
        }
        state.stashed.append(message)
    }

    /// The number of stashed messages.
    public var stashSize: Int {
        guard let state = stateIfCreated else { return 0 }
        return state.stashed.count - Int(state.stashHead)
    }

    /// Whether the stash holds `Props.stashCapacity` messages (a further `stash` throws).
    public var isStashFull: Bool { stashSize >= stashCapacity }

    /// Switches to `behavior` and hands it the stashed messages, oldest first, one at a time:
    /// each may switch behavior for the next, stash again, or stop the actor. Return the result
    /// from the handler:
    ///
    /// ```swift
    /// case .open: return context.unstashAll(open())
    /// ```
    ///
    /// As in Akka: messages stashed while unstashing (a handler stashing again) are not replayed
    /// by this call; if a replayed message fails and supervision resumes the actor, that message
    /// is gone and the rest stay stashed (`stashSize` shows them) until the next unstash; if the
    /// actor restarts they are kept for the new state; if it stops they become dead letters.
    ///
    /// - Complexity: O(n) in the number of messages replayed.
    public func unstashAll(_ behavior: Behavior<Message>) -> Behavior<Message> {
        unstash(behavior, count: stashSize)
    }

    /// Like `unstashAll(_:)`, but replays at most `count` messages, the oldest; the others stay
    /// stashed.
    public func unstash(_ behavior: Behavior<Message>, count: Int) -> Behavior<Message> {
        cell.assertInMailboxRun()
        do {
            try cell.becomeFromUnstash(behavior)
        } catch {
            cell.fail(error, message: nil)
            return .same
        }
        var remaining = min(max(count, 0), stashSize)
        guard remaining > 0 else { return .same }
        let state = state
        let failuresBefore = state.failureCount
        while remaining > 0, case .running = cell.lifecycle, state.failureCount == failuresBefore {
            remaining -= 1
            let message = state.stashed[Int(state.stashHead)]
            state.stashHead += 1
            if Int(state.stashHead) == state.stashed.count {
                state.stashed.removeAll(keepingCapacity: true)
                state.stashHead = 0
            }
            cell.handle(message)
        }
        // A stash never quite emptied (one message unstashed per tick, messages stashed again)
        // would otherwise keep every replayed slot and, after 2³¹ of them, overflow `stashHead`.
        if state.stashHead >= 1_024, Int(state.stashHead) * 2 >= state.stashed.count {
            state.stashed.removeFirst(Int(state.stashHead))
            state.stashHead = 0
        }
        return .same
    }

    /// The stash, oldest first, emptied (a restart keeps it for the new state).
    @inlinable
    func takeStash() -> ArraySlice<Message> {
        guard let state = stateIfCreated else { return [] }
        defer {
            state.stashed = []
            state.stashHead = 0
        }
        return state.stashed[Int(state.stashHead)...]
    }

    /// Counts a failure of this actor (so that an unstash stops replaying after one).
    func noteFailure() {
        state.failureCount &+= 1
    }

    // MARK: Adapters and async work

    /// A ref that accepts `Other` messages and forwards them to this actor converted by
    /// `transform`, which runs on the sender's thread (keep it a pure function).
    ///
    /// As in Akka Typed, there is one adapter per message type: calling this again for the same
    /// `Other` replaces the function and returns the same ref (whose earlier copies use the new
    /// function), so calling it in a handler does not grow memory. A message is converted by the
    /// most recently registered adapter whose type matches it (for class hierarchies, a subtype's
    /// adapter registered later wins). If `transform` throws, the message counts as delivered and
    /// this actor fails with the error, supervised like a failure of its handler.
    ///
    /// Watching the adapter watches this actor: the watcher's `terminated` names this actor.
    public func messageAdapter<Other: Sendable>(_ transform: @escaping @Sendable (Other) throws -> Message) -> ActorRef<Other> {
        cell.assertInMailboxRun()
        let state = state
        let adapters: MessageAdapters<Message>
        if let existing = state.adapterRegistry {
            adapters = existing
        } else {
            adapters = MessageAdapters()
            state.adapterRegistry = adapters
        }
        let target = adapters.register(transform) {
            state.adapterCount &+= 1
            let adapterAddress = address.child("$adapter\(state.adapterCount)", incarnation: address.incarnation)
            return AdapterTarget<Other, Message>(owner: cell, adapters: adapters, address: adapterAddress)
        }
        return ActorRef(target)
    }

    /// Runs `operation` outside the actor and sends its result, mapped by `map`, to this actor
    /// as a message. The handler is not re-entered: the result is an ordinary message, handled
    /// after the ones queued before it. If the actor has terminated, it becomes a dead letter.
    public func pipeToSelf<Value: Sendable>(
        _ operation: @escaping @Sendable () async throws -> Value,
        map: @escaping @Sendable (Result<Value, any Error>) -> Message
    ) {
        let me = myself
        Task {
            let result: Result<Value, any Error>
            do { result = .success(try await operation()) } catch { result = .failure(error) }
            me.tell(map(result))
        }
    }

    @inlinable
    func releaseAfterTermination() {
        cell.assertInMailboxRun()
        guard let state = stateIfCreated else { return }
        state.timerStorage?.cancelAll()
        if !state.children.isEmpty { state.children.removeAll() }
        if state.hasWatches {
            state.watchers = [:]
            state.watching = [:]
        }
        // Nothing accepted is lost silently: what was still stashed becomes dead letters.
        if !state.stashed.isEmpty {
            for message in takeStash() {
                system.publishUndelivered(message, to: address, reason: .recipientTerminated)
            }
        }
    }

    /// Whether an actor watches this one or this one watches another.
    @inlinable
    var hasWatches: Bool { stateIfCreated?.hasWatches ?? false }
}
