/// An actor's view of itself and the runtime, passed to its handlers.
///
/// Use it to spawn and stop children, watch other actors, set timers, stash messages, adapt
/// other message types, and move async work out of the handler (`pipeToSelf`, `ask`).
///
/// Thread-safety: a context belongs to its actor and may be used only inside that actor's
/// handlers (and `setup`), never from another thread or after the handler returned into an
/// escaping closure. Refs (`myself`, children) are `Sendable` and may go anywhere.
public final class ActorContext<Message: Sendable> {
    // A context is used only inside its actor's handlers, while the cell is alive.
    unowned(unsafe) let cell: ActorCell<Message>

    /// The children, in start order.
    var children = ChildRegistry()
    /// Actors watching this one.
    var watchers: [ObjectIdentifier: AnyTarget] = [:]
    /// Actors this one watches, with the custom message to receive instead of `terminated`.
    var watching: [ObjectIdentifier: Watch] = [:]
    var stashed: [Message] = []
    /// Message adapters made so far (for their names).
    /// Wraps around instead of trapping after 2³² adapters (names may then repeat; an
    /// adapter's name is only its address's last component).
    private var adapterCount: UInt32 = 0
    /// Messages the stash may hold (`Props.stashCapacity`). (Two 32-bit fields share a word.)
    private let stashCapacity: Int32

    struct Watch {
        let target: AnyTarget
        let message: Message?
    }

    /// The actor's timers; all are cancelled when the actor stops.
    public var timers: TimerScheduler<Message> {
        if let timerStorage { return timerStorage }
        let timers = TimerScheduler(cell: cell)
        timerStorage = timers
        return timers
    }

    /// Created on first use of `timers`.
    private var timerStorage: TimerScheduler<Message>?

    /// Cancels every timer, if any was ever started (without creating the timer scheduler).
    func cancelAllTimers() {
        timerStorage?.cancelAll()
    }

    init(cell: ActorCell<Message>, stashCapacity: Int) {
        self.cell = cell
        self.stashCapacity = Int32(clamping: stashCapacity)
    }

    deinit {
        children.removeAll()
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

    @usableFromInline
    func spawnChild<Child: Sendable>(
        _ behavior: sending Behavior<Child>,
        name: String?,
        props: Props,
        managed: Bool = false,
        delegatedWindow: SharedRestartWindow? = nil,
        runLoop: @escaping (ActorCell<Child>) -> Bool
    ) throws -> ActorRef<Child> {
        guard case .running = cell.lifecycle else {
            // A child spawned while stopping (in post-stop) would outlive its parent unseen.
            throw ActorSystemError.parentNotRunning(address.path)
        }
        let name = try system.resolveName(name, parent: address.path)
        guard !children.isNameTaken(name) else {
            throw ActorSystemError.duplicateName(name, parent: address.path)
        }
        try ActorCell<Child>.checkSpawnable(behavior, props: props, parent: address.path, name: name)
        // No shutdown check here: a child spawned while the system shuts down is stopped with
        // its parent, children first, like every other child.
        let child = ActorCell(
            system: system, address: address.child(name, incarnation: system.nextIncarnation()),
            parent: cell, behavior: behavior, props: props, runLoop: runLoop)
        if managed {
            // A `Supervisor`'s child: its supervisor decides its failures.
            child.supervision = SupervisionState(isManaged: true, delegatedWindow: delegatedWindow)
        }
        children.insert(child, named: name)
        system.start(child)
        return ActorRef(child)
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
    /// - Throws: `ActorSystemError` with code `.notAChild` if `child` is not a child of this actor.
    public func stop<Child>(_ child: ActorRef<Child>) throws {
        guard children.contains(child.target) else {
            throw ActorSystemError.notAChild(child.path, parent: address.path)
        }
        child.target.sendSystem(.stop)
    }

    // MARK: Death watch

    /// Watches `ref`: when it terminates this actor receives `LifecycleEvent.terminated(ref)`
    /// (or `childFailed` if it is a child that failed), exactly once, at once if it has already
    /// terminated. An unhandled `terminated` event fails this actor (a death pact).
    public func watch<Other>(_ ref: ActorRef<Other>) {
        watch(ref.target, message: nil)
    }

    /// Watches `ref`, receiving `message` instead of a lifecycle event when it terminates.
    public func watch<Other>(_ ref: ActorRef<Other>, with message: Message) {
        watch(ref.target, message: message)
    }

    private func watch(_ ref: AnyTarget, message: Message?) {
        // Watching an adapter watches its owner, whose `terminated` names the owner.
        let target = ref.watchedTarget
        guard target !== cell else { return }
        let id = ObjectIdentifier(target)
        let isNew = watching[id] == nil
        watching[id] = Watch(target: target, message: message)
        if isNew { target.sendSystem(.watch(cell)) }
    }

    /// Stops watching `ref`; a `terminated` already on its way is discarded.
    public func unwatch<Other>(_ ref: ActorRef<Other>) {
        let target = ref.target.watchedTarget
        if watching.removeValue(forKey: ObjectIdentifier(target)) != nil {
            target.sendSystem(.unwatch(cell))
        }
    }

    // MARK: Stash

    /// Sets `message` aside until `unstashAll()`.
    ///
    /// - Throws: `StashOverflowError` if the stash already holds `Props.stashCapacity`
    ///   messages; thrown from a handler, that is a failure of the actor.
    public func stash(_ message: Message) throws {
        guard stashed.count < stashCapacity else {
            throw StashOverflowError(actor: address, capacity: Int(stashCapacity))
        }
        stashed.append(message)
    }

    /// The number of stashed messages.
    public var stashSize: Int { stashed.count }

    /// Switches to `behavior` and hands it every stashed message, in the order stashed (each
    /// may switch behavior for the next, stash again, or stop the actor; messages after a stop
    /// become dead letters). Return the result from the handler:
    ///
    /// ```swift
    /// case .open: return context.unstashAll(open())
    /// ```
    public func unstashAll(_ behavior: Behavior<Message>) -> Behavior<Message> {
        do {
            try cell.becomeFromUnstash(behavior)
        } catch {
            cell.fail(error, message: nil)
            return .same
        }
        let messages = stashed
        stashed = []
        for message in messages {
            guard case .running = cell.lifecycle else {
                // Restarting: kept for the new state; stopping: dead letters.
                cell.handleWhileNotRunning(message)
                continue
            }
            cell.handle(message)
        }
        return .same
    }

    // MARK: Adapters and async work

    /// A ref that accepts `Other` messages and forwards them to this actor converted by
    /// `transform` (which runs on the sender's thread, so it must be a pure function).
    /// Watching the adapter watches this actor: the watcher's `terminated` names this actor.
    public func messageAdapter<Other: Sendable>(_ transform: @escaping @Sendable (Other) -> Message) -> ActorRef<Other> {
        adapterCount &+= 1
        let adapterAddress = address.child("$adapter\(adapterCount)", incarnation: address.incarnation)
        return ActorRef(AdapterTarget(owner: cell, transform: transform, address: adapterAddress))
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

    func releaseAfterTermination() {
        cancelAllTimers()
        children.removeAll()
        watchers = [:]
        watching = [:]
        stashed = []
    }
}
