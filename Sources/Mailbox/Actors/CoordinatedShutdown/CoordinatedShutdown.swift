import Dispatch

/// Stops an actor system in named phases, running the application's tasks in each, then the
/// system itself: Akka's `CoordinatedShutdown`, or the order in which OTP stops an application
/// (`prep_stop`, the supervision tree, `stop`).
///
/// ```swift
/// let shutdown = system.coordinatedShutdown
/// try shutdown.addTask(phase: .serviceUnbind, name: "close-listener") { await listener.close() }
/// try shutdown.addTask(phase: .serviceRequestsDone, name: "drain") { try await sessions.drain() }
/// shutdown.installSignalHandlers([SIGINT, SIGTERM])      // opt-in: run on the first signal
/// …
/// let report = await system.terminate()                  // or a signal; runs once
/// ```
///
/// A run goes through `configuration.phases` in order:
///
/// ```
///  run(reason:) ─▶ before-service-unbind ─▶ service-unbind ─▶ service-requests-done ─▶ service-stop
///                  ─▶ before-actor-system-terminate ─▶ actor-system-terminate: its tasks, then
///                     the system stops every actor (children first), fails pending asks, joins
///                     its threads, closes its event stream ─▶ termination callbacks ─▶ report
///  each phase:  its tasks start together ──── all finished ──▶ next phase
///                                        └─── time-out ─────▶ late tasks cancelled, logged ─▶ next phase
/// ```
///
/// 1. The tasks of one phase run concurrently, each in its own Swift `Task`; the next phase
///    starts when all have finished, or at the phase's time-out.
/// 2. Every phase *recovers*: a task that throws, or is still running at the time-out, is
///    logged, listed in `ShutdownReport.failedTasks`, and skipped (a late task is cancelled,
///    cooperatively, and no longer awaited).
/// 3. `run` is idempotent: the first call's reason counts; every call, and
///    `ActorSystem.whenTerminated`, completes with the same report when the system has
///    terminated. Termination callbacks run exactly once.
/// 4. `ActorSystem.shutdown()` is the uncoordinated path: it stops the actors without running
///    the phases (a run in progress skips its remaining phases); it still terminates the system,
///    and the termination callbacks run.
///
/// Time: phase time-outs are measured on the system's timer scheduler (virtual time when the
/// system runs on a `TestScheduler`). Two steps of the last phase use wall-clock time: waiting
/// for the actors to stop (at most that phase's time-out, as `shutdown(timeout:)`) and joining
/// the pool's threads.
///
/// Thread-safety: every member may be used from any thread. A task must not await the
/// termination itself (`terminate()`, `run`, `whenTerminated`): that waits for its own phase
/// to end, so it only ends at the time-out.
public final class CoordinatedShutdown: Sendable {
    /// The phases and their time-outs (from `ActorSystem.Configuration.coordinatedShutdown`).
    public let configuration: Configuration

    /// The system's name, for errors and labels.
    let systemName: String
    /// Protected by its own lock; callbacks, tasks and continuations run outside it.
    private let state: LockedValueBox<StateMachine>

    init(configuration: Configuration, systemName: String) {
        if let problem = configuration.problem() {
            preconditionFailure("invalid coordinated shutdown configuration for actor system '\(systemName)': \(problem)")
        }
        self.configuration = configuration
        self.systemName = systemName
        state = LockedValueBox(StateMachine(phases: configuration.phases))
    }

    /// Links the shutdown to its system once the system is initialised (a weak reference: the
    /// system owns its shutdown).
    func attach(to system: ActorSystem) {
        state.withLockedValue { $0.system = system }
    }

    /// The reason given to the first `run`, or `nil` if none has run.
    public var reason: ShutdownReason? {
        state.withLockedValue { $0.reason }
    }

    // MARK: Tasks

    /// Adds a task to `phase`; it runs when the coordinated shutdown reaches that phase,
    /// concurrently with the phase's other tasks (Akka's `addTask`/`addCancellableTask`).
    ///
    /// A task may add tasks to *later* phases while it runs. Names need not be unique; they
    /// name the task in logs and in `ShutdownReport.failedTasks`.
    ///
    /// - Parameters:
    ///   - phase: One of `configuration.phases`.
    ///   - name: Names the task in logs and reports.
    ///   - task: The work. It runs in its own Swift `Task`, is cancelled (cooperatively) if still
    ///     running at the phase's time-out, and should not await the system's termination.
    ///     A thrown error is logged and reported; the shutdown goes on.
    /// - Returns: A handle whose `cancel()` removes the task while its phase has not started.
    /// - Throws: `CoordinatedShutdownError` with `.unknownPhase` (not one of the system's
    ///   phases) or `.phaseAlreadyStarted` (the phase has started or passed, the system is
    ///   being shut down without its phases, or has terminated: the task would never run).
    @discardableResult
    public func addTask(phase: Phase, name: String, _ task: @escaping @Sendable () async throws -> Void) throws(CoordinatedShutdownError) -> TaskHandle {
        guard let index = configuration.phases.firstIndex(of: phase) else {
            throw .unknownPhase(phase, task: name, system: systemName, phases: configuration.phases)
        }
        switch state.withLockedValue({ $0.taskAdded(phase: index, name: name, body: task) }) {
        case let .added(id):
            return TaskHandle(shutdown: self, phase: index, id: id)
        case let .rejected(why):
            throw .tooLate(phase, task: name, system: systemName, why: why)
        }
    }

