extension CoordinatedShutdown {
    /// A task as registered: its id (registration order), name, and body.
    struct RegisteredTask: Sendable {
        let id: UInt64
        let name: String
        let body: @Sendable () async throws -> Void
    }

    /// Where a coordinated shutdown is, what is registered in it, and who waits for its end.
    /// A pure state machine: `CoordinatedShutdown` holds it under its lock and performs the
    /// returned actions (running tasks, callbacks, resuming waiters) outside the lock.
    ///
    /// ```
    ///  idle ──run──▶ running(phase: 0) ──▶ … ──▶ running(phase: last) ──┐
    ///   │                 │ shutdown() (the remaining phases are skipped) │ the system stopped
    ///   └─ shutdown() ──▶ bypassed ─────────────────────────────────────┴──▶ terminated
    /// ```
    struct StateMachine {
        enum Stage: Equatable {
            /// Nothing has started: tasks may be added to every phase.
            case idle
            /// `run` is in the phase at this index: tasks may be added to later phases only.
            case running(phase: Int)
            /// `ActorSystem.shutdown()` began: the phases will not run (a run in progress skips
            /// the rest).
            case bypassed
            /// The system has terminated.
            case terminated
        }

        let phases: [Phase]
        private(set) var stage = Stage.idle
        /// The reason of the first `run`.
        private(set) var reason: ShutdownReason?
        /// Whether a `run` has started (the first caller drives the phases).
        private(set) var runStarted = false
        /// Tasks not yet started, per phase index, in registration order.
        private var tasks: [[RegisteredTask]]
        private var nextTaskID: UInt64 = 0
        /// The report of the termination, once terminated.
        private(set) var report: ActorSystem.ShutdownReport?
        private var waiters: [CheckedContinuation<ActorSystem.ShutdownReport, Never>] = []
        /// Termination callbacks, in registration order (they run newest first).
        private var observers: [(id: UInt64, callback: @Sendable (ActorSystem.ShutdownReport) -> Void)] = []
        private var nextObserverID: UInt64 = 0
        /// Installed signal hooks, removed when the system terminates.
        private var signalHooks: [SignalHook] = []
        /// The system this shutdown belongs to (set once, right after the system's `init`).
        weak var system: ActorSystem?

        init(phases: [Phase]) {
            self.phases = phases
            tasks = Array(repeating: [], count: phases.count)
        }

        enum TaskAddedAction {
            case added(id: UInt64)
            /// Too late, with the reason.
            case rejected(String)
        }

        mutating func taskAdded(phase index: Int, name: String, body: @escaping @Sendable () async throws -> Void) -> TaskAddedAction {
            switch stage {
            case .idle:
                break
            case let .running(current) where index > current:
                break
            case let .running(current):
                let now = phases[current] == phases[index] ? "that phase is running" : "the shutdown is already in phase '\(phases[current])'"
                return .rejected(now)
            case .bypassed:
                return .rejected("the system is shutting down without its phases (shutdown() was called)")
            case .terminated:
                return .rejected("the system has terminated")
            }
            let id = nextTaskID
            nextTaskID += 1
            tasks[index].append(RegisteredTask(id: id, name: name, body: body))
            return .added(id: id)
        }

        /// Removes a task whose phase has not started. Returns whether it was removed.
        mutating func taskCancelled(phase index: Int, id: UInt64) -> Bool {
            guard let position = tasks[index].firstIndex(where: { $0.id == id }) else { return false }
            tasks[index].remove(at: position)
            return true
        }

        enum RunRequestedAction {
            /// This caller drives the phases.
            case runPhases
            /// A run is under way, or the system is shutting down: wait for the termination.
            case waitForTermination
            /// Already terminated.
            case terminated(ActorSystem.ShutdownReport)
        }

        mutating func runRequested(reason: ShutdownReason) -> RunRequestedAction {
            if let report { return .terminated(report) }
            guard stage == .idle, !runStarted else { return .waitForTermination }
            runStarted = true
            self.reason = reason
            return .runPhases
        }

        enum PhaseStartingAction {
            /// Run these tasks (maybe none).
            case runTasks([RegisteredTask])
            /// `shutdown()` was called meanwhile: skip the remaining phases.
            case skipRemainingPhases
        }

        mutating func phaseStarting(_ index: Int) -> PhaseStartingAction {
            switch stage {
            case .idle, .running:
                stage = .running(phase: index)
                defer { tasks[index] = [] }
                return .runTasks(tasks[index])
            case .bypassed, .terminated:
                return .skipRemainingPhases
            }
        }

        mutating func plainShutdownStarted() {
            switch stage {
            case .idle, .running:
                stage = .bypassed
                tasks = tasks.map { _ in [] }
            case .bypassed, .terminated:
                break
            }
        }

        enum TerminatedAction {
            /// The first termination: call these (newest first), resume these, remove the hooks.
            case notify(observers: [@Sendable (ActorSystem.ShutdownReport) -> Void],
                        waiters: [CheckedContinuation<ActorSystem.ShutdownReport, Never>],
                        signalHooks: [SignalHook],
                        report: ActorSystem.ShutdownReport)
            /// Terminated before, with this report.
            case alreadyTerminated(ActorSystem.ShutdownReport)
        }

        mutating func systemTerminated(_ report: ActorSystem.ShutdownReport) -> TerminatedAction {
            if let existing = self.report { return .alreadyTerminated(existing) }
            self.report = report
            stage = .terminated
            tasks = tasks.map { _ in [] }
            defer {
                observers = []
                waiters = []
                signalHooks = []
            }
            return .notify(observers: observers.map(\.callback), waiters: waiters, signalHooks: signalHooks, report: report)
        }

        /// Registers a termination callback; `nil` when terminated (call it now with `report`).
        mutating func observerAdded(_ callback: @escaping @Sendable (ActorSystem.ShutdownReport) -> Void) -> UInt64? {
            guard report == nil else { return nil }
            let id = nextObserverID
            nextObserverID += 1
            observers.append((id, callback))
            return id
        }

        mutating func observerRemoved(id: UInt64) {
            observers.removeAll { $0.id == id }
        }

        /// Adds a waiter for the termination; returns the report instead when terminated.
        mutating func waiterAdded(_ continuation: CheckedContinuation<ActorSystem.ShutdownReport, Never>) -> ActorSystem.ShutdownReport? {
            if let report { return report }
            waiters.append(continuation)
            return nil
        }

        /// Keeps `hook` until termination; `false` when terminated (dispose it now).
        mutating func signalHookInstalled(_ hook: SignalHook) -> Bool {
            guard report == nil else { return false }
            signalHooks.append(hook)
            return true
        }
    }
}
