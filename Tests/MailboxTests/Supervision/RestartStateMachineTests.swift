import Testing
@testable import Mailbox

/// The restart state machine alone, without actors: every event in every state, the legal ones
/// checked for the action and the next state, the illegal ones proven to crash (exit tests).
@Suite("Restart state machine")
struct RestartStateMachineTests {
    /// A state reached by real events, with the back-off timer it holds (if any).
    enum Fixture: String, CaseIterable, Codable, Sendable {
        case idle
        case suspended
        /// Own rule restarting, waiting for its children (no back-off).
        case stoppingOwnWaitingForChildren
        /// Own rule restarting, waiting for the back-off (no children).
        case stoppingOwnWaitingForBackoff
        /// Own rule restarting, waiting for both.
        case stoppingOwnWaitingForBoth
        /// The supervisor ordered the stop half; waiting for the children.
        case stoppingForSupervisorStop
        /// The supervisor ordered a restart of this child alone; waiting for the children.
        case stoppingForSupervisorRestart
        case awaitingStart

        /// Back-off generation handed to the fixture's timer.
        static let generation: UInt64 = 1

        func make() -> (machine: RestartStateMachine, timer: AnyDisposable) {
            var machine = RestartStateMachine()
            let timer = AnyDisposable()
            func backoff() -> RestartStateMachine.Backoff {
                .init(generation: machine.nextBackoffGeneration(), timer: timer, stashCapacity: 5)
            }
            switch self {
            case .idle:
                break
            case .suspended:
                _ = machine.suspendedForSupervisor()
            case .stoppingOwnWaitingForChildren:
                _ = machine.restartDecided(source: .rule(0), stopsChildren: true, hasChildren: true, backoff: nil)
            case .stoppingOwnWaitingForBackoff:
                _ = machine.restartDecided(source: .rule(0), stopsChildren: true, hasChildren: false, backoff: backoff())
            case .stoppingOwnWaitingForBoth:
                _ = machine.restartDecided(source: .guardian, stopsChildren: true, hasChildren: true, backoff: backoff())
            case .stoppingForSupervisorStop:
                _ = machine.stopOrdered(thenStart: false, hasChildren: true)
            case .stoppingForSupervisorRestart:
                _ = machine.suspendedForSupervisor()
                _ = machine.stopOrdered(thenStart: true, hasChildren: true)
            case .awaitingStart:
                _ = machine.stopOrdered(thenStart: false, hasChildren: false)
            }
            return (machine, timer)
        }
    }

    /// Every event the machine takes, with the facts the cell passes along.
    enum Event: String, CaseIterable, Codable, Sendable {
        case restartDecidedWithChildren
        case restartDecidedWithBackoff
        case restartDecidedNothingToAwait
        case suspendedForSupervisor
        case stopOrderedWithChildren
        case stopOrderedNoChildren
        case restartOrderedWithChildren
        case restartOrderedNoChildren
        case startOrdered
        case lastChildTerminated
        case childTerminatedOthersRemain
        case backoffElapsed
        case staleBackoffElapsed
        case stopped

        func apply(to machine: inout RestartStateMachine) -> RestartStateMachine.Action {
            switch self {
            case .restartDecidedWithChildren:
                machine.restartDecided(source: .rule(1), stopsChildren: true, hasChildren: true, backoff: nil)
            case .restartDecidedWithBackoff:
                machine.restartDecided(
                    source: .rule(1), stopsChildren: false, hasChildren: true,
                    backoff: .init(generation: machine.nextBackoffGeneration(), timer: nil, stashCapacity: 3))
            case .restartDecidedNothingToAwait:
                machine.restartDecided(source: .delegated, stopsChildren: true, hasChildren: false, backoff: nil)
            case .suspendedForSupervisor:
                machine.suspendedForSupervisor()
            case .stopOrderedWithChildren:
                machine.stopOrdered(thenStart: false, hasChildren: true)
            case .stopOrderedNoChildren:
                machine.stopOrdered(thenStart: false, hasChildren: false)
            case .restartOrderedWithChildren:
                machine.stopOrdered(thenStart: true, hasChildren: true)
            case .restartOrderedNoChildren:
                machine.stopOrdered(thenStart: true, hasChildren: false)
            case .startOrdered:
                machine.startOrdered()
            case .lastChildTerminated:
                machine.childTerminated(allChildrenGone: true)
            case .childTerminatedOthersRemain:
                machine.childTerminated(allChildrenGone: false)
            case .backoffElapsed:
                machine.backoffElapsed(generation: Fixture.generation)
            case .staleBackoffElapsed:
                machine.backoffElapsed(generation: Fixture.generation + 100)
            case .stopped:
                machine.stopped()
            }
        }
    }

