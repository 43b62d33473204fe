import Foundation
import Mailbox
import Testing
@testable import ChatServerCore

/// Faults injected through `ChatServerConfiguration.faultHook`.
struct InjectedFailure: Error, Equatable {}

/// A switch a test flips to make one command or channel request fail. Thread-safety: a lock.
final class FaultSwitch: Sendable {
    private let armed = LockedValueBox<Set<String>>([])
    func arm(_ point: String) { armed.withLockedValue { _ = $0.insert(point) } }
    func check(_ point: String) throws {
        if armed.withLockedValue({ $0.remove(point) != nil }) { throw InjectedFailure() }
    }
}

@Suite("Chat server: supervision and faults")
struct FaultTests {
    @Test func crashingSession_closesOnlyItsConnection_clientSeesError_channelsSeeOneQuit() async throws {
        let faults = FaultSwitch()
        let harness = try ServerHarness { configuration in configuration.faultHook = { try faults.check($0) } }
        let recorded = LockedValueBox<[ChatServerEvent]>([])
        harness.server.events.observeValues { event in
            if case .failed = event { recorded.withLockedValue { $0.append(event) } }
        }
        let alice = harness.client("alice", in: "#a", "#b")
        let bob = harness.client("bob", in: "#a", "#b", others: [alice])
        faults.arm("TOPIC")
        alice.type("PRIVMSG #a :before", "TOPIC #a :boom", "PRIVMSG #a :never")
        harness.run()
        #expect(alice.isClosed)
        #expect(alice.take().last == "ERROR :Closing Link: 127.0.0.1 (Internal error)")
        #expect(bob.take() == [":alice!~user@127.0.0.1 PRIVMSG #a :before", ":alice!~user@127.0.0.1 QUIT :Internal error"])
        #expect(recorded.withLockedValue { $0.count } == 1)
        // The server goes on: the nick is free, the channels work.
        let carol = harness.client("alice", in: "#a", others: [bob])
        carol.type("PRIVMSG #a :back")
        harness.run()
        #expect(bob.take() == [":alice!~user@127.0.0.1 PRIVMSG #a :back"])
        await harness.shutdown()
    }

    @Test func crashingChannel_isRestartedWithItsMembers_otherChannelsUntouched() async throws {
        let faults = FaultSwitch()
        let harness = try ServerHarness { configuration in configuration.faultHook = { try faults.check($0) } }
        let alice = harness.client("alice", in: "#a", "#b")
        let bob = harness.client("bob", in: "#a", "#b", others: [alice])
        faults.arm("channel:message")
        alice.type("PRIVMSG #a :lost in the crash", "PRIVMSG #b :other channel", "PRIVMSG #a :after the restart")
        harness.run()
        // One channel's messages keep their order; two channels' are independent.
        #expect(Set(bob.take()) == [":alice!~user@127.0.0.1 PRIVMSG #b :other channel", ":alice!~user@127.0.0.1 PRIVMSG #a :after the restart"])
        bob.type("NAMES #a")
        harness.run()
        #expect(bob.take().first == ":test.server 353 bob = #a :@alice bob")
        #expect(!alice.isClosed && !bob.isClosed)
        await harness.shutdown()
    }

    @Test func slowConsumer_isCutWithItsReason_othersKeepEverything() async throws {
        let harness = try ServerHarness { $0.floodControl = false }
        let alice = harness.client("alice", in: "#a")
        let slow = harness.client("slow", in: "#a", others: [alice])
        let bob = harness.client("bob", in: "#a", others: [alice, slow])
        for index in 0..<5 { alice.type("PRIVMSG #a :m\(index)") }
        slow.disconnect(.sendQueueExceeded)
        for index in 5..<10 { alice.type("PRIVMSG #a :m\(index)") }
        harness.run()
        let lines = bob.take()
        #expect(lines.filter { $0.contains("PRIVMSG") }.count == 10)
        #expect(lines.contains(":slow!~user@127.0.0.1 QUIT :SendQ exceeded"))
        await harness.shutdown()
    }

    @Test func tooManyClients_getErrorAtOnce() async throws {
        let harness = try ServerHarness { $0.maxClients = 2 }
        _ = harness.client("a")
        _ = harness.client("b")
        let third = harness.connect()
        #expect(third.isClosed)
        #expect(third.take() == ["ERROR :Closing Link: 127.0.0.1 (Too many connections)"])
        await harness.shutdown()
    }

    @Test func shutdown_tellsEveryClient_andClosesEveryConnection() async throws {
        let harness = try ServerHarness()
        let alice = harness.client("alice", in: "#a")
        let bob = harness.client("bob", in: "#a", others: [alice])
        let server = harness.server
        let shutdown = Task { await server.shutdown(timeout: .seconds(5)) }
        // The server's actors run on virtual time: run them until the connections are closed.
        while harness.server.openConnections > 0 {
            harness.run()
            await Task.yield()
        }
        await shutdown.value
        #expect(alice.take() == ["ERROR :Server shutting down"])
        #expect(bob.take() == ["ERROR :Server shutting down"])
        await harness.shutdown()
    }
}

@Suite("Chat server: keep-alive and flood control on virtual time")
struct KeepAliveTests {
    @Test func silentClient_isPinged_andDroppedWithoutPong_oneThatAnswersStays() async throws {
        let harness = try ServerHarness {
            $0.pingInterval = .seconds(60)
            $0.pingTimeout = .seconds(30)
        }
        let alice = harness.client("alice", in: "#a")
        let bob = harness.client("bob", in: "#a", others: [alice])
        harness.advance(by: .seconds(60))
        #expect(alice.take() == ["PING :test.server"])
        #expect(bob.take() == ["PING :test.server"])
        bob.type("PONG test.server")
        harness.advance(by: .seconds(30))
        #expect(alice.isClosed && !bob.isClosed)
        #expect(alice.take() == ["ERROR :Closing Link: 127.0.0.1 (Ping timeout: 30 seconds)"])
        #expect(bob.take() == [":alice!~user@127.0.0.1 QUIT :Ping timeout: 30 seconds"])
        await harness.shutdown()
    }

    @Test func floodControl_holdsCommandsBeyondTheBurst_andRunsThemAsTheClockCatchesUp() async throws {
        let harness = try ServerHarness {
            $0.floodControl = true
            $0.floodCost = .seconds(1)
            $0.floodBurst = .seconds(10)
        }
        let alice = harness.client("alice")
        let bob = harness.client("bob")
        // Registration paid for 2 s; with a burst of 10 s, 9 of these run now.
        for index in 0..<20 { alice.type("PRIVMSG bob :\(index)") }
        harness.run()
        let now = bob.take()
        #expect(now.count == 9)
        harness.advance(by: .seconds(5))
        #expect(bob.take().count == 5)
        harness.advance(by: .seconds(60))
        let rest = bob.take()
        #expect(rest.count == 6 && rest.last == ":alice!~user@127.0.0.1 PRIVMSG bob :19")
        await harness.shutdown()
    }
}
