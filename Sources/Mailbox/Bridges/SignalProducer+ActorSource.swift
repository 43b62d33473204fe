// Actor-backed sources: a producer whose every start spawns an actor and sends what it is told
// (Akka's `ActorSource.actorRef` and `ActorSource.actorRefWithBackpressure`).

extension SignalProducer where Value: Sendable {
    /// A producer whose every start spawns a top-level actor and sends, in order, each message
    /// told to it (Akka's `ActorSource.actorRef`). The new actor's ref is handed to `onSpawn`
    /// during the start, before any message can be handled.
    ///
    /// ```swift
    /// let ticks = SignalProducer<Tick, Never>.actorSource(
    ///     spawningIn: system, completeOn: { $0 == .end }
    /// ) { ref in clock.tell(.subscribe(ref)) }
    /// ticks.startWithValues { print($0) }
    /// ```
    ///
    /// - **Cold**: each start spawns its own actor (under `/user`, named `name`, or `$a…` when
    ///   `name` is `nil`), so two runs never share messages.
    /// - **Ordered**: messages are sent in the order the actor handles them (FIFO per sender),
    ///   on the actor's thread, inside its mailbox run.
    /// - A message for which `completeOn` returns `true` completes the run; one for which
    ///   `failOn` returns an error fails it. Either is not sent, and stops the actor: what is
    ///   queued behind it becomes dead letters (`.recipientTerminated`).
    /// - **Disposing** the run stops the actor (its queued messages become dead letters).
    /// - **The actor stopping** otherwise (system shutdown) completes the run, as Akka does.
    /// - **Buffering**: the buffer is the actor's mailbox. Akka's `bufferSize` and
    ///   `overflowStrategy` are `props`' mailbox capacity:
    ///   `Props(mailbox: .bounded(capacity: 64, overflow: .dropNewest))`; `.dropOldest` drops the
    ///   oldest queued message, `.fail` refuses the new one (the sender learns from `tell`). Each
    ///   drop is a dead letter with reason `.mailboxFull`. Without demand in a push-based stream
    ///   the actor never waits for the downstream: the mailbox only holds messages not handled
    ///   yet.
    ///
    /// Thread-safety: start from any thread; tell the ref from any thread.
    ///
    /// Failure modes: if the actor cannot be spawned (the system is shutting down, the name is
    /// invalid or taken), the run is interrupted at once, `onSpawn` is not called, and the
    /// reason is written to the system's log.
    public static func actorSource(
        spawningIn system: ActorSystem,
        name: String? = nil,
        props: Props = Props(),
        completeOn isCompletion: @escaping @Sendable (Value) -> Bool,
        failOn failure: @escaping @Sendable (Value) -> Error? = { _ in nil },
        onSpawn: @escaping @Sendable (ActorRef<Value>) -> Void
    ) -> SignalProducer<Value, Error> {
        _actorSource(log: system.log, completeOn: isCompletion, failOn: failure, acknowledge: nil, onSpawn: onSpawn) { behavior in
            if let name {
                return try system.spawn(behavior, name: name, props: props)
            }
            return try system.spawnAnonymous(behavior, props: props)
        }
    }

    /// `actorSource(spawningIn:name:props:completeOn:failOn:onSpawn:)` with an acknowledgement
    /// per value (Akka's `ActorSource.actorRefWithBackpressure`): once a message has been sent
    /// on the run (its observers have returned), `ackMessage` is told to `ackTo`, so a sender
    /// can wait for it before sending the next.
    ///
    /// Completion and failure messages are not acknowledged. A message sent before the previous
    /// one was acknowledged is still sent, in order (Akka fails the stream instead): the
    /// mailbox queues it.
    public static func actorSource<Ack: Sendable>(
        spawningIn system: ActorSystem,
        name: String? = nil,
        props: Props = Props(),
        acknowledgingTo ackTo: ActorRef<Ack>,
        with ackMessage: Ack,
        completeOn isCompletion: @escaping @Sendable (Value) -> Bool,
        failOn failure: @escaping @Sendable (Value) -> Error? = { _ in nil },
        onSpawn: @escaping @Sendable (ActorRef<Value>) -> Void
    ) -> SignalProducer<Value, Error> {
        _actorSource(log: system.log, completeOn: isCompletion, failOn: failure, acknowledge: { ackTo.tell(ackMessage) }, onSpawn: onSpawn) { behavior in
            if let name {
                return try system.spawn(behavior, name: name, props: props)
            }
            return try system.spawnAnonymous(behavior, props: props)
        }
    }