    /// What an event does in a state: crash, or an action (described) and the state after it.
    enum Outcome: Equatable, CustomStringConvertible {
        case crash
        case transition(action: String, state: String)

        var description: String {
            switch self {
            case .crash: "crash"
            case let .transition(action, state): "\(action) → \(state)"
            }
        }
    }

    // MARK: The table

    /// The specification: for every state and every event, what must happen.
    static func expected(_ fixture: Fixture, _ event: Event) -> Outcome {
        func go(_ action: String, _ state: String) -> Outcome { .transition(action: action, state: state) }
        let ownStopping: Set<Fixture> = [.stoppingOwnWaitingForChildren, .stoppingOwnWaitingForBackoff, .stoppingOwnWaitingForBoth]
        switch event {
        // A failure is decided only while running, so only in `idle`.
        case .restartDecidedWithChildren:
            return fixture == .idle ? go("stopHalf(stopsChildren: true, then: wait)", "stopping(rule(1), children, stash nil, then complete)") : .crash
        case .restartDecidedWithBackoff:
            return fixture == .idle ? go("stopHalf(stopsChildren: false, then: wait)", "stopping(rule(1), backoff, stash 3, then complete)") : .crash
        case .restartDecidedNothingToAwait:
            return fixture == .idle ? go("stopHalf(stopsChildren: true, then: complete(delegated))", "idle") : .crash
        case .suspendedForSupervisor:
            return fixture == .idle ? go("suspend", "suspended") : .crash

        // A supervisor's orders: to a running or suspended child (stop half now), or replacing a
        // restart the child took by its own rules (its timer cancelled); never twice.
        case .stopOrderedWithChildren, .stopOrderedNoChildren, .restartOrderedWithChildren, .restartOrderedNoChildren:
            let thenStart = event == .restartOrderedWithChildren || event == .restartOrderedNoChildren
            let then = thenStart ? "complete" : "awaitStart"
            let done = thenStart ? "complete(parent)" : "acknowledgeStop"
            let stateWhenDone = thenStart ? "idle" : "awaitingStart"
            let hasChildren = event == .stopOrderedWithChildren || event == .restartOrderedWithChildren
            if fixture == .idle || fixture == .suspended {
                return hasChildren
                    ? go("stopHalf(stopsChildren: true, then: wait)", "stopping(parent, children, stash nil, then \(then))")
                    : go("stopHalf(stopsChildren: true, then: \(done))", stateWhenDone)
            }
            if ownStopping.contains(fixture) {
                // The children told to stop by the replaced restart are still awaited (the
                // facts passed now are not: the stop half does not run again).
                let timer = fixture == .stoppingOwnWaitingForChildren ? "nil" : "timer"
                let stillWaiting = fixture != .stoppingOwnWaitingForBackoff
                return stillWaiting
                    ? go("replaceBackoff(\(timer), then: wait)", "stopping(parent, children, stash nil, then \(then))")
                    : go("replaceBackoff(\(timer), then: \(done))", stateWhenDone)
            }
            return .crash
        case .startOrdered:
            return fixture == .awaitingStart ? go("proceed(complete(parent))", "idle") : .crash

        // Late or unrelated events do nothing.
        case .lastChildTerminated:
            switch fixture {
            case .stoppingOwnWaitingForChildren: return go("proceed(complete(rule(0)))", "idle")
            case .stoppingOwnWaitingForBoth: return go("none", "stopping(guardian, backoff, stash 5, then complete)")
            case .stoppingForSupervisorStop: return go("proceed(acknowledgeStop)", "awaitingStart")
            case .stoppingForSupervisorRestart: return go("proceed(complete(parent))", "idle")
            default: return go("none", fixture.unchangedState)
            }
        case .childTerminatedOthersRemain, .staleBackoffElapsed:
            return go("none", fixture.unchangedState)
        case .backoffElapsed:
            switch fixture {
            case .stoppingOwnWaitingForBackoff: return go("proceed(complete(rule(0)))", "idle")
            case .stoppingOwnWaitingForBoth: return go("none", "stopping(guardian, children, stash 5, then complete)")
            default: return go("none", fixture.unchangedState)
            }
        case .stopped:
            let holdsTimer = fixture == .stoppingOwnWaitingForBackoff || fixture == .stoppingOwnWaitingForBoth
            return go(holdsTimer ? "cancelBackoff(timer)" : "none", "idle")
        }
    }

