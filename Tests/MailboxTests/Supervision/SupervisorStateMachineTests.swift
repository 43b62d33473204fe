import Testing
@testable import Mailbox

/// The `Supervisor`'s state machine alone, without actors: every event in every state, the legal
/// ones checked for the action and the state after it, the illegal ones proven to crash (exit
/// tests).
///
/// The supervisor of every fixture is `restForOne` over two permanent children of its specs,
/// `a` then `b`; `c` is the child a `startChild` request adds, and a stranger everywhere else.
@Suite("Supervisor state machine")
struct SupervisorStateMachineTests {
    /// The machine and the children's actors (plain targets: the machine only compares them).
    struct World {
        var machine: SupervisorStateMachine
        let a: AnyTarget
        let b: AnyTarget
        let c: AnyTarget
        let system: ActorSystem

        init() {
            let supervisor = ActorAddress(system: "s", path: "/user/sup", incarnation: 1)
            a = AnyTarget(address: supervisor.child("a", incarnation: 2))
            b = AnyTarget(address: supervisor.child("b", incarnation: 3))
            c = AnyTarget(address: supervisor.child("c", incarnation: 4))
            machine = SupervisorStateMachine(supervisor: supervisor, strategy: .restForOne, specs: [
                ChildSpec(id: "a") { Behavior<Int>.ignore },
                ChildSpec(id: "b") { Behavior<Int>.ignore },
            ])
            system = makeTestSystem().0
        }

        /// A ref for a reply: never told here (the machine only returns replies).
        func replyRef<Reply: Sendable>(_: Reply.Type = Reply.self) -> ActorRef<Reply> {
            ActorRef(ActorRefTarget<Reply>(address: ActorAddress(system: "s", path: "/user/reply", incarnation: 9), system: system))
        }

        func name(_ target: AnyTarget) -> String {
            target === a ? "a" : target === b ? "b" : target === c ? "c" : "?"
        }
    }

    /// A state reached by real events.
    enum Fixture: String, CaseIterable, Codable, Sendable {
        case initial
        /// Started; the behavior spawns `a`.
        case spawningA
        /// Starting: `a` spawned, its acknowledgement awaited (`b` not spawned yet).
        case startingAwaitingA
        case idle
        /// `a` failed; the restart of `a` and `b` is being counted.
        case countingRestart
        /// Restarting `a` and `b`: `b`'s stop half awaited.
        case restartStoppingB
        /// `b` failed; restarting it alone, in place.
        case restartingBInPlace
        /// `terminateChild("b")`: `b`'s termination awaited.
        case terminatingB
        /// `startChild` of `c`: `c` spawned, its acknowledgement awaited.
        case requestedStartOfC
        /// `a` failed once too often.
        case shutDown
        /// Spawning `a` failed.
        case failed

        func make() -> World {
            var world = World()
            switch self {
            case .initial:
                break
            case .spawningA:
                _ = world.machine.started()
            case .startingAwaitingA:
                _ = world.machine.started()
                _ = world.machine.childSpawned(world.a)
            case .idle:
                Fixture.start(&world)
            case .countingRestart:
                Fixture.start(&world)
                _ = world.machine.childFailed(world.a, error: Boom(tag: "a"))
            case .restartStoppingB:
                Fixture.start(&world)
                _ = world.machine.childFailed(world.a, error: Boom(tag: "a"))
                _ = world.machine.restartCounted(admitted: true)
            case .restartingBInPlace:
                Fixture.start(&world)
                _ = world.machine.childFailed(world.b, error: Boom(tag: "b"))
                _ = world.machine.restartCounted(admitted: true)
            case .terminatingB:
                Fixture.start(&world)
                _ = world.machine.messageReceived(.terminateChild(id: "b", replyTo: world.replyRef()))
            case .requestedStartOfC:
                Fixture.start(&world)
                _ = world.machine.messageReceived(.startChild(ChildSpec(id: "c") { Behavior<Int>.ignore }, replyTo: world.replyRef()))
                _ = world.machine.childSpawned(world.c)
            case .shutDown:
                Fixture.start(&world)
                _ = world.machine.childFailed(world.a, error: Boom(tag: "a"))
                _ = world.machine.restartCounted(admitted: false)
            case .failed:
                _ = world.machine.started()
                _ = world.machine.childSpawnFailed(Boom(tag: "spawn"))
            }
            return world
        }

        /// Starts `a` and `b`, each acknowledging.
        private static func start(_ world: inout World) {
            _ = world.machine.started()
            _ = world.machine.childSpawned(world.a)
            _ = world.machine.childStepDone(world.a, setupFailure: nil)
            _ = world.machine.childSpawned(world.b)
            _ = world.machine.childStepDone(world.b, setupFailure: nil)
        }
    }