    func cancelTask(phase: Int, id: UInt64) -> Bool {
        state.withLockedValue { $0.taskCancelled(phase: phase, id: id) }
    }

    // MARK: Running

    /// Runs the phases in order, then terminates the system, and returns the report; later
    /// calls (and concurrent ones) wait for the same termination and return its report.
    ///
    /// The first call's `reason` is kept (`reason`); the first caller's task drives the phases.
    /// If the system was shut down with `ActorSystem.shutdown()` first, no phase runs and this
    /// returns that shutdown's report when it has finished.
    ///
    /// Thread-safety: call from any task, but not from a shutdown task (it would wait for its
    /// own phase) and not from inside an actor's handler (a handler cannot await; start it with
    /// `Task { await … }`).
    ///
    /// - Returns: What the system's shutdown found (actors that did not stop in time, dead
    ///   letters, failed asks), plus `failedTasks` and `reason`.
    @discardableResult
    public func run(reason: ShutdownReason) async -> ActorSystem.ShutdownReport {
        let (action, system) = state.withLockedValue { ($0.runRequested(reason: reason), $0.system) }
        switch action {
        case let .terminated(report):
            return report
        case .waitForTermination:
            return await whenTerminated
        case .runPhases:
            break
        }
        guard let system else {
            // Nothing left to stop: the system is gone.
            return systemTerminated(ActorSystem.ShutdownReport(actorsNotStopped: [], deadLetters: 0, asksFailed: 0))
        }
        system.log("coordinated shutdown: running its phases (reason: \(reason))")
        var failures: [TaskFailure] = []
        for (index, phase) in configuration.phases.enumerated() {
            guard case let .runTasks(tasks) = state.withLockedValue({ $0.phaseStarting(index) }) else { break }
            let phaseFailures = await runPhase(phase, tasks, timeout: configuration.timeout(of: phase), on: system.timerScheduler)
            for failure in phaseFailures {
                system.log("coordinated shutdown: \(failure)")
            }
            failures += phaseFailures
        }
        var report = await system.stopActorsAndThreads(timeout: configuration.timeout(of: .actorSystemTerminate))
        report.failedTasks = failures
        report.reason = reason
        return systemTerminated(report)
    }

    /// Runs `tasks` concurrently; returns those that failed or did not finish in `timeout`.
    private func runPhase(_ phase: Phase, _ tasks: [RegisteredTask], timeout: Duration, on scheduler: any DateScheduler) async -> [TaskFailure] {
        guard !tasks.isEmpty else { return [] }
        return await withCheckedContinuation { continuation in
            let run = PhaseRun(phase: phase, tasks: tasks, timeout: timeout, continuation: continuation)
            // The timer first: once a task runs, its phase's time-out is already on the clock.
            run.timerScheduled(scheduler.schedule(after: timeout) { run.timedOut() })
            for task in tasks {
                let body = task.body
                let id = task.id
                run.taskStarted(id: id, Task {
                    do {
                        try await body()
                        run.taskFinished(id: id, error: nil)
                    } catch {
                        run.taskFinished(id: id, error: error)
                    }
                })
            }
        }
    }

    // MARK: Termination

    /// `ActorSystem.shutdown()` began: the phases will not run.
    func plainShutdownStarted() {
        state.withLockedValue { $0.plainShutdownStarted() }
    }

    /// Records the system's termination (the first report wins), runs the termination
    /// callbacks newest first, then resumes the waiters. Returns the first report.
    @discardableResult
    func systemTerminated(_ report: ActorSystem.ShutdownReport) -> ActorSystem.ShutdownReport {
        switch state.withLockedValue({ $0.systemTerminated(report) }) {
        case let .alreadyTerminated(first):
            return first
        case let .notify(observers, waiters, signalHooks, report):
            for hook in signalHooks { hook.dispose() }
            for observer in observers.reversed() { observer(report) }
            for waiter in waiters { waiter.resume(returning: report) }
            return report
        }
    }

    /// Waits until the system has terminated, and returns the report.
    var whenTerminated: ActorSystem.ShutdownReport {
        get async {
            await withCheckedContinuation { continuation in
                if let report = state.withLockedValue({ $0.waiterAdded(continuation) }) {
                    continuation.resume(returning: report)
                }
            }
        }
    }

    /// The report once terminated, else `nil`.
    var terminationReport: ActorSystem.ShutdownReport? {
        state.withLockedValue { $0.report }
    }

    /// Calls `callback` once when the system terminates (at once if it has). Returns an id for
    /// `removeTerminationObserver`, or `nil` if it was called at once.
    @discardableResult
    func addTerminationObserver(_ callback: @escaping @Sendable (ActorSystem.ShutdownReport) -> Void) -> UInt64? {
        let (id, report) = state.withLockedValue { ($0.observerAdded(callback), $0.report) }
        if id == nil, let report { callback(report) }
        return id
    }

    func removeTerminationObserver(_ id: UInt64) {
        state.withLockedValue { $0.observerRemoved(id: id) }
    }

    /// Keeps `hook` installed until the system terminates; disposes it at once if it has.
    func signalHookInstalled(_ hook: SignalHook) {
        if !state.withLockedValue({ $0.signalHookInstalled(hook) }) {
            hook.dispose()
        }
    }
}