    /// `actorSource(spawningIn:…)` spawning each run's actor as a child of the actor whose
    /// context this is: the source actor then stops, and the run completes, when its parent
    /// stops.
    ///
    /// Start the producer only inside that actor's handlers (or `setup`), like every use of a
    /// context: the spawn happens during the start (checked in debug builds). Disposing the run
    /// may happen anywhere.
    public static func actorSource<Parent: Sendable>(
        spawningIn context: ActorContext<Parent>,
        name: String? = nil,
        props: Props = Props(),
        completeOn isCompletion: @escaping @Sendable (Value) -> Bool,
        failOn failure: @escaping @Sendable (Value) -> Error? = { _ in nil },
        onSpawn: @escaping @Sendable (ActorRef<Value>) -> Void
    ) -> SignalProducer<Value, Error> {
        let parent = _ConfinedContext(context)
        return _actorSource(log: context.system.log, completeOn: isCompletion, failOn: failure, acknowledge: nil, onSpawn: onSpawn) { behavior in
            if let name {
                return try parent.context.spawn(behavior, name: name, props: props)
            }
            return try parent.context.spawnAnonymous(behavior, props: props)
        }
    }

    /// The context variant of `actorSource(spawningIn:name:props:acknowledgingTo:with:…)`.
    public static func actorSource<Parent: Sendable, Ack: Sendable>(
        spawningIn context: ActorContext<Parent>,
        name: String? = nil,
        props: Props = Props(),
        acknowledgingTo ackTo: ActorRef<Ack>,
        with ackMessage: Ack,
        completeOn isCompletion: @escaping @Sendable (Value) -> Bool,
        failOn failure: @escaping @Sendable (Value) -> Error? = { _ in nil },
        onSpawn: @escaping @Sendable (ActorRef<Value>) -> Void
    ) -> SignalProducer<Value, Error> {
        let parent = _ConfinedContext(context)
        return _actorSource(log: context.system.log, completeOn: isCompletion, failOn: failure, acknowledge: { ackTo.tell(ackMessage) }, onSpawn: onSpawn) { behavior in
            if let name {
                return try parent.context.spawn(behavior, name: name, props: props)
            }
            return try parent.context.spawnAnonymous(behavior, props: props)
        }
    }

    /// The source, whatever spawns its actor: `spawn` is called once per start with the
    /// run's behavior.
    private static func _actorSource(
        log: @escaping @Sendable (@autoclosure () -> String) -> Void,
        completeOn isCompletion: @escaping @Sendable (Value) -> Bool,
        failOn failure: @escaping @Sendable (Value) -> Error?,
        acknowledge: (@Sendable () -> Void)?,
        onSpawn: @escaping @Sendable (ActorRef<Value>) -> Void,
        spawn: @escaping @Sendable (sending Behavior<Value>) throws -> ActorRef<Value>
    ) -> SignalProducer<Value, Error> {
        SignalProducer { observer, lifetime in
            guard !lifetime.hasEnded else { return }
            let behavior = Behavior<Value>.receiveMessage { message in
                if isCompletion(message) {
                    observer.sendCompleted()
                    return .stopped
                }
                if let error = failure(message) {
                    observer.send(error: error)
                    return .stopped
                }
                observer.send(value: message)
                acknowledge?()
                return .same
            }
            let ref: ActorRef<Value>
            do {
                ref = try spawn(behavior)
            } catch {
                log("actor source not started: \(error)")
                observer.sendInterrupted()
                return
            }
            let target = ref.target
            // The actor stopping for any other reason ends the run (a disposed run has ended
            // already, and ignores it).
            ref.whenTerminated { failure in
                if failure == nil { observer.sendCompleted() } else { observer.sendInterrupted() }
            }
            lifetime.observeEnded { target.sendSystem(.stop) }
            onSpawn(ref)
        }
    }
}

/// An actor's context carried into a producer's `@Sendable` start handler, with the actor's
/// ref, which keeps the actor (and so the context's cell) alive while the producer exists.
///
/// The context is used only inside its actor's mailbox run, one run at a time (the spawn checks
/// it in debug builds, as `NIOLoopBound` checks its event loop); the ref is `Sendable`.
struct _ConfinedContext<Parent: Sendable> {
    let context: ActorContext<Parent>
    private let parent: ActorRef<Parent>

    init(_ context: ActorContext<Parent>) {
        self.context = context
        self.parent = context.myself
    }
}

// Safe: confined to the actor's mailbox run (checked by `assertInMailboxRun` in the spawn), not a lock.
extension _ConfinedContext: @unchecked Sendable {}