    @Test(arguments: Fixture.allCases, Event.allCases)
    func everyEventInEveryState(_ fixture: Fixture, _ event: Event) async {
        let outcome = Self.expected(fixture, event)
        switch outcome {
        case .crash:
            await Self.expectCrash(event, in: fixture)
        case .transition:
            var (machine, timer) = fixture.make()
            let action = event.apply(to: &machine)
            let actual = Outcome.transition(action: describe(action, timer: timer), state: describe(machine.state))
            #expect(actual == outcome, "\(event) in \(fixture)")
        }
    }

    /// Applies `event` in `fixture`'s state (in an exit test's child process).
    static func apply(_ event: Event, in fixture: Fixture) {
        var (machine, _) = fixture.make()
        _ = event.apply(to: &machine)
    }

    /// One exit test per illegal transition of the table. (An exit test's body cannot capture
    /// the arguments, so each is spelled out; a combination missing here is recorded as an issue.)
    static func expectCrash(_ event: Event, in fixture: Fixture) async {
        switch (fixture, event) {
        case (.idle, .startOrdered):
            await #expect(processExitsWith: .failure) { Self.apply(.startOrdered, in: .idle) }
        case (.suspended, .restartDecidedWithChildren):
            await #expect(processExitsWith: .failure) { Self.apply(.restartDecidedWithChildren, in: .suspended) }
        case (.suspended, .restartDecidedWithBackoff):
            await #expect(processExitsWith: .failure) { Self.apply(.restartDecidedWithBackoff, in: .suspended) }
        case (.suspended, .restartDecidedNothingToAwait):
            await #expect(processExitsWith: .failure) { Self.apply(.restartDecidedNothingToAwait, in: .suspended) }
        case (.suspended, .suspendedForSupervisor):
            await #expect(processExitsWith: .failure) { Self.apply(.suspendedForSupervisor, in: .suspended) }
        case (.suspended, .startOrdered):
            await #expect(processExitsWith: .failure) { Self.apply(.startOrdered, in: .suspended) }
        case (.stoppingOwnWaitingForChildren, .restartDecidedWithChildren):
            await #expect(processExitsWith: .failure) { Self.apply(.restartDecidedWithChildren, in: .stoppingOwnWaitingForChildren) }
        case (.stoppingOwnWaitingForChildren, .restartDecidedWithBackoff):
            await #expect(processExitsWith: .failure) { Self.apply(.restartDecidedWithBackoff, in: .stoppingOwnWaitingForChildren) }
        case (.stoppingOwnWaitingForChildren, .restartDecidedNothingToAwait):
            await #expect(processExitsWith: .failure) { Self.apply(.restartDecidedNothingToAwait, in: .stoppingOwnWaitingForChildren) }
        case (.stoppingOwnWaitingForChildren, .suspendedForSupervisor):
            await #expect(processExitsWith: .failure) { Self.apply(.suspendedForSupervisor, in: .stoppingOwnWaitingForChildren) }
        case (.stoppingOwnWaitingForChildren, .startOrdered):
            await #expect(processExitsWith: .failure) { Self.apply(.startOrdered, in: .stoppingOwnWaitingForChildren) }
        case (.stoppingOwnWaitingForBackoff, .restartDecidedWithChildren):
            await #expect(processExitsWith: .failure) { Self.apply(.restartDecidedWithChildren, in: .stoppingOwnWaitingForBackoff) }
        case (.stoppingOwnWaitingForBackoff, .restartDecidedWithBackoff):
            await #expect(processExitsWith: .failure) { Self.apply(.restartDecidedWithBackoff, in: .stoppingOwnWaitingForBackoff) }
        case (.stoppingOwnWaitingForBackoff, .restartDecidedNothingToAwait):
            await #expect(processExitsWith: .failure) { Self.apply(.restartDecidedNothingToAwait, in: .stoppingOwnWaitingForBackoff) }
        case (.stoppingOwnWaitingForBackoff, .suspendedForSupervisor):
            await #expect(processExitsWith: .failure) { Self.apply(.suspendedForSupervisor, in: .stoppingOwnWaitingForBackoff) }
        case (.stoppingOwnWaitingForBackoff, .startOrdered):
            await #expect(processExitsWith: .failure) { Self.apply(.startOrdered, in: .stoppingOwnWaitingForBackoff) }
        case (.stoppingOwnWaitingForBoth, .restartDecidedWithChildren):
            await #expect(processExitsWith: .failure) { Self.apply(.restartDecidedWithChildren, in: .stoppingOwnWaitingForBoth) }
        case (.stoppingOwnWaitingForBoth, .restartDecidedWithBackoff):
            await #expect(processExitsWith: .failure) { Self.apply(.restartDecidedWithBackoff, in: .stoppingOwnWaitingForBoth) }
        case (.stoppingOwnWaitingForBoth, .restartDecidedNothingToAwait):
            await #expect(processExitsWith: .failure) { Self.apply(.restartDecidedNothingToAwait, in: .stoppingOwnWaitingForBoth) }
        case (.stoppingOwnWaitingForBoth, .suspendedForSupervisor):
            await #expect(processExitsWith: .failure) { Self.apply(.suspendedForSupervisor, in: .stoppingOwnWaitingForBoth) }
        case (.stoppingOwnWaitingForBoth, .startOrdered):
            await #expect(processExitsWith: .failure) { Self.apply(.startOrdered, in: .stoppingOwnWaitingForBoth) }
        case (.stoppingForSupervisorStop, .restartDecidedWithChildren):
            await #expect(processExitsWith: .failure) { Self.apply(.restartDecidedWithChildren, in: .stoppingForSupervisorStop) }
        case (.stoppingForSupervisorStop, .restartDecidedWithBackoff):
            await #expect(processExitsWith: .failure) { Self.apply(.restartDecidedWithBackoff, in: .stoppingForSupervisorStop) }
        case (.stoppingForSupervisorStop, .restartDecidedNothingToAwait):
            await #expect(processExitsWith: .failure) { Self.apply(.restartDecidedNothingToAwait, in: .stoppingForSupervisorStop) }
        case (.stoppingForSupervisorStop, .suspendedForSupervisor):
            await #expect(processExitsWith: .failure) { Self.apply(.suspendedForSupervisor, in: .stoppingForSupervisorStop) }
        case (.stoppingForSupervisorStop, .stopOrderedWithChildren):
            await #expect(processExitsWith: .failure) { Self.apply(.stopOrderedWithChildren, in: .stoppingForSupervisorStop) }
        case (.stoppingForSupervisorStop, .stopOrderedNoChildren):
            await #expect(processExitsWith: .failure) { Self.apply(.stopOrderedNoChildren, in: .stoppingForSupervisorStop) }
        case (.stoppingForSupervisorStop, .restartOrderedWithChildren):
            await #expect(processExitsWith: .failure) { Self.apply(.restartOrderedWithChildren, in: .stoppingForSupervisorStop) }
        case (.stoppingForSupervisorStop, .restartOrderedNoChildren):
            await #expect(processExitsWith: .failure) { Self.apply(.restartOrderedNoChildren, in: .stoppingForSupervisorStop) }
        case (.stoppingForSupervisorStop, .startOrdered):
            await #expect(processExitsWith: .failure) { Self.apply(.startOrdered, in: .stoppingForSupervisorStop) }
        case (.stoppingForSupervisorRestart, .restartDecidedWithChildren):
            await #expect(processExitsWith: .failure) { Self.apply(.restartDecidedWithChildren, in: .stoppingForSupervisorRestart) }
        case (.stoppingForSupervisorRestart, .restartDecidedWithBackoff):
            await #expect(processExitsWith: .failure) { Self.apply(.restartDecidedWithBackoff, in: .stoppingForSupervisorRestart) }
        case (.stoppingForSupervisorRestart, .restartDecidedNothingToAwait):
            await #expect(processExitsWith: .failure) { Self.apply(.restartDecidedNothingToAwait, in: .stoppingForSupervisorRestart) }
        case (.stoppingForSupervisorRestart, .suspendedForSupervisor):
            await #expect(processExitsWith: .failure) { Self.apply(.suspendedForSupervisor, in: .stoppingForSupervisorRestart) }
        case (.stoppingForSupervisorRestart, .stopOrderedWithChildren):
            await #expect(processExitsWith: .failure) { Self.apply(.stopOrderedWithChildren, in: .stoppingForSupervisorRestart) }
        case (.stoppingForSupervisorRestart, .stopOrderedNoChildren):
            await #expect(processExitsWith: .failure) { Self.apply(.stopOrderedNoChildren, in: .stoppingForSupervisorRestart) }
        case (.stoppingForSupervisorRestart, .restartOrderedWithChildren):
            await #expect(processExitsWith: .failure) { Self.apply(.restartOrderedWithChildren, in: .stoppingForSupervisorRestart) }
        case (.stoppingForSupervisorRestart, .restartOrderedNoChildren):
            await #expect(processExitsWith: .failure) { Self.apply(.restartOrderedNoChildren, in: .stoppingForSupervisorRestart) }
        case (.stoppingForSupervisorRestart, .startOrdered):
            await #expect(processExitsWith: .failure) { Self.apply(.startOrdered, in: .stoppingForSupervisorRestart) }
        case (.awaitingStart, .restartDecidedWithChildren):
            await #expect(processExitsWith: .failure) { Self.apply(.restartDecidedWithChildren, in: .awaitingStart) }
        case (.awaitingStart, .restartDecidedWithBackoff):
            await #expect(processExitsWith: .failure) { Self.apply(.restartDecidedWithBackoff, in: .awaitingStart) }
        case (.awaitingStart, .restartDecidedNothingToAwait):
            await #expect(processExitsWith: .failure) { Self.apply(.restartDecidedNothingToAwait, in: .awaitingStart) }
        case (.awaitingStart, .suspendedForSupervisor):
            await #expect(processExitsWith: .failure) { Self.apply(.suspendedForSupervisor, in: .awaitingStart) }
        case (.awaitingStart, .stopOrderedWithChildren):
            await #expect(processExitsWith: .failure) { Self.apply(.stopOrderedWithChildren, in: .awaitingStart) }
        case (.awaitingStart, .stopOrderedNoChildren):
            await #expect(processExitsWith: .failure) { Self.apply(.stopOrderedNoChildren, in: .awaitingStart) }
        case (.awaitingStart, .restartOrderedWithChildren):
            await #expect(processExitsWith: .failure) { Self.apply(.restartOrderedWithChildren, in: .awaitingStart) }
        case (.awaitingStart, .restartOrderedNoChildren):
            await #expect(processExitsWith: .failure) { Self.apply(.restartOrderedNoChildren, in: .awaitingStart) }
        default:
            Issue.record("no exit test for \(event) in \(fixture)")
        }
    }

