import Dispatch
import Foundation
import Synchronization

/// A tree of actors sharing a default scheduler, an event stream and a lifecycle.
///
/// ```swift
/// let system = ActorSystem(name: "chat")
/// let lobby = try system.spawn(lobbyBehavior(), name: "lobby")   // /user/lobby
/// lobby.tell(.join("alice"))
/// let report = await system.shutdown()
/// ```
///
/// - Top-level actors live under `/user`; each actor's children live under it.
/// - The default scheduler is the system's own `PoolScheduler` (one worker per core) unless the
///   configuration names another; each actor may choose its own in `Props`.
/// - `shutdown()` stops every actor, children before parents, runs their post-stop handlers,
///   stops the pool's threads, and reports anything that did not stop in time.
/// - `terminate()` first runs the `coordinatedShutdown`'s phases (the application's tasks: close
///   listeners, drain clients…), then does what `shutdown()` does.
///
/// Thread-safety: every member may be used from any thread.
///
/// What keeps what alive: the system keeps its actors (and their threads) alive until they stop
/// or the system shuts down. An actor system that is never shut down keeps its pool threads.
public final class ActorSystem: Sendable {
    /// How a system runs its actors.
    public struct Configuration: Sendable {
        /// The default scheduler for actors; `nil` (the default) uses the system's own pool.
        public var scheduler: (any Scheduler)?
        /// Worker threads of the system's own pool; by default one per active core.
        public var poolWorkerCount: Int
        /// The default run length: user messages one mailbox run handles before yielding.
        public var runLength: Int
        /// Where timers and ask time-outs of actors whose scheduler cannot tell time (the
        /// `ImmediateScheduler`) run; `nil` uses the default scheduler if it is a
        /// `DateScheduler`, else the pool.
        public var timerScheduler: (any DateScheduler)?
        /// Receives the system's log lines (actor failures, errors in post-stop); the default
        /// writes them to standard error. `nil` discards them.
        public var logHandler: (@Sendable (String) -> Void)?
        /// How failures of top-level actors are handled when the actor's own supervision does
        /// not decide (it has none, none matches, or it escalates). Default: `.stop`, the actor
        /// stops and the failure is published; the process never crashes. `.escalate` here
        /// stops the actor and begins shutting the whole system down.
        public var guardianStrategy: SupervisorStrategy
        /// Seeds the random factor of back-off delays, so a simulation replays exactly; `nil`
        /// (the default) uses the system's random number generator.
        public var randomSeed: UInt64?
        /// The phases of `terminate()` and their time-outs (see `CoordinatedShutdown`).
        public var coordinatedShutdown: CoordinatedShutdown.Configuration

        /// A configuration with the defaults described on each property.
        public init(
            scheduler: (any Scheduler)? = nil,
            poolWorkerCount: Int = ProcessInfo.processInfo.activeProcessorCount,
            runLength: Int = 64,
            timerScheduler: (any DateScheduler)? = nil,
            logHandler: (@Sendable (String) -> Void)? = { line in FileHandle.standardError.write(Data((line + "\n").utf8)) },
            guardianStrategy: SupervisorStrategy = .stop,
            randomSeed: UInt64? = nil,
            coordinatedShutdown: CoordinatedShutdown.Configuration = CoordinatedShutdown.Configuration()
        ) {
            precondition(runLength > 0, "runLength must be positive, not \(runLength)")
            self.scheduler = scheduler
            self.poolWorkerCount = poolWorkerCount
            self.runLength = runLength
            self.timerScheduler = timerScheduler
            self.logHandler = logHandler
            self.guardianStrategy = guardianStrategy
            self.randomSeed = randomSeed
            self.coordinatedShutdown = coordinatedShutdown
        }
    }

    /// The system's name, the first part of every actor's address.
    public let name: String

    /// The configuration the system was created with.
    public let configuration: Configuration

    /// The system's registry of actors by service key (see `Receptionist`).
    public let receptionist = Receptionist()

    /// The system's own pool, if it created one.
    let pool: PoolScheduler?
    /// `pool`, for new cells: they reach it without a retain (the system, which every cell
    /// holds, keeps it alive), so that spawning and freeing actors on different threads do not
    /// both write the pool's reference count.
    let poolReference: Unmanaged<PoolScheduler>?