    /// Every event the machine takes.
    enum Event: String, CaseIterable, Codable, Sendable {
        case started
        case whichChildrenReceived
        case terminateChildBReceived
        case aFailed, bFailed, cFailed
        case aTerminated, bTerminated, cTerminated
        case aStepDone, bStepDone, cStepDone
        case cStepDoneWithSetupFailure
        case childSpawned
        case childSpawnFailed
        case restartAdmitted
        case restartRefused

        func apply(to world: inout World) -> SupervisorStateMachine.Action {
            switch self {
            case .started: world.machine.started()
            case .whichChildrenReceived: world.machine.messageReceived(.whichChildren(replyTo: world.replyRef()))
            case .terminateChildBReceived: world.machine.messageReceived(.terminateChild(id: "b", replyTo: world.replyRef()))
            case .aFailed: world.machine.childFailed(world.a, error: Boom(tag: "a"))
            case .bFailed: world.machine.childFailed(world.b, error: Boom(tag: "b"))
            case .cFailed: world.machine.childFailed(world.c, error: Boom(tag: "c"))
            case .aTerminated: world.machine.childTerminated(world.a, failure: nil, isShutdown: false)
            case .bTerminated: world.machine.childTerminated(world.b, failure: nil, isShutdown: false)
            case .cTerminated: world.machine.childTerminated(world.c, failure: nil, isShutdown: false)
            case .aStepDone: world.machine.childStepDone(world.a, setupFailure: nil)
            case .bStepDone: world.machine.childStepDone(world.b, setupFailure: nil)
            case .cStepDone: world.machine.childStepDone(world.c, setupFailure: nil)
            case .cStepDoneWithSetupFailure: world.machine.childStepDone(world.c, setupFailure: Boom(tag: "setup"))
            case .childSpawned: world.machine.childSpawned(world.a)
            case .childSpawnFailed: world.machine.childSpawnFailed(Boom(tag: "spawn"))
            case .restartAdmitted: world.machine.restartCounted(admitted: true)
            case .restartRefused: world.machine.restartCounted(admitted: false)
            }
        }

        var child: String? {
            let name = rawValue.prefix(1)
            return ["a", "b", "c"].contains(name) && rawValue.dropFirst().first?.isUppercase == true ? String(name) : nil
        }
    }

    /// What an event does in a state: crash, or an action (described) and the state after it
    /// (the restart state machine's table says it the same way).
    typealias Outcome = RestartStateMachineTests.Outcome

    // MARK: The table

    /// The fixture's state, for events that leave it unchanged.
    static func unchanged(_ fixture: Fixture) -> String {
        switch fixture {
        case .initial: "initial {a- b-}"
        case .spawningA: "busy(start, awaiting spawn a, steps [start(b)], backlog 0+0) {a- b-}"
        case .startingAwaitingA: "busy(start, awaiting a: start(a), steps [start(b)], backlog 0+0) {a+ b-}"
        case .idle: "idle {a+ b+}"
        case .countingRestart: "countingRestart(steps [stop(b), stop(a), start(a), start(b)], failure a, backlog 0+0) {a+ b+}"
        case .restartStoppingB: "busy(restart, awaiting b: stop(b), steps [stop(a), start(a), start(b)], backlog 0+0) {a+ b+}"
        case .restartingBInPlace: "busy(restart, awaiting b: restartInPlace(b), steps [], backlog 0+0) {a+ b+}"
        case .terminatingB: "busy(request(terminate b), awaiting b: terminate(b), steps [], backlog 0+0) {a+ b+}"
        case .requestedStartOfC: "busy(request(start c new), awaiting c: start(c), steps [], backlog 0+0) {a+ b+ c+}"
        case .shutDown: "shutDown {a+ b+}"
        case .failed: "failed {a- b-}"
        }
    }

