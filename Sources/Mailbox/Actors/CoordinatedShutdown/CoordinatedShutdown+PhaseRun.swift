extension CoordinatedShutdown {
    /// One phase's run: the tasks still running, the failures so far, and the continuation the
    /// phase awaits. Completes once: when the last task finishes, or at the time-out.
    ///
    /// Thread-safety: `state` is behind its lock; the continuation is resumed, the timer
    /// disposed and late tasks cancelled outside it.
    final class PhaseRun: Sendable {
        private struct State {
            /// Tasks not finished, by id, with their Swift task once started.
            var running: [UInt64: Task<Void, Never>?]
            var failures: [UInt64: TaskFailure] = [:]
            var continuation: CheckedContinuation<[TaskFailure], Never>?
            var timer: (any Disposable)?
        }

        private let phase: Phase
        private let timeout: Duration
        /// Registration order, for the report; immutable.
        private let tasks: [RegisteredTask]
        private let state: LockedValueBox<State>

        init(phase: Phase, tasks: [RegisteredTask], timeout: Duration, continuation: CheckedContinuation<[TaskFailure], Never>) {
            self.phase = phase
            self.timeout = timeout
            self.tasks = tasks
            var running: [UInt64: Task<Void, Never>?] = [:]
            for task in tasks { running[task.id] = .some(nil) }
            state = LockedValueBox(State(running: running, continuation: continuation))
        }

        func timerScheduled(_ timer: (any Disposable)?) {
            let completed = state.withLockedValue { state -> Bool in
                guard state.continuation != nil else { return true }
                state.timer = timer
                return false
            }
            if completed { timer?.dispose() }
        }

        func taskStarted(id: UInt64, _ task: Task<Void, Never>) {
            let late = state.withLockedValue { state -> Bool in
                guard state.continuation != nil else { return true }
                if state.running[id] != nil { state.running[id] = task }
                return false
            }
            // The phase already timed out (a cancelled task that has finished ignores it).
            if late { task.cancel() }
        }

        func taskFinished(id: UInt64, error: (any Error)?) {
            let completion = state.withLockedValue { state -> Completion? in
                guard state.continuation != nil, state.running.removeValue(forKey: id) != nil else { return nil }
                if let error, let name = tasks.first(where: { $0.id == id })?.name {
                    state.failures[id] = TaskFailure(phase: phase, name: name, cause: .threw(error))
                }
                return state.running.isEmpty ? complete(&state) : nil
            }
            completion?.perform()
        }

        func timedOut() {
            let completion = state.withLockedValue { state -> Completion? in
                guard state.continuation != nil else { return nil }
                for task in tasks where state.running[task.id] != nil {
                    state.failures[task.id] = TaskFailure(phase: phase, name: task.name, cause: .timedOut(after: timeout))
                }
                return complete(&state)
            }
            completion?.perform()
        }

        /// What completing does outside the lock.
        private struct Completion {
            let continuation: CheckedContinuation<[TaskFailure], Never>
            let failures: [TaskFailure]
            let late: [Task<Void, Never>]
            let timer: (any Disposable)?

            func perform() {
                timer?.dispose()
                for task in late { task.cancel() }
                continuation.resume(returning: failures)
            }
        }

        private func complete(_ state: inout State) -> Completion? {
            guard let continuation = state.continuation else { return nil }
            state.continuation = nil
            let late = state.running.values.compactMap { $0 }
            state.running = [:]
            let timer = state.timer
            state.timer = nil
            let failures = tasks.compactMap { state.failures[$0.id] }
            return Completion(continuation: continuation, failures: failures, late: late, timer: timer)
        }
    }
}