    /// Timers and ask time-outs for actors whose scheduler cannot tell time.
    let timerScheduler: any DateScheduler

    @usableFromInline
    let guardian: Guardian
    private let incarnations = Atomic<UInt64>(0)
    private let anonymousNames = Atomic<UInt64>(0)
    private let shuttingDown = Atomic<Bool>(false)
    let eventBus = EventBus<ActorSystemEvent>()
    private let deadLetterCounter = Atomic<Int>(0)
    /// `deadLetterCounter` when the shutdown began, for the report; -1 before.
    private let deadLettersAtShutdown = Atomic<Int>(-1)
    /// Asks that have not completed; `shutdown()` fails them.
    let pendingAsks = PendingAsks()
    private let droppedCounter = Atomic<Int>(0)
    /// SplitMix64 state for back-off jitter, when `configuration.randomSeed` is set.
    private let randomState: Atomic<UInt64>

    /// The system's coordinated shutdown: add tasks to its phases; `terminate()` runs them.
    public let coordinatedShutdown: CoordinatedShutdown

    /// Creates a system and, unless the configuration names a scheduler, its pool threads.
    public init(name: String = "mailbox", configuration: Configuration = Configuration()) {
        precondition(ActorName.problem(with: name) == nil, "invalid actor system name '\(name)': \(ActorName.problem(with: name)!)")
        self.name = name
        self.configuration = configuration
        let pool = configuration.scheduler == nil ? PoolScheduler(workerCount: configuration.poolWorkerCount, name: "\(name)-pool") : nil
        self.pool = pool
        poolReference = pool.map { Unmanaged.passUnretained($0) }
        self.timerScheduler = configuration.timerScheduler
            ?? (configuration.scheduler as? any DateScheduler)
            ?? pool
            ?? QueueScheduler(name: "\(name).timers")
        self.guardian = Guardian(address: ActorAddress(system: name, path: "/user", incarnation: 0))
        self.randomState = Atomic(configuration.randomSeed ?? 0)
        self.coordinatedShutdown = CoordinatedShutdown(configuration: configuration.coordinatedShutdown, systemName: name)
        coordinatedShutdown.attach(to: self)
    }

    /// A random number in `0..<1`: from the seeded sequence when `randomSeed` is set.
    func nextRandomUnit() -> Double {
        guard configuration.randomSeed != nil else { return Double.random(in: 0..<1) }
        // One SplitMix64 sequence: each caller takes the next state atomically.
        let state = randomState.wrappingAdd(SplitMix64.increment, ordering: .relaxed).newValue
        return SplitMix64.unit(SplitMix64.mix(state))
    }

    /// 64 random bits, to seed a generator: from the seeded sequence when `randomSeed` is set.
    @usableFromInline
    func nextRandomSeed() -> UInt64 {
        guard configuration.randomSeed != nil else { return UInt64.random(in: .min ... .max) }
        return SplitMix64.mix(randomState.wrappingAdd(SplitMix64.increment, ordering: .relaxed).newValue)
    }

    /// Whether `shutdown()` has begun: new spawns throw, actors are stopping.
    public var isShuttingDown: Bool { shuttingDown.load(ordering: .acquiring) }

    // MARK: Spawning

    /// Spawns a top-level actor at `/user/<name>`.
    ///
    /// - Throws: `ActorSystemError` with code `.invalidName` (saying which character or rule),
    ///   `.duplicateName` (a live top-level actor has that name), `.shuttingDown`,
    ///   `.invalidBehavior` (`behavior` is `.same` or `.unhandled`, which only a handler may
    ///   return) or `.invalidProps` (a bounded mailbox whose capacity is not positive). Problems
    ///   that show only when the actor starts (a `setup` that throws, or returns `.same`) are
    ///   failures of the new actor, handled by its supervision; they never crash the process.
    ///
    /// Call it with a concrete message type where you can: the actor's mailbox run is then
    /// compiled specialised for that type in your module.
    @inlinable
    @discardableResult
    public func spawn<Message: Sendable>(_ behavior: sending Behavior<Message>, name: String, props: Props = Props()) throws -> ActorRef<Message> {
        try spawnTopLevel(behavior, name: name, props: props) { $0.runMailbox() }
    }