    /// The specification: for every state and every event, what must happen.
    static func expected(_ fixture: Fixture, _ event: Event) -> Outcome {
        func go(_ action: String, _ state: String) -> Outcome { .transition(action: action, state: state) }
        let same = unchanged(fixture)
        /// `same` with the backlog counts raised and the children's marks replaced.
        func queued(events: Int = 0, messages: Int = 0, children: String? = nil) -> String {
            var state = same.replacingOccurrences(of: "backlog 0+0", with: "backlog \(events)+\(messages)")
            if let children { state = String(state.prefix { $0 != "{" }) + "{\(children)}" }
            return state
        }
        switch fixture {
        case .initial:
            // Only the start.
            return event == .started
                ? go("spawn(a, sharing: false)", unchanged(.spawningA)) : .crash
        case .spawningA:
            // The behavior reports the spawn at once: nothing else can happen meanwhile.
            switch event {
            case .childSpawned: return go("wait", unchanged(.startingAwaitingA))
            case .childSpawnFailed: return go("fail(spawn)", unchanged(.failed))
            default: return .crash
            }
        case .countingRestart:
            // The behavior counts the restart at once: nothing else can happen meanwhile.
            switch event {
            case .restartAdmitted: return go("send(restartStop → b); wait", unchanged(.restartStoppingB))
            case .restartRefused: return go("shutDown(a); wait", unchanged(.shutDown))
            default: return .crash
            }
        case .shutDown, .failed:
            // Final: messages are dead letters, everything else does nothing; the events that
            // answer the behavior's own question cannot come.
            switch event {
            case .started, .childSpawned, .childSpawnFailed, .restartAdmitted, .restartRefused: return .crash
            case .whichChildrenReceived, .terminateChildBReceived: return go("deadLetter; wait", same)
            default: return go("wait", same)
            }
        case .idle:
            switch event {
            case .started, .childSpawned, .childSpawnFailed, .restartAdmitted, .restartRefused: return .crash
            case .whichChildrenReceived: return go("reply(children [a+, b+]); wait", same)
            case .terminateChildBReceived: return go("send(stop → b); wait", unchanged(.terminatingB))
            // restForOne: a's failure restarts a and b; b's, b alone and in place.
            case .aFailed: return go("countRestart", unchanged(.countingRestart))
            case .bFailed: return go("countRestart", "countingRestart(steps [restartInPlace(b)], failure b, backlog 0+0) {a+ b+}")
            case .cFailed: return go("send(stop → c); wait", same)
            // A terminated child is spawned again, its set around it.
            case .aTerminated: return go("countRestart", "countingRestart(steps [stop(b), stop(a), start(a), start(b)], failure child a stopped, backlog 0+0) {a- b+}")
            case .bTerminated: return go("countRestart", "countingRestart(steps [stop(b), start(b)], failure child b stopped, backlog 0+0) {a+ b-}")
            case .cTerminated: return go("wait", same)
            // Nobody waits for an acknowledgement.
            case .aStepDone, .bStepDone, .cStepDone, .cStepDoneWithSetupFailure: return go("wait", same)
            }
        case .startingAwaitingA, .restartStoppingB, .restartingBInPlace, .terminatingB, .requestedStartOfC:
            break
        }

        // Busy, waiting for a child: what concerns the awaited child moves the work on; the rest
        // waits in the backlog (failures and terminations of its children, messages) or does
        // nothing (strangers' terminations, unawaited acknowledgements); a stranger that fails
        // is stopped.
        let awaited = ["startingAwaitingA": "a", "requestedStartOfC": "c"][fixture.rawValue] ?? "b"
        let known: Set<String> = fixture == .startingAwaitingA ? ["a"] : fixture == .requestedStartOfC ? ["a", "b", "c"] : ["a", "b"]
        /// The work moved on after the awaited child's step (acknowledged, or ended by its
        /// termination).
        func movedOn(terminated: Bool) -> Outcome {
            switch fixture {
            case .startingAwaitingA:
                // The next child of the specs is spawned (a terminated one is not spawned again).
                return go("spawn(b, sharing: false)", "busy(start, awaiting spawn b, steps [], backlog 0+0) {a\(terminated ? "-" : "+") b-}")
            case .restartStoppingB:
                return go("send(restartStop → a); wait", "busy(restart, awaiting a: stop(a), steps [start(a), start(b)], backlog 0+0) {a+ b\(terminated ? "-" : "+")}")
            case .restartingBInPlace:
                return go("wait", "idle {a+ b\(terminated ? "-" : "+")}")
            case .terminatingB:
                return go("reply(done ok); wait", "idle {a+ b\(terminated ? "-" : "+")}")
            default:
                // The requested start: answered with the child, or (it terminated) an error, and
                // the spec of the child that did not start goes.
                return terminated
                    ? go("reply(started startFailed); wait", "idle {a+ b+}")
                    : go("reply(started ok c); wait", "idle {a+ b+ c+}")
            }
        }
        switch event {
        case .started, .childSpawned, .childSpawnFailed, .restartAdmitted, .restartRefused:
            return .crash
        case .whichChildrenReceived, .terminateChildBReceived:
            return go("wait", queued(messages: 1))
        case .aFailed, .bFailed, .cFailed:
            let child = event.child!
            return known.contains(child) ? go("wait", queued(events: 1)) : go("send(stop → \(child)); wait", same)
        case .aTerminated, .bTerminated, .cTerminated:
            let child = event.child!
            if child == awaited { return movedOn(terminated: true) }
            guard known.contains(child) else { return go("wait", same) }
            let marks = known.sorted().map { "\($0)\($0 == child ? "-" : "+")" } + (fixture == .startingAwaitingA ? ["b-"] : [])
            return go("wait", queued(events: 1, children: marks.joined(separator: " ")))
        case .aStepDone, .bStepDone, .cStepDone:
            return event.child == awaited ? movedOn(terminated: false) : go("wait", same)
        case .cStepDoneWithSetupFailure:
            guard fixture == .requestedStartOfC else { return go("wait", same) }
            // The requested child's setup failed: it is stopped for good, then the error answered.
            return go("send(stop → c); wait", "busy(request(start c new, failed), awaiting c: terminate(c), steps [], backlog 0+0) {a+ b+ c+}")
        }
    }

