import Foundation
import Testing
@testable import ChatServerCore

/// The answers a session waits for, end to end: every actor that answers requests answers even
/// when it fails, so the client's next command is not held for the answer time-out.
@Suite("Chat server: answers to requests")
struct ReplyToTests {
    @Test(arguments: [("registry", "WHOIS bob"), ("directory", "LIST"), ("channel:mode", "MODE #a +m")])
    func aFailingResponder_stillAnswers_soTheNextCommandRunsAtOnce(_ point: String, _ command: String) async throws {
        let faults = FaultSwitch()
        let harness = try ServerHarness { configuration in configuration.faultHook = { try faults.check($0) } }
        let alice = harness.client("alice", in: "#a")
        _ = harness.client("bob")
        faults.arm(point)
        alice.type(command, "PING token")
        harness.run()
        // The failed request is dropped (no reply); the PING is not held for 5 s.
        #expect(alice.take().last == ":test.server PONG test.server :token")
        #expect(!alice.isClosed)
        await harness.shutdown()
    }

    @Test func aReplyHandedOn_isAnsweredByTheLastActor_inTheOrderOfTheCommands() async throws {
        let harness = try ServerHarness()
        let alice = harness.client("alice", in: "#a")
        let bob = harness.client("bob")
        // INVITE goes channel → registry → channel; the PING waits for the last one.
        alice.type("INVITE bob #a", "INVITE nobody #a", "PING token")
        harness.run()
        #expect(alice.take() == [
            ":test.server 341 alice bob :#a",
            ":test.server 401 alice nobody :No such nick/channel",
            ":test.server PONG test.server :token",
        ])
        #expect(bob.take() == [":alice!~user@127.0.0.1 INVITE bob #a"])
        await harness.shutdown()
    }
}
