import Foundation
import Testing
import Mailbox

// Every snippet of docs/Supervision.md, as a test. Keep them in sync: the doc's lines appear here
// in the same order (with assertions between them), and `snippetsOfTheDoc_appearInTheseTests`
// fails if a snippet changes without its test. Declarations are at file scope; statements are in
// tests, each on a fresh system on a `TestScheduler`. (`Recorder` is the one of
// docs/Schedulers.md, in SchedulersDocTests.swift.)

// MARK: - A worker to supervise

struct Glitch: Error {}       // a passing problem: worth another try
struct Corrupted: Error {}    // the state cannot be trusted any more

enum JobMessage: Sendable {
    case work(Int)
    case glitch               // throws Glitch
    case corrupt              // throws Corrupted
    case quit                 // stops normally
    case flush                // for the stash example
}

/// Logs what it does; `done` counts the work since the last (re)start.
func job(_ id: String = "job", log: Recorder) -> Behavior<JobMessage> {
    .setup { _ in
        log.record("\(id) started")
        var done = 0                                  // state: rebuilt by a restart, kept by a resume
        return Behavior<JobMessage>.receiveMessage { message in
            switch message {
            case let .work(n):
                done += 1
                log.record("\(id): work \(n) (#\(done))")
            case .glitch: throw Glitch()
            case .corrupt: throw Corrupted()
            case .quit: return .stopped
            case .flush: break
            }
            return .same
        }
        .receiveLifecycle { _, event in
            switch event {
            case .preRestart: log.record("\(id) restarting")
            case .postStop: log.record("\(id) stopped")
            default: return .unhandled
            }
            return .same
        }
    }
}

// MARK: - What a restart does

func poller(log: Recorder) -> Behavior<JobMessage> {
    .setup { context in
        if context.child(named: "parser") == nil {    // a kept child is still there
            try context.spawn(job("parser", log: log), name: "parser")
        }
        context.timers.startSingleTimer(key: "poll", message: .work(0), delay: .seconds(1))
        return job("poller", log: log)
    }
}

func collector(log: Recorder) -> Behavior<JobMessage> {
    .receive { context, message in
        switch message {
        case .work: try context.stash(message)                  // set aside until .flush
        case .flush: return context.unstashAll(job(log: log))
        case .glitch: throw Glitch()
        default: break
        }
        return .same
    }
}

func fragile(log: Recorder) -> Behavior<JobMessage> {
    .setup { _ in
        log.record("setup")
        if log.all.count > 1 { throw Corrupted() }    // every setup after the first fails
        return job(log: log)
    }
}

// MARK: - Escalation

func manager(log: Recorder, handlesEscalations: Bool) -> Behavior<String> {
    .setup { context in
        log.record("manager started")
        let worker = try context.spawn(.supervise(job(log: log)).onFailure(.escalate), name: "worker")
        return Behavior<String>.receiveMessage { _ in
            worker.tell(.glitch)
            return .same
        }
        .receiveLifecycle { _, event in
            guard handlesEscalations, case let .childFailed(child, error) = event else { return .unhandled }
            log.record("\(child.path) escalated \(error)")
            return .same
        }
    }
}

// MARK: - Test helpers (not in the doc)

/// A system on a fresh `TestScheduler`, as the guide's set-up makes it.
private func guideSystem(_ configuration: (TestScheduler) -> ActorSystem.Configuration = { .init(scheduler: $0, logHandler: nil) })
    -> (TestScheduler, ActorSystem, Recorder, Recorder) {
    let scheduler = TestScheduler()
    let system = ActorSystem(name: "guide", configuration: configuration(scheduler))
    let decisions = Recorder()
    system.events.observeValues { event in
        if case let .supervised(decision) = event { decisions.record("\(decision.actor.name): \(decision.directive) by \(decision.decider)") }
    }
    return (scheduler, system, Recorder(), decisions)
}

@Suite("docs/Supervision.md")
struct SupervisionDocTests {
    // MARK: Failures and the default

