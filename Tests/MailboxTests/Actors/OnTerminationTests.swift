import Testing
import Mailbox

/// `ActorRef.onTermination`: a watch for code that is not an actor, with the failure.
@Suite("onTermination")
struct OnTerminationTests {
    struct Boom: Error {}

    func spawnFragile(_ system: ActorSystem) throws -> ActorRef<String> {
        try system.spawn(Behavior<String>.receiveMessage { text in
            if text == "fail" { throw Boom() }
            return text == "stop" ? .stopped : .same
        }, name: "fragile")
    }

    @Test func runsOnceWithNilForAStop() async throws {
        let (system, scheduler) = makeTestSystem()
        let actor = try spawnFragile(system)
        let seen = Inbox<String>()
        actor.onTermination { failure in seen.record(failure.map { "\($0)" } ?? "stopped") }
        actor.tell("stop")
        scheduler.run()
        #expect(await seen.waitForCount(1))
        #expect(seen.values == ["stopped"])
    }

    @Test func carriesTheFailure() async throws {
        let (system, scheduler) = makeTestSystem()
        let actor = try spawnFragile(system)
        let seen = Inbox<String>()
        actor.onTermination { failure in seen.record(failure is Boom ? "boom" : "other") }
        actor.tell("fail")
        scheduler.run()
        #expect(await seen.waitForCount(1))
        #expect(seen.values == ["boom"])
    }

    @Test func runsAtOnceForAnActorAlreadyTerminated() async throws {
        let (system, scheduler) = makeTestSystem()
        let actor = try spawnFragile(system)
        actor.tell("stop")
        scheduler.run()
        let seen = Inbox<String>()
        actor.onTermination { _ in seen.record("late") }
        scheduler.run()
        #expect(await seen.waitForCount(1))
        #expect(seen.values == ["late"])
    }

    @Test func disposedBeforeTheEndNeverRuns() throws {
        let (system, scheduler) = makeTestSystem()
        let actor = try spawnFragile(system)
        let seen = Inbox<String>()
        actor.onTermination { _ in seen.record("ran") }.dispose()
        actor.tell("stop")
        scheduler.run()
        #expect(seen.values.isEmpty)
    }

    @Test func theActionMayRegisterAnotherAndTellTheRef() async throws {
        let (system, scheduler) = makeTestSystem()
        let actor = try spawnFragile(system)
        let seen = Inbox<String>()
        actor.onTermination { _ in
            seen.record("first")
            // Re-entrance: the ref is gone; telling it is a dead letter, a new watch runs at once.
            actor.tell("after")
            actor.onTermination { _ in seen.record("second") }
        }
        actor.tell("stop")
        scheduler.run()
        #expect(await seen.waitForCount(2))
        #expect(seen.values == ["first", "second"])
    }
}