    // MARK: Properties the cell relies on

    @Test func messagesAreKeptOnlyDuringABackoff_upToItsStashCapacity() {
        var machine = RestartStateMachine()
        #expect(machine.stashCapacity == nil)
        let generation = machine.nextBackoffGeneration()
        _ = machine.restartDecided(
            source: .rule(0), stopsChildren: true, hasChildren: true,
            backoff: .init(generation: generation, timer: nil, stashCapacity: 7))
        #expect(machine.stashCapacity == 7)
        // Still kept after the back-off, while the children stop.
        _ = machine.backoffElapsed(generation: generation)
        #expect(machine.stashCapacity == 7)
        #expect(machine.isRestarting)
        // A supervisor's order replaces the restart: messages wait in the mailbox again.
        _ = machine.stopOrdered(thenStart: true, hasChildren: true)
        #expect(machine.stashCapacity == nil)
        _ = machine.childTerminated(allChildrenGone: true)
        #expect(!machine.isRestarting)
    }

    @Test func eachBackoffHasItsOwnGeneration_soAReplacedTimerIsStale() {
        var machine = RestartStateMachine()
        let first = machine.nextBackoffGeneration()
        _ = machine.restartDecided(
            source: .rule(0), stopsChildren: false, hasChildren: false,
            backoff: .init(generation: first, timer: nil, stashCapacity: 1))
        _ = machine.stopped()
        let second = machine.nextBackoffGeneration()
        #expect(second != first)
        _ = machine.restartDecided(
            source: .rule(0), stopsChildren: false, hasChildren: false,
            backoff: .init(generation: second, timer: nil, stashCapacity: 1))
        #expect(describe(machine.backoffElapsed(generation: first), timer: nil) == "none")
        #expect(machine.isRestarting)
        #expect(describe(machine.backoffElapsed(generation: second), timer: nil) == "proceed(complete(rule(0)))")
        #expect(!machine.isRestarting)
    }