    /// Spawns a top-level actor with a generated name (`/user/$a1`, …).
    ///
    /// - Throws: As `spawn(_:name:props:)`, except for the name codes.
    @inlinable
    @discardableResult
    public func spawnAnonymous<Message: Sendable>(_ behavior: sending Behavior<Message>, props: Props = Props()) throws -> ActorRef<Message> {
        try spawnTopLevel(behavior, name: nil, props: props) { $0.runMailbox() }
    }

    /// Inlinable (specialised for `Message` where the actor is spawned, see
    /// `ActorCell.runSystemMessages`); its non-generic steps are out of line.
    @inlinable
    func spawnTopLevel<Message: Sendable>(
        _ behavior: sending Behavior<Message>,
        name: String?,
        props: Props,
        specializedRunMailbox: @escaping (ActorCell<Message>) -> Bool
    ) throws -> ActorRef<Message> {
        let (name, address) = try topLevelAddress(name, props: props)
        try ActorCell<Message>.checkBehavior(behavior, parent: guardian.address.path, name: name)
        let cell = ActorCell(
            system: self, address: address,
            parent: guardian, behavior: behavior, settings: CellSettings(props: props, system: self), specializedRunMailbox: specializedRunMailbox)
        try adoptTopLevel(cell, name: name)
        return ActorRef(cell)
    }

    /// `spawnTopLevel`'s checks of the name and `props`; the new actor's name and address.
    @usableFromInline
    func topLevelAddress(_ name: String?, props: Props) throws -> (String, ActorAddress) {
        let name = try self.resolveName(name, parent: guardian.address.path)
        guard !isShuttingDown else { throw ActorSystemError.shuttingDown(self.name) }
        try checkProps(props, parent: guardian.address.path, name: name)
        return (name, guardian.address.child(name, incarnation: nextIncarnation()))
    }

    /// Lists `cell` under the guardian and starts it.
    @usableFromInline
    func adoptTopLevel(_ cell: AnyTarget, name: String) throws {
        try guardian.adopt(cell, name: name, systemName: self.name)
        start(cell)
    }

    /// Announces `cell` and starts it.
    @usableFromInline
    func start(_ cell: AnyTarget) {
        if eventBus.hasObservers { publish(.spawned(cell.address)) }
        cell.sendSystem(.start)
    }

    @usableFromInline
    func nextIncarnation() -> UInt64 {
        incarnations.wrappingAdd(1, ordering: .relaxed).newValue
    }

    /// `name` if it is a valid actor name (else an `ActorSystemError` naming the problem), or a
    /// generated name when `name` is `nil`.
    @usableFromInline
    func resolveName(_ name: String?, parent: String) throws -> String {
        guard let name else { return anonymousName() }
        if let problem = ActorName.problem(with: name) {
            throw ActorSystemError.invalidName(name, parent: parent, problem: problem)
        }
        return name
    }

    func anonymousName() -> String {
        ActorAddress.generatedName(anonymousNames.wrappingAdd(1, ordering: .relaxed).newValue)
    }

    /// The live top-level actors.
    public var topLevelActors: [AnyActorRef] {
        guardian.childRefs
    }

    // MARK: Events

    /// Calls `observer` with every event the system publishes from now on (spawned, stopped,
    /// failed, dead letter, unhandled), on the thread that publishes it.
    ///
    /// - Returns: A disposable that ends the observation.
    @available(*, deprecated, message: "use `events.observeValues { … }`: one way to observe the event stream")
    @discardableResult
    public func observeEvents(_ observer: @escaping @Sendable (ActorSystemEvent) -> Void) -> any Disposable {
        eventBus.observe(observer)
    }

    /// Calls `observer` with every dead letter from now on (not drops: see `drops`), on the
    /// thread that publishes it.
    @available(*, deprecated, message: "use `deadLetters.observeValues { … }`: one way to observe dead letters")
    @discardableResult
    public func observeDeadLetters(_ observer: @escaping @Sendable (DeadLetter) -> Void) -> any Disposable {
        eventBus.observe { event in
            if case let .deadLetter(letter) = event { observer(letter) }
        }
    }