    @Test(arguments: Fixture.allCases, Event.allCases)
    func everyEventInEveryState(_ fixture: Fixture, _ event: Event) async {
        let outcome = Self.expected(fixture, event)
        switch outcome {
        case .crash:
            await #expect(processExitsWith: .failure, "\(event) in \(fixture)") { [fixture, event] in
                var world = fixture.make()
                _ = event.apply(to: &world)
            }
        case .transition:
            var world = fixture.make()
            let action = event.apply(to: &world)
            let actual = Outcome.transition(action: Self.describe(action, world), state: Self.describe(world.machine, world))
            #expect(actual == outcome, "\(event) in \(fixture)")
        }
    }

    @Test func everyFixtureIsInTheStateItNames() {
        for fixture in Fixture.allCases {
            let world = fixture.make()
            #expect(Self.describe(world.machine, world) == Self.unchanged(fixture), "\(fixture)")
        }
    }

    // MARK: Properties the behavior relies on

    @Test func aBacklogIsHandledInOrder_failuresFirst_onceTheWorkIsDone() {
        var world = Fixture.restartingBInPlace.make()
        _ = world.machine.messageReceived(.countChildren(replyTo: world.replyRef()))
        _ = world.machine.childFailed(world.a, error: Boom(tag: "a"))
        // b's restart done: a's failure first (a restart to count), the message after it.
        #expect(Self.describe(world.machine.childStepDone(world.b, setupFailure: nil), world) == "countRestart")
        #expect(Self.describe(world.machine, world)
            == "countingRestart(steps [stop(b), stop(a), start(a), start(b)], failure a, backlog 0+1) {a+ b+}")
        _ = world.machine.restartCounted(admitted: true)
        _ = world.machine.childStepDone(world.b, setupFailure: nil)
        _ = world.machine.childStepDone(world.a, setupFailure: nil)
        _ = world.machine.childStepDone(world.a, setupFailure: nil)
        #expect(Self.describe(world.machine.childStepDone(world.b, setupFailure: nil), world) == "reply(count 2 2); wait")
        #expect(Self.describe(world.machine, world) == "idle {a+ b+}")
    }

    @Test func aStaleFailure_fromBeforeTheChildWasRestarted_isDropped() {
        var world = Fixture.restartStoppingB.make()
        // a fails while b stops; the restart under way then restarts a too, so its failure is
        // stale by the time the backlog is handled.
        _ = world.machine.childFailed(world.a, error: Boom(tag: "old"))
        _ = world.machine.childStepDone(world.b, setupFailure: nil)   // stop a
        _ = world.machine.childStepDone(world.a, setupFailure: nil)   // start a
        _ = world.machine.childStepDone(world.a, setupFailure: nil)   // start b
        #expect(Self.describe(world.machine.childStepDone(world.b, setupFailure: nil), world) == "wait")
        #expect(Self.describe(world.machine, world) == "idle {a+ b+}")
    }

    @Test func startingManyChildren_isOneSpawnReportAndOneAcknowledgementEach() {
        let supervisor = ActorAddress(system: "s", path: "/user/sup", incarnation: 1)
        let ids = (0..<1_000).map { "w\($0)" }
        var machine = SupervisorStateMachine(
            supervisor: supervisor, strategy: .oneForOne, specs: ids.map { id in ChildSpec(id: id) { Behavior<Int>.ignore } })
        var action = machine.started()
        var started: [String] = []
        while case let .spawn(spec, sharing) = action.then {
            #expect(sharing)
            started.append(spec.id)
            let target = AnyTarget(address: supervisor.child(spec.id, incarnation: UInt64(started.count + 1)))
            _ = machine.childSpawned(target)
            action = machine.childStepDone(target, setupFailure: nil)
        }
        #expect(started == ids)
        #expect(action.effects.count == 1)
        if case .acknowledgeStart? = action.effects.first {} else { Issue.record("no acknowledgeStart: \(action.effects)") }
        if case .idle = machine.state {} else { Issue.record("not idle: \(machine.state)") }
    }

    // MARK: Describing

    static func describe(_ action: SupervisorStateMachine.Action, _ world: World) -> String {
        let effects = action.effects.map { describe($0, world) }
        let then: String
        switch action.then {
        case .wait: then = "wait"
        case let .spawn(spec, sharing): then = "spawn(\(spec.id), sharing: \(sharing))"
        case .countRestart: then = "countRestart"
        case let .fail(error): then = "fail(\(describe(error)))"
        }
        return (effects + [then]).joined(separator: "; ")
    }

    static func describe(_ effect: SupervisorStateMachine.Effect, _ world: World) -> String {
        switch effect {
        case let .send(message, child):
            let name: String
            switch message {
            case .stop: name = "stop"
            case .restartStop: name = "restartStop"
            case .restartStart: name = "restartStart"
            case .restartNow: name = "restartNow"
            default: name = "other"
            }
            return "send(\(name) → \(world.name(child)))"
        case let .reply(reply):
            switch reply {
            case let .children(children, _):
                return "reply(children [\(children.map { "\($0.id)\($0.ref == nil ? "-" : "+")" }.joined(separator: ", "))])"
            case let .child(ref, _): return "reply(child \(ref.map { $0.address.name } ?? "nil"))"
            case let .count(count, _): return "reply(count \(count.specs) \(count.active))"
            case let .started(.success(ref), _): return "reply(started ok \(ref.address.name))"
            case let .started(.failure(error), _): return "reply(started \(error.code))"
            case .done(.success, _): return "reply(done ok)"
            case let .done(.failure(error), _): return "reply(done \(error.code))"
            }
        case .acknowledgeStart: return "acknowledgeStart"
        case .deadLetter: return "deadLetter"
        case let .shutDown(lastFailure): return "shutDown(\(describe(lastFailure)))"
        }
    }

    static func describe(_ error: any Error) -> String {
        (error as? Boom)?.tag ?? "\(error)"
    }

    static func describe(_ machine: SupervisorStateMachine, _ world: World) -> String {
        let state: String
        switch machine.state {
        case .initial: state = "initial"
        case .idle: state = "idle"
        case let .busy(work): state = describe(work, world)
        case let .countingRestart(planned):
            state = "countingRestart(steps \(describe(planned.steps)), failure \(describe(planned.failure)), "
                + "backlog \(planned.backlog.childEvents.count)+\(planned.backlog.messages.count))"
        case .shutDown: state = "shutDown"
        case .failed: state = "failed"
        case .modifying: state = "modifying"
        }
        let children = machine.children.map { "\($0.spec.id)\($0.target == nil ? "-" : "+")" }.joined(separator: " ")
        return "\(state) {\(children)}"
    }

    static func describe(_ work: SupervisorStateMachine.Work, _ world: World) -> String {
        let purpose: String
        switch work.purpose {
        case .start: purpose = "start"
        case .restart: purpose = "restart"
        case let .request(.start(id, _, isNew), failure):
            purpose = "request(start \(id)\(isNew ? " new" : "")\(failure == nil ? "" : ", failed"))"
        case let .request(.terminate(id, _), _): purpose = "request(terminate \(id))"
        }
        let awaited: String
        switch work.awaited {
        case nil: awaited = "nothing"
        case let .spawn(id)?: awaited = "spawn \(id)"
        case let .child(target, step)?: awaited = "\(world.name(target)): \(describe([step]).dropFirst().dropLast())"
        }
        return "busy(\(purpose), awaiting \(awaited), steps \(describe(work.steps)), "
            + "backlog \(work.backlog.childEvents.count)+\(work.backlog.messages.count))"
    }

    /// Steps, the next one first.
    static func describe(_ steps: [SupervisorStateMachine.Step]) -> String {
        let names = steps.reversed().map { step -> String in
            switch step {
            case let .stop(id): "stop(\(id))"
            case let .start(id): "start(\(id))"
            case let .restartInPlace(id): "restartInPlace(\(id))"
            case let .terminate(id): "terminate(\(id))"
            }
        }
        return "[\(names.joined(separator: ", "))]"
    }
}