    // MARK: Describing

    private func describe(_ action: RestartStateMachine.Action, timer: AnyDisposable?) -> String {
        func name(_ disposable: (any Disposable)?) -> String {
            guard let disposable else { return "nil" }
            return disposable as AnyObject === timer ? "timer" : "other"
        }
        switch action {
        case .none: return "none"
        case .suspend: return "suspend"
        case let .stopHalf(stopsChildren, then): return "stopHalf(stopsChildren: \(stopsChildren), then: \(describe(then)))"
        case let .replaceBackoff(cancelling, then): return "replaceBackoff(\(name(cancelling)), then: \(describe(then)))"
        case let .proceed(step): return "proceed(\(describe(step)))"
        case let .cancelBackoff(disposable): return "cancelBackoff(\(name(disposable)))"
        }
    }

    private func describe(_ step: RestartStateMachine.Step) -> String {
        switch step {
        case .wait: "wait"
        case .acknowledgeStop: "acknowledgeStop"
        case let .complete(source): "complete(\(source))"
        }
    }

    private func describe(_ state: RestartStateMachine.State) -> String {
        switch state {
        case .idle: return "idle"
        case .suspended: return "suspended"
        case .awaitingStart: return "awaitingStart"
        case let .stopping(stopping):
            var awaited: [String] = []
            if stopping.waitingForChildren { awaited.append("children") }
            if stopping.backoff != nil { awaited.append("backoff") }
            let stash = stopping.stashCapacity.map(String.init) ?? "nil"
            let then = stopping.thenAwaitsStartOrder ? "awaitStart" : "complete"
            return "stopping(\(stopping.source), \(awaited.joined(separator: "+")), stash \(stash), then \(then))"
        }
    }
}

extension RestartStateMachineTests.Fixture {
    /// The description of the fixture's own state, for events that leave it unchanged.
    var unchangedState: String {
        switch self {
        case .idle: "idle"
        case .suspended: "suspended"
        case .stoppingOwnWaitingForChildren: "stopping(rule(0), children, stash nil, then complete)"
        case .stoppingOwnWaitingForBackoff: "stopping(rule(0), backoff, stash 5, then complete)"
        case .stoppingOwnWaitingForBoth: "stopping(guardian, children+backoff, stash 5, then complete)"
        case .stoppingForSupervisorStop: "stopping(parent, children, stash nil, then awaitStart)"
        case .stoppingForSupervisorRestart: "stopping(parent, children, stash nil, then complete)"
        case .awaitingStart: "awaitingStart"
        }
    }
}