    /// The system's events (spawned, stopped, failed, supervised, dead letter, dropped,
    /// unhandled) as a hot signal:
    /// each observer receives the events published after it started observing, on the
    /// publishing thread. The signal completes when the system has shut down.
    ///
    /// Each access makes a new signal; observations end when disposed or at shutdown.
    public var events: Signal<ActorSystemEvent, Never> {
        Signal { observer, lifetime in
            lifetime += eventBus.observe({ observer.send(value: $0) }, onClose: { observer.sendCompleted() })
        }
    }

    /// Dead letters (messages nobody could receive; not drops, see `drops`) as a hot signal;
    /// see `events`.
    public var deadLetters: Signal<DeadLetter, Never> {
        events.compactMap { event in
            if case let .deadLetter(letter) = event { return letter }
            return nil
        }
    }

    /// Messages dropped for lack of room (full bounded mailboxes, full back-off stashes) as a
    /// hot signal; see `events`. Akka's `Dropped` on the event stream.
    public var drops: Signal<Dropped, Never> {
        events.compactMap { event in
            if case let .dropped(drop) = event { return drop }
            return nil
        }
    }

    /// Messages that became dead letters so far (drops are counted in `droppedCount` instead:
    /// no message is counted twice).
    public var deadLetterCount: Int { deadLetterCounter.load(ordering: .relaxed) }

    /// Messages dropped so far by full bounded mailboxes and full back-off stashes (not
    /// counted as dead letters).
    public var droppedCount: Int { droppedCounter.load(ordering: .relaxed) }

    @usableFromInline
    func publish(_ event: ActorSystemEvent) {
        eventBus.publish(event)
    }

    /// Publishes `.stopped` for `address`, building the event only if someone observes.
    @usableFromInline
    func publishStopped(_ target: AnyTarget) {
        if eventBus.hasObservers { eventBus.publish(.stopped(target.address)) }
    }

    /// Publishes a message that was not delivered: as a `Dropped` if `reason` is a drop, else
    /// as a `DeadLetter`; each counted once.
    @usableFromInline
    func publishUndelivered(_ message: any Sendable, to recipient: ActorAddress, reason: DeadLetter.Reason) {
        if reason.isDrop {
            droppedCounter.wrappingAdd(1, ordering: .relaxed)
            eventBus.publish(.dropped(Dropped(recipient: recipient, message: message, reason: reason)))
        } else {
            deadLetterCounter.wrappingAdd(1, ordering: .relaxed)
            eventBus.publish(.deadLetter(DeadLetter(recipient: recipient, message: message, reason: reason)))
        }
    }

    /// Writes `line` to the log handler; the line is not even built when there is none.
    package func log(_ line: @autoclosure () -> String) {
        guard let logHandler = configuration.logHandler else { return }
        logHandler("[\(name)] \(line())")
    }

    // MARK: Shutdown

    /// What `shutdown()` found, and what it dropped.
    public struct ShutdownReport: Sendable, CustomStringConvertible {
        /// Top-level actors (with their subtrees) that had not terminated when the time-out
        /// expired. Empty after a clean shutdown.
        public let actorsNotStopped: [ActorAddress]

        /// Messages that became dead letters from the start of the shutdown to its end: those
        /// still queued in the mailboxes of the actors that stopped, those sent to them
        /// meanwhile (including back-pressured sends that were waiting for room, which throw),
        /// and anything else dead-lettered in that time. (`ActorSystem.deadLetterCount` keeps
        /// counting afterwards.)
        public let deadLetters: Int

        /// Asks that were still waiting for a reply once the actors had stopped: each failed
        /// with `AskError` code `.systemShutDown`, so no awaiting task hangs.
        public let asksFailed: Int

        /// The coordinated-shutdown tasks that threw or timed out (`terminate()`); empty after
        /// `shutdown()`, which runs none.
        public internal(set) var failedTasks: [CoordinatedShutdown.TaskFailure] = []

        /// Why the coordinated shutdown ran; `nil` after `shutdown()`.
        public internal(set) var reason: ShutdownReason?

        /// Whether every actor stopped in time and every shutdown task finished without failing.
        public var isClean: Bool { actorsNotStopped.isEmpty && failedTasks.isEmpty }