    @Test func setup_andTheDefault_stop() throws {
        let scheduler = TestScheduler()
        let system = ActorSystem(name: "guide", configuration: .init(scheduler: scheduler, logHandler: nil))
        let log = Recorder()
        let decisions = Recorder()
        system.events.observeValues { event in
            if case let .supervised(decision) = event { decisions.record("\(decision.actor.name): \(decision.directive) by \(decision.decider)") }
        }
        let deadLetters = Recorder()
        system.deadLetters.observeValues { deadLetters.record("\($0.message)") }

        let plain = try system.spawn(job(log: log), name: "plain")
        plain.tell(.work(1))
        plain.tell(.glitch)
        plain.tell(.work(2))                      // queued behind the failure: a dead letter
        scheduler.advance(by: .nanoseconds(0))    // log.all == ["job started", "job: work 1 (#1)", "job stopped"]
        #expect(log.all == ["job started", "job: work 1 (#1)", "job stopped"])
        // decisions.all == ["plain: stop by guardian"]
        #expect(decisions.all == ["plain: stop by guardian"])
        // plain.tell(.work(3)) == .dropped(.recipientTerminated)
        #expect(plain.tell(.work(3)) == .dropped(.recipientTerminated))
        #expect(deadLetters.all == ["work(2)", "work(3)"])
        #expect(!system.isShuttingDown)
    }

    @Test func aChildWithoutSupervision_stops_decidedByNobody() throws {
        let (scheduler, system, log, decisions) = guideSystem()
        try system.spawn(Behavior<Int>.setup { context in
            let child = try context.spawn(job(log: log), name: "child")
            child.tell(.glitch)
            return .ignore
        }, name: "parent")
        scheduler.advance(by: .nanoseconds(0))
        #expect(log.all == ["job started", "job stopped"])
        #expect(decisions.all == ["child: stop by none"])
    }

    // MARK: Directives

    @Test func directives_restart() throws {
        let (scheduler, system, log, decisions) = guideSystem()
        let restarting = try system.spawn(.supervise(job(log: log)).onFailure(.restart), name: "restarting")
        restarting.tell(.work(1))
        restarting.tell(.work(2))
        restarting.tell(.glitch)
        restarting.tell(.work(3))
        scheduler.advance(by: .nanoseconds(0))
        // log.all == ["job started", "job: work 1 (#1)", "job: work 2 (#2)",
        //             "job restarting", "job started", "job: work 3 (#1)"]
        #expect(log.all == ["job started", "job: work 1 (#1)", "job: work 2 (#2)", "job restarting", "job started", "job: work 3 (#1)"])
        // decisions.all == ["restarting: restart by actor"]
        #expect(decisions.all == ["restarting: restart by actor"])
    }

    @Test func directives_resume() throws {
        let (scheduler, system, log, decisions) = guideSystem()
        let resuming = try system.spawn(.supervise(job(log: log)).onFailure(.resume), name: "resuming")
        resuming.tell(.work(1))
        resuming.tell(.glitch)
        resuming.tell(.work(2))
        scheduler.advance(by: .nanoseconds(0))    // log.all == ["job started", "job: work 1 (#1)", "job: work 2 (#2)"]
        #expect(log.all == ["job started", "job: work 1 (#1)", "job: work 2 (#2)"])
        #expect(decisions.all == ["resuming: resume by actor"])
    }

    @Test func directives_stopByARule() throws {
        let (scheduler, system, log, decisions) = guideSystem()
        let stopping = try system.spawn(.supervise(job(log: log)).onFailure(.stop), name: "stopping")
        stopping.tell(.glitch)
        scheduler.advance(by: .nanoseconds(0))
        #expect(log.all == ["job started", "job stopped"])
        #expect(decisions.all == ["stopping: stop by actor"])
    }

    @Test func perErrorType_innermostMatchingRuleDecides() throws {
        let (scheduler, system, log, decisions) = guideSystem()
        let picky = try system.spawn(
            .supervise(
                .supervise(job(log: log)).onFailure(of: Glitch.self, .resume)    // inner rule: Glitch
            ).onFailure(.restart),                                               // outer rule: anything else
            name: "picky")
        for message: JobMessage in [.work(1), .glitch, .work(2), .corrupt, .work(3), .glitch, .work(4)] {
            picky.tell(message)
        }
        scheduler.advance(by: .nanoseconds(0))
        // log.all == ["job started", "job: work 1 (#1)", "job: work 2 (#2)",
        //             "job restarting", "job started", "job: work 3 (#1)", "job: work 4 (#2)"]
        #expect(log.all == ["job started", "job: work 1 (#1)", "job: work 2 (#2)",
                            "job restarting", "job started", "job: work 3 (#1)", "job: work 4 (#2)"])
        // decisions.all == ["picky: resume by actor", "picky: restart by actor", "picky: resume by actor"]
        #expect(decisions.all == ["picky: resume by actor", "picky: restart by actor", "picky: resume by actor"])
    }

    @Test func perErrorType_noMatchingRule_fallsBackToTheDefault() throws {
        let (scheduler, system, log, decisions) = guideSystem()
        let onlyGlitches = try system.spawn(.supervise(job(log: log)).onFailure(of: Glitch.self, .restart), name: "only-glitches")
        onlyGlitches.tell(.corrupt)
        scheduler.advance(by: .nanoseconds(0))
        #expect(log.all == ["job started", "job stopped"])
        #expect(decisions.all == ["only-glitches: stop by guardian"])
    }

    @Test func deciders() throws {
        let (scheduler, system, log, decisions) = guideSystem()
        let decided = try system.spawn(.supervise(job(log: log)).onFailure(decide: { error in
            error is Glitch ? .resume : .restart          // restarts chosen here are unlimited
        }), name: "decided")
        let limited = SupervisorStrategy.restart(limit: 2, within: .seconds(10)).deciding { error in
            error is Glitch ? .resume : .restart          // restarts chosen here count against the limit
        }
        let careful = try system.spawn(.supervise(job(log: log)).onFailure(limited), name: "careful")
        decided.tell(.glitch)
        decided.tell(.corrupt)
        scheduler.advance(by: .nanoseconds(0))
        #expect(decisions.all == ["decided: resume by actor", "decided: restart by actor"])
        for _ in 1...3 { careful.tell(.corrupt) }
        scheduler.advance(by: .nanoseconds(0))
        #expect(Array(decisions.all.dropFirst(2)) == ["careful: restart by actor", "careful: restart by actor", "careful: stop by actor"])
        _ = log
    }

    // MARK: What a restart does

    @Test func restart_timersAndChildren() throws {
        let (scheduler, system, log, _) = guideSystem()
        let polling = try system.spawn(.supervise(poller(log: log)).onFailure(.restart), name: "polling")
        scheduler.advance(by: .nanoseconds(0))    // log.all == ["poller started", "parser started"]
        #expect(log.all == ["poller started", "parser started"])
        polling.tell(.glitch)
        scheduler.advance(by: .nanoseconds(0))
        // + "poller restarting", "parser stopped", "poller started", "parser started"
        #expect(Array(log.all.dropFirst(2)) == ["poller restarting", "parser stopped", "poller started", "parser started"])
        scheduler.advance(by: .seconds(1))        // + "poller: work 0 (#1)": only the new state's timer fires
        #expect(Array(log.all.dropFirst(6)) == ["poller: work 0 (#1)"])
    }

    @Test func restart_keepingChildren() throws {
        let (scheduler, system, log, _) = guideSystem()
        let keeping = try system.spawn(.supervise(poller(log: log)).onFailure(SupervisorStrategy.restart.keepingChildren()), name: "keeping")
        scheduler.advance(by: .nanoseconds(0))    // log.all == ["poller started", "parser started"]
        #expect(log.all == ["poller started", "parser started"])
        keeping.tell(.glitch)
        scheduler.advance(by: .nanoseconds(0))
        // log.all == ["poller started", "parser started", "poller restarting", "poller started"]
        #expect(log.all == ["poller started", "parser started", "poller restarting", "poller started"])
    }

    @Test func restart_stashIsHandedToTheNewStateFirst() throws {
        let (scheduler, system, log, _) = guideSystem()
        let batch = try system.spawn(.supervise(collector(log: log)).onFailure(.restart), name: "batch")
        for message: JobMessage in [.work(1), .work(2), .glitch, .work(3), .flush] { batch.tell(message) }
        scheduler.advance(by: .nanoseconds(0))
        // log.all == ["job started", "job: work 1 (#1)", "job: work 2 (#2)", "job: work 3 (#3)"]
        #expect(log.all == ["job started", "job: work 1 (#1)", "job: work 2 (#2)", "job: work 3 (#3)"])
    }

    @Test func restart_failingSetupCountsAsAFailure() throws {
        let (scheduler, system, log, decisions) = guideSystem()
        let limited = try system.spawn(.supervise(fragile(log: log)).onFailure(.restart(limit: 3, within: .seconds(10))), name: "limited")
        limited.tell(.glitch)
        scheduler.advance(by: .nanoseconds(0))
        // log.all == ["setup", "job started", "job restarting", "setup", "setup", "setup"]
        #expect(log.all == ["setup", "job started", "job restarting", "setup", "setup", "setup"])
        // decisions.all == ["limited: restart by actor", "limited: restart by actor",
        //                   "limited: restart by actor", "limited: stop by actor"]
        #expect(decisions.all == ["limited: restart by actor", "limited: restart by actor",
                                  "limited: restart by actor", "limited: stop by actor"])
    }

    @Test func restart_failingSetupUnderUnlimitedRestart_stops() throws {
        let (scheduler, system, log, decisions) = guideSystem()
        let looping = try system.spawn(.supervise(fragile(log: log)).onFailure(.restart), name: "looping")
        looping.tell(.glitch)
        scheduler.advance(by: .nanoseconds(0))    // decisions.all == ["looping: restart by actor", "looping: stop by actor"]
        #expect(decisions.all == ["looping: restart by actor", "looping: stop by actor"])
        #expect(log.all.filter { $0 == "setup" }.count == 2)
    }

    // MARK: Limits

    @Test func limits_slidingWindow() throws {
        let (scheduler, system, log, decisions) = guideSystem()
        let flaky = try system.spawn(.supervise(job(log: log)).onFailure(.restart(limit: 2, within: .seconds(10))), name: "flaky")
        flaky.tell(.glitch)                       // t = 0 s
        scheduler.advance(by: .seconds(1))
        flaky.tell(.glitch)                       // t = 1 s
        scheduler.advance(by: .seconds(10))
        flaky.tell(.glitch)                       // t = 11 s: the window [1 s, 11 s] holds 1 s: 2 restarts
        scheduler.advance(by: .nanoseconds(0))
        flaky.tell(.glitch)                       // t = 11 s: it holds 1 s and 11 s: 3 restarts > 2
        scheduler.advance(by: .nanoseconds(0))
        // decisions.all == ["flaky: restart by actor", "flaky: restart by actor",
        //                   "flaky: restart by actor", "flaky: stop by actor"]
        #expect(decisions.all == ["flaky: restart by actor", "flaky: restart by actor",
                                  "flaky: restart by actor", "flaky: stop by actor"])
    }

    @Test func limits_boundaryIsInclusive() throws {
        let (scheduler, system, log, decisions) = guideSystem()
        let ref = try system.spawn(.supervise(job(log: log)).onFailure(.restart(limit: 1, within: .seconds(5))), name: "edge")
        ref.tell(.glitch)
        scheduler.advance(by: .seconds(5))
        ref.tell(.glitch)
        scheduler.advance(by: .nanoseconds(0))
        #expect(decisions.all == ["edge: restart by actor", "edge: stop by actor"])
        // One nanosecond later, the first restart has left the window.
        let (scheduler2, system2, log2, decisions2) = guideSystem()
        let ref2 = try system2.spawn(.supervise(job(log: log2)).onFailure(.restart(limit: 1, within: .seconds(5))), name: "edge")
        ref2.tell(.glitch)
        scheduler2.advance(by: .seconds(5) + .nanoseconds(1))
        ref2.tell(.glitch)
        scheduler2.advance(by: .nanoseconds(0))
        #expect(decisions2.all == ["edge: restart by actor", "edge: restart by actor"])
    }

    // MARK: Back-off

    @Test func backoff_options() throws {
        let backoff = SupervisorStrategy.restartWithBackoff(minBackoff: .milliseconds(100), maxBackoff: .seconds(10), randomFactor: 0.2)
            .withResetBackoffAfter(.seconds(30))       // default: the mean of the bounds, 5.05 s here
            .withStashCapacity(100)                    // default: 1,000
            .withMaxRestarts(10, whenExceeded: .escalate)    // default: no limit
        #expect("\(backoff)".hasPrefix("restartWithBackoff("))
        #expect("\(backoff)".hasSuffix("limit 10 then escalate"))
    }

    @Test func backoff_timeline() throws {
        let (scheduler, system, log, _) = guideSystem()
        let waits = Recorder()
        system.events.observeValues { event in
            if case let .supervised(decision) = event, let backoff = decision.backoff { waits.record("\(backoff)") }
        }
        let client = try system.spawn(.supervise(job(log: log)).onFailure(
            SupervisorStrategy.restartWithBackoff(minBackoff: .milliseconds(100), maxBackoff: .milliseconds(400), randomFactor: 0)
                .withResetBackoffAfter(.seconds(10))
        ), name: "client")
        client.tell(.glitch)
        client.tell(.work(1))                     // arrives during the back-off: kept
        scheduler.advance(by: .milliseconds(99))  // log.all == ["job started", "job restarting"]: waiting
        #expect(log.all == ["job started", "job restarting"])
        scheduler.advance(by: .milliseconds(1))   // + "job started", "job: work 1 (#1)"
        #expect(log.all == ["job started", "job restarting", "job started", "job: work 1 (#1)"])
        for _ in 1...3 {
            client.tell(.glitch)
            scheduler.advance(by: .seconds(1))    // waits out the back-off
        }
        // waits.all == ["0.1 seconds", "0.2 seconds", "0.4 seconds", "0.4 seconds"]
        #expect(waits.all == ["0.1 seconds", "0.2 seconds", "0.4 seconds", "0.4 seconds"])
        scheduler.advance(by: .seconds(10))       // 10 s without a failure: the count resets
        client.tell(.glitch)
        scheduler.advance(by: .seconds(1))        // waits.all.last == "0.1 seconds"
        #expect(waits.all.last == "0.1 seconds")
    }

    @Test func backoff_stashOverflow() throws {
        let (scheduler, system, log, _) = guideSystem()
        system.drops.observeValues { drop in log.record("dropped: \(drop.message), \(drop.reason)") }
        let small = try system.spawn(.supervise(job(log: log)).onFailure(
            SupervisorStrategy.restartWithBackoff(minBackoff: .seconds(1), maxBackoff: .seconds(1), randomFactor: 0)
                .withStashCapacity(2)
        ), name: "small")
        small.tell(.glitch)
        for n in 1...4 { small.tell(.work(n)) }
        scheduler.advance(by: .seconds(1))
        // log.all == ["job started", "job restarting",
        //             "dropped: work(3), back-off stash full", "dropped: work(4), back-off stash full",
        //             "job started", "job: work 1 (#1)", "job: work 2 (#2)"]
        #expect(log.all == ["job started", "job restarting",
                            "dropped: work(3), back-off stash full", "dropped: work(4), back-off stash full",
                            "job started", "job: work 1 (#1)", "job: work 2 (#2)"])
    }

    @Test func backoff_randomSeedReplays() throws {
        func waits(seed: UInt64) throws -> [String] {
            let scheduler = TestScheduler()
            let system = ActorSystem(name: "replay", configuration: .init(scheduler: scheduler, logHandler: nil, randomSeed: seed))
            let waits = Recorder()
            system.events.observeValues { event in
                if case let .supervised(decision) = event, let backoff = decision.backoff { waits.record("\(backoff)") }
            }
            let ref = try system.spawn(.supervise(job(log: Recorder())).onFailure(
                .restartWithBackoff(minBackoff: .milliseconds(100), maxBackoff: .seconds(1), randomFactor: 0.5)), name: "w")
            for _ in 0..<4 {
                ref.tell(.glitch)
                scheduler.advance(by: .seconds(2))
            }
            return waits.all
        }
        #expect(try waits(seed: 42).count == 4)
        #expect(try waits(seed: 42) == waits(seed: 42))
        #expect(try waits(seed: 42) != waits(seed: 43))
    }

    @Test func backoff_randomSeedConfiguration() throws {
        let scheduler = TestScheduler()
        let system = ActorSystem(name: "replay", configuration: .init(scheduler: scheduler, logHandler: nil, randomSeed: 42))
        #expect(system.configuration.randomSeed == 42)
    }

    // MARK: Escalation

    @Test func escalation_handledByTheParent() throws {
        let (scheduler, system, log, decisions) = guideSystem()
        let boss = try system.spawn(manager(log: log, handlesEscalations: true), name: "boss")
        boss.tell("go")
        scheduler.advance(by: .nanoseconds(0))
        // log.all == ["manager started", "job started", "job stopped", "/user/boss/worker escalated Glitch()"]
        #expect(log.all == ["manager started", "job started", "job stopped", "/user/boss/worker escalated Glitch()"])
        #expect(decisions.all == ["worker: escalate by actor"])
    }

    @Test func escalation_unhandled_failsTheParent() throws {
        let (scheduler, system, log, decisions) = guideSystem()
        let failures = Recorder()
        system.events.observeValues { event in
            if case let .failed(address, error) = event, address.name == "team" { failures.record("\(error)") }
        }
        let team = try system.spawn(.supervise(manager(log: log, handlesEscalations: false)).onFailure(of: ChildFailedError.self, .restart), name: "team")
        team.tell("go")
        scheduler.advance(by: .nanoseconds(0))
        // log.all == ["manager started", "job started", "job stopped", "manager started", "job started"]
        #expect(log.all == ["manager started", "job started", "job stopped", "manager started", "job started"])
        // decisions.all == ["worker: escalate by actor", "team: restart by actor"]
        #expect(decisions.all == ["worker: escalate by actor", "team: restart by actor"])
        #expect(failures.all == ["child /user/team/worker failed and escalated: Glitch()"])
    }

    // MARK: The guardian strategy

    @Test func guardian_restart() throws {
        let scheduler = TestScheduler()
        let log = Recorder()
        let resilient = ActorSystem(name: "resilient", configuration: .init(
            scheduler: scheduler, logHandler: nil, guardianStrategy: .restart(limit: 3, within: .seconds(60))))
        let plainJob = try resilient.spawn(job(log: log), name: "plain-job")    // no rule of its own
        plainJob.tell(.glitch)
        plainJob.tell(.work(1))
        scheduler.advance(by: .nanoseconds(0))    // log.all == ["job started", "job restarting", "job started", "job: work 1 (#1)"]
        #expect(log.all == ["job started", "job restarting", "job started", "job: work 1 (#1)"])
    }

    @Test func guardian_escalate_shutsTheSystemDown() throws {
        let scheduler = TestScheduler()
        let log = Recorder()
        let strict = ActorSystem(name: "strict", configuration: .init(scheduler: scheduler, logHandler: nil, guardianStrategy: .escalate))
        let failing = try strict.spawn(job(log: log), name: "failing")
        failing.tell(.glitch)
        scheduler.advance(by: .nanoseconds(0))    // strict.isShuttingDown == true
        #expect(strict.isShuttingDown == true)
    }

    // MARK: Supervision trees

    @Test func trees_startInOrder_restForOne_inPlace() throws {
        let (scheduler, system, log, decisions) = guideSystem()
        let app = try system.spawn(
            Supervisor.behavior(strategy: .restForOne, intensity: 3, period: .seconds(5), children: [
                ChildSpec(id: "a") { job("a", log: log) },
                ChildSpec(id: "b") { job("b", log: log) },
                ChildSpec(id: "c") { job("c", log: log) },
            ]),
            name: "app")
        scheduler.advance(by: .nanoseconds(0))    // log.all == ["a started", "b started", "c started"]
        #expect(log.all == ["a started", "b started", "c started"])

        let makeFail = try system.spawn(Behavior<AnyActorRef?>.receiveMessage { child in
            let b = child?.typed(as: JobMessage.self)       // nil if the child takes other messages
            b?.tell(.work(1))
            b?.tell(.glitch)
            b?.tell(.work(2))
            return .same
        }, name: "make-fail")
        app.tell(.child(id: "b", replyTo: makeFail))
        scheduler.advance(by: .nanoseconds(0))
        // log.all == ["a started", "b started", "c started", "b: work 1 (#1)",
        //             "c restarting", "b restarting", "b started", "b: work 2 (#1)", "c started"]
        #expect(log.all == ["a started", "b started", "c started", "b: work 1 (#1)",
                            "c restarting", "b restarting", "b started", "b: work 2 (#1)", "c started"])
        #expect(decisions.all == ["b: escalate by supervisor"])

        let children: ActorRef<[SupervisedChild]> = try system.spawn(logging(into: log), name: "children")
        app.tell(.whichChildren(replyTo: children))
        scheduler.advance(by: .nanoseconds(0))
        // log.all.last == "[a (permanent): /user/app/a, b (permanent): /user/app/b, c (permanent): /user/app/c]"
        #expect(log.all.last == "[a (permanent): /user/app/a, b (permanent): /user/app/b, c (permanent): /user/app/c]")
    }

    @Test func trees_restartTypes() throws {
        let (scheduler, system, log, _) = guideSystem()
        let crew = try system.spawn(
            Supervisor.behavior(strategy: .oneForOne, children: [
                ChildSpec(id: "always", restart: .permanent) { job("always", log: log) },
                ChildSpec(id: "on-failure", restart: .transient) { job("on-failure", log: log) },
                ChildSpec(id: "never", restart: .temporary) { job("never", log: log) },
            ]),
            name: "crew")
        let quitter = try system.spawn(Behavior<[SupervisedChild]>.receiveMessage { children in
            for child in children { child.ref?.typed(as: JobMessage.self)?.tell(.quit) }
            return .same
        }, name: "quitter")
        crew.tell(.whichChildren(replyTo: quitter))
        scheduler.advance(by: .nanoseconds(0))
        let children: ActorRef<[SupervisedChild]> = try system.spawn(logging(into: log), name: "children")
        crew.tell(.whichChildren(replyTo: children))
        scheduler.advance(by: .nanoseconds(0))
        // log.all.last == "[always (permanent): /user/crew/always, on-failure (transient): not running]"
        #expect(log.all.last == "[always (permanent): /user/crew/always, on-failure (transient): not running]")
        #expect(log.all.filter { $0 == "always started" }.count == 2)
    }

    @Test func trees_permanentChildThatStops_isANewActor() throws {
        let (scheduler, system, log, _) = guideSystem()
        let crew = try system.spawn(Supervisor.behavior(strategy: .oneForOne, children: [
            ChildSpec(id: "a") { job("a", log: log) },
        ]), name: "crew")
        let refs = Locked<[AnyActorRef]>([])
        let collect = try system.spawn(Behavior<AnyActorRef?>.receiveMessage { child in
            if let child { refs.withLock { $0.append(child) } }
            return .same
        }, name: "collect")
        crew.tell(.child(id: "a", replyTo: collect))
        scheduler.advance(by: .nanoseconds(0))
        refs.snapshot[0].typed(as: JobMessage.self)?.tell(.quit)
        scheduler.advance(by: .nanoseconds(0))
        crew.tell(.child(id: "a", replyTo: collect))
        scheduler.advance(by: .nanoseconds(0))
        #expect(log.all == ["a started", "a stopped", "a started"])
        #expect(refs.snapshot.count == 2)
        #expect(refs.snapshot[0] != refs.snapshot[1])
        #expect(refs.snapshot[0].path == refs.snapshot[1].path)
    }

    @Test func trees_intensityExceeded() throws {
        let (scheduler, system, log, _) = guideSystem()
        let failures = Recorder()
        system.events.observeValues { event in
            if case let .failed(address, error) = event, address.name == "fragile-app" { failures.record("\(error)") }
        }
        let app = try system.spawn(Supervisor.behavior(strategy: .oneForOne, intensity: 1, period: .seconds(5), children: [
            ChildSpec(id: "a") { job("a", log: log) },
            ChildSpec(id: "b") { job("b", log: log) },
        ]), name: "fragile-app")
        let failTwice = try system.spawn(Behavior<AnyActorRef?>.receiveMessage { child in
            child?.typed(as: JobMessage.self)?.tell(.glitch)
            child?.typed(as: JobMessage.self)?.tell(.glitch)
            return .same
        }, name: "fail-twice")
        app.tell(.child(id: "a", replyTo: failTwice))
        scheduler.advance(by: .nanoseconds(0))
        #expect(log.all == ["a started", "b started", "a restarting", "a started", "b stopped", "a stopped"])
        #expect(failures.all.count == 1)
        #expect(failures.all.first?.hasPrefix("supervisor /user/fragile-app exceeded 1 restart(s) in 5.0 seconds") == true)
    }

    @Test func trees_nested() throws {
        let (scheduler, system, log, _) = guideSystem()
        let root = try system.spawn(Supervisor.behavior(strategy: .oneForOne, children: [
            ChildSpec(id: "storage") {
                Supervisor.behavior(strategy: .allForOne, children: [
                    ChildSpec(id: "disk") { job("disk", log: log) },
                    ChildSpec(id: "index") { job("index", log: log) },
                ])
            },
            ChildSpec(id: "api") { job("api", log: log) },
        ]), name: "root")
        scheduler.advance(by: .nanoseconds(0))    // log.all == ["disk started", "index started", "api started"]
        #expect(log.all == ["disk started", "index started", "api started"])
        _ = root
    }

    @Test func trees_intensityShutdown_transientChildSupervisor() throws {
        let (scheduler, system, log, decisions) = guideSystem()
        let children: ActorRef<[SupervisedChild]> = try system.spawn(logging(into: log), name: "children")
        let shop = try system.spawn(Supervisor.behavior(strategy: .oneForOne, intensity: 3, period: .seconds(60), children: [
            ChildSpec(id: "payments", restart: .transient) {
                Supervisor.behavior(strategy: .oneForOne, intensity: 0, children: [    // gives up at once
                    ChildSpec(id: "card") { Behavior<JobMessage>.setup { _ in throw Corrupted() } },
                ])
            },
            ChildSpec(id: "catalog") { job("catalog", log: log) },
        ]), name: "shop")
        scheduler.advance(by: .nanoseconds(0))
        // decisions.all == ["card: escalate by supervisor", "payments: stop by actor"]
        #expect(decisions.all == ["card: escalate by supervisor", "payments: stop by actor"])
        shop.tell(.whichChildren(replyTo: children))
        scheduler.advance(by: .nanoseconds(0))
        // log.all.last == "[payments (transient): not running, catalog (permanent): /user/shop/catalog]"
        #expect(log.all.last == "[payments (transient): not running, catalog (permanent): /user/shop/catalog]")
    }

    @Test func trees_dynamicChildren() throws {
        let (scheduler, system, log, _) = guideSystem()
        let pool = try system.spawn(Supervisor.behavior(strategy: .oneForOne, children: []), name: "pool")
        let replies: ActorRef<Result<AnyActorRef, SupervisorError>> = try system.spawn(logging(into: log), name: "replies")
        pool.tell(.startChild(ChildSpec(id: "w1") { job("w1", log: log) }, replyTo: replies))
        pool.tell(.startChild(ChildSpec(id: "w1") { job("w1", log: log) }, replyTo: replies))
        scheduler.advance(by: .nanoseconds(0))
        // log.all == ["w1 started", "success(AnyActorRef(/user/pool/w1))",
        //             "failure(child 'w1' of /user/pool is already started as /user/pool/w1)"]
        #expect(log.all == ["w1 started", "success(AnyActorRef(/user/pool/w1))",
                            "failure(child 'w1' of /user/pool is already started as /user/pool/w1)"])
    }

    @Test func trees_dynamicChildren_async() async throws {
        let log = Recorder()
        let system = ActorSystem(name: "guide", configuration: .init(logHandler: nil))
        let pool = try system.spawn(Supervisor.behavior(strategy: .oneForOne, children: []), name: "pool")
        _ = try await pool.startChild(ChildSpec(id: "w1") { job("w1", log: log) }, timeout: .seconds(10))
        let worker = try await pool.startChild(ChildSpec(id: "w2") { job("w2", log: log) }, timeout: .seconds(10))
        try await pool.terminateChild(id: "w2", timeout: .seconds(10))             // stopped for good, spec kept
        let counts = try await pool.countChildren(timeout: .seconds(10))           // specs: 2, active: 1, …
        #expect(counts == SupervisorChildCount(specs: 2, active: 1, supervisors: 0, workers: 2))
        let again = try await pool.restartChild(id: "w2", timeout: .seconds(10))   // a new actor: again != worker
        #expect(again != worker)
        #expect(again.path == "/user/pool/w2")
        _ = await system.shutdown()
    }

    // MARK: Monitoring

    @Test func monitoring_failedThenSupervised() throws {
        let (scheduler, system, log, _) = guideSystem()
        system.events.observeValues { event in
            switch event {
            case let .failed(address, error):
                log.record("\(address.path) failed: \(error)")
            case let .supervised(decision):
                log.record("\(decision.directive) by \(decision.decider), dropped \(decision.message ?? "nothing")")
            default:
                break
            }
        }
        let watched = try system.spawn(.supervise(job(log: log)).onFailure(.resume), name: "watched")
        watched.tell(.glitch)
        scheduler.advance(by: .nanoseconds(0))
        // log.all == ["job started", "/user/watched failed: Glitch()", "resume by actor, dropped glitch"]
        #expect(log.all == ["job started", "/user/watched failed: Glitch()", "resume by actor, dropped glitch"])
    }

    // MARK: - The doc and these tests stay in sync

    @Test func snippetsOfTheDoc_appearInTheseTests() throws {
        try docExpectSnippets(of: "docs/Supervision.md", count: 33, inTestFile: #filePath)
    }
}