        public var description: String {
            var text = actorsNotStopped.isEmpty ? "shutdown complete" : "shutdown timed out; still running: \(actorsNotStopped.map(\.path).joined(separator: ", "))"
            var dropped: [String] = []
            if deadLetters > 0 { dropped.append(deadLetters == 1 ? "1 dead letter" : "\(deadLetters) dead letters") }
            if asksFailed > 0 { dropped.append(asksFailed == 1 ? "1 ask failed" : "\(asksFailed) asks failed") }
            if !failedTasks.isEmpty { dropped.append(failedTasks.count == 1 ? "1 shutdown task failed" : "\(failedTasks.count) shutdown tasks failed") }
            if !dropped.isEmpty { text += "; " + dropped.joined(separator: ", ") }
            return text
        }
    }

    /// Starts shutting down without waiting: new spawns throw from now on and every top-level
    /// actor is told to stop (children first). Idempotent. Useful with a `TestScheduler`: begin,
    /// advance the scheduler, then `await shutdown()`.
    public func beginShutdown() {
        guard !shuttingDown.exchange(true, ordering: .acquiringAndReleasing) else { return }
        deadLettersAtShutdown.store(deadLetterCounter.load(ordering: .relaxed), ordering: .relaxed)
        // Newest first, as a stopping actor stops its children.
        for child in guardian.closeForShutdown().reversed() {
            child.sendSystem(.stop)
        }
    }

    /// Stops every actor gracefully and waits for them, without the coordinated shutdown's
    /// phases (`terminate()` runs them first): children stop before parents, each
    /// actor's post-stop handler runs, queued messages become dead letters. Then every ask
    /// still waiting fails (`AskError` code `.systemShutDown`), the system's pool threads
    /// finish what they run and exit (joined), and event observers are removed. Idempotent:
    /// a later call waits again for any actor left, and counts from the same start. The system
    /// has then terminated: `registerOnTermination` callbacks run (once) and `whenTerminated`
    /// returns; a coordinated shutdown in progress skips its remaining phases.
    ///
    /// Call it before dropping the last reference to a system: a system never shut down keeps
    /// its pool threads (and every live actor) forever.
    ///
    /// ```
    ///  beginShutdown ── stop top-level actors (children first) ── all terminated ──┐
    ///                   queued messages → dead letters               or time-out ──┤
    ///                   back-pressured senders throw                                ▼
    ///                                          fail pending asks ── join pool threads ── report
    /// ```
    ///
    /// Thread-safety: call from any task, but not from inside an actor's handler on the
    /// system's pool (the pool cannot join the thread that waits for it; a handler cannot
    /// `await` anyway).
    ///
    /// - Parameter timeout: How long to wait for actors to stop (wall-clock time); actors still
    ///   running then are listed in the report and their queued work is abandoned.
    /// - Returns: The actors that did not stop in time, and counts of what was dropped: dead
    ///   letters and failed asks.
    @discardableResult
    public func shutdown(timeout: Duration = .seconds(10)) async -> ShutdownReport {
        coordinatedShutdown.plainShutdownStarted()
        let report = await stopActorsAndThreads(timeout: timeout)
        coordinatedShutdown.systemTerminated(report)
        return report
    }

    /// What `shutdown()` and the last step of `terminate()` do: begin, wait for the actors,
    /// fail the asks, join the pool, close the event stream.
    func stopActorsAndThreads(timeout: Duration) async -> ShutdownReport {
        beginShutdown()
        let stoppedInTime = await guardian.waitUntilEmpty(timeout: timeout)
        let remaining = stoppedInTime ? [] : guardian.childTargets.map(\.address)
        if !remaining.isEmpty {
            log("shutdown timed out after \(timeout); still running: \(remaining.map(\.path))")
        }
        // No actor is left to answer (and a shut-down pool would drop the time-outs' timers).
        let asksFailed = pendingAsks.close()
        pool?.shutdown()
        // Counted once the pool's threads have finished their last runs (an actor drains its
        // mailbox into dead letters in the run that terminates it).
        let deadLetters = deadLetterCounter.load(ordering: .relaxed) - deadLettersAtShutdown.load(ordering: .relaxed)
        eventBus.close()
        return ShutdownReport(actorsNotStopped: remaining, deadLetters: deadLetters, asksFailed: asksFailed)
    }
}
