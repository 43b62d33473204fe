import Foundation
import Mailbox
import Testing
@testable import ChatServerCore

@Suite("Chat server: registration")
struct RegistrationTests {
    @Test func nickAndUser_sendWelcomeISupportLusersAndMotd() async throws {
        let harness = try ServerHarness()
        let alice = harness.connect()
        alice.type("NICK alice", "USER al 0 * :Alice Liddell")
        harness.run()
        let lines = alice.take()
        #expect(Array(lines.commands.prefix(5)) == ["001", "002", "003", "004", "005"])
        #expect(lines[0] == ":test.server 001 alice :Welcome to the Mailbox Internet Relay Chat Network alice!~al@127.0.0.1")
        let isupportLines = lines.filter { $0.contains(" 005 ") }
        #expect(isupportLines.count == 2)        // at most 15 parameters a line
        let isupport = isupportLines.joined(separator: " ")
        for token in ["CASEMAPPING=rfc1459", "CHANTYPES=#", "PREFIX=(ov)@+", "CHANMODES=b,k,l,imnst", "NICKLEN=30",
                      "CHANNELLEN=50", "TOPICLEN=390", "NETWORK=Mailbox"] {
            #expect(isupport.contains(" \(token)"), "005 lacks \(token)")
        }
        for numeric in ["251", "252", "253", "254", "255", "375", "372", "376"] {
            #expect(lines.has(numeric), "no \(numeric)")
        }
        #expect(harness.server.statistics.users == 1)
        await harness.shutdown()
    }

    @Test func noMotd_answers422() async throws {
        let harness = try ServerHarness { $0.motd = nil }
        let alice = harness.connect()
        alice.type("USER al 0 * :Alice", "NICK alice")
        harness.run()
        let lines = alice.take()
        #expect(lines.has("422") && !lines.has("375"))
        await harness.shutdown()
    }

    @Test func commandsBeforeRegistration_get451_unknownOnes421() async throws {
        let harness = try ServerHarness()
        let client = harness.connect()
        client.type("JOIN #a", "PRIVMSG x :y", "FROB", "PING :tok")
        harness.run()
        #expect(client.take() == [
            ":test.server 451 * :You have not registered",
            ":test.server 451 * :You have not registered",
            ":test.server 421 * FROB :Unknown command",
            ":test.server PONG test.server :tok",
        ])
        await harness.shutdown()
    }

    @Test func badNickAndMissingParameters_getTheirNumerics() async throws {
        let harness = try ServerHarness()
        let client = harness.connect()
        client.type("NICK 9lives", "NICK", "USER onlyone", "NICK a b", "NICK #chan")
        harness.run()
        #expect(client.take().commands == ["432", "431", "461", "432"])
        await harness.shutdown()
    }

    @Test func nickInUse_isCaseInsensitivePerRFC1459_andAFreeNickStillRegisters() async throws {
        let harness = try ServerHarness()
        _ = harness.client("Foo[")
        let second = harness.connect()
        second.type("NICK foo{", "USER u 0 * :U")
        harness.run()
        #expect(second.take() == [":test.server 433 * foo{ :Nickname is already in use"])
        second.type("NICK foo2")
        harness.run()
        #expect(second.take().first?.contains(" 001 foo2 ") == true)
        await harness.shutdown()
    }

    @Test func commandsAfterANickClaim_waitForItsAnswer_inOrder() async throws {
        let harness = try ServerHarness()
        let client = harness.connect()
        // One packet: the JOIN must not be refused with 451 while the nick claim is on its way.
        client.type("NICK alice", "USER a 0 * :A", "JOIN #room", "PRIVMSG #room :first")
        harness.run()
        let lines = client.take()
        #expect(!lines.has("451"))
        #expect(lines.contains(":alice!~a@127.0.0.1 JOIN #room"))
        await harness.shutdown()
    }

    @Test func password_isRequiredWhenConfigured() async throws {
        let harness = try ServerHarness { $0.password = "secret" }
        let wrong = harness.connect()
        wrong.type("PASS nope", "NICK a", "USER a 0 * :A")
        harness.run()
        let lines = wrong.take()
        #expect(lines.has("464") && lines.last?.hasPrefix("ERROR ") == true && wrong.isClosed)
        let right = harness.connect()
        right.type("PASS secret", "NICK b", "USER b 0 * :B")
        harness.run()
        #expect(right.take().has("001"))
        right.type("PASS again")
        harness.run()
        #expect(right.take().commands == ["462"])
        await harness.shutdown()
    }

    @Test func capNegotiation_holdsRegistrationUntilCapEnd_andRefusesEveryCapability() async throws {
        let harness = try ServerHarness()
        let client = harness.connect()
        client.type("CAP LS 302", "NICK alice", "USER a 0 * :A")
        harness.run()
        #expect(client.take() == [":test.server CAP * LS :"])
        client.type("CAP REQ :multi-prefix sasl", "CAP FROB")
        harness.run()
        #expect(client.take() == [":test.server CAP alice NAK :multi-prefix sasl", ":test.server 410 alice FROB :Invalid CAP command"])
        client.type("CAP END")
        harness.run()
        #expect(client.take().first?.contains(" 001 alice ") == true)
        await harness.shutdown()
    }

    @Test func userTwice_is462_andStatisticsCountUsers() async throws {
        let harness = try ServerHarness()
        let alice = harness.client("alice")
        alice.type("USER x 0 * :X")
        harness.run()
        #expect(alice.take().commands == ["462"])
        _ = harness.client("bob")
        #expect(harness.server.statistics.users == 2)
        #expect(harness.server.statistics.connections == 2)
        await harness.shutdown()
    }

    @Test func registrationTimeout_closesTheConnection_onVirtualTime() async throws {
        let harness = try ServerHarness { $0.registrationTimeout = .seconds(30) }
        let idle = harness.connect()
        idle.type("NICK idle")
        harness.advance(by: .seconds(29))
        #expect(!idle.isClosed)
        harness.advance(by: .seconds(1))
        #expect(idle.isClosed)
        #expect(idle.take().last == "ERROR :Closing Link: 127.0.0.1 (Registration timed out)")
        // The nick is free again.
        _ = harness.client("idle")
        await harness.shutdown()
    }

    @Test func argumentParsing_readsEveryFlag_andRejectsBadOnes() throws {
        var options = ChatServerConfiguration.CommandLineOptions()
        let configuration = try ChatServerConfiguration(arguments: [
            "--host", "::1", "--port", "0", "--server-name", "My.Little.Server", "--oper", "operuser:operpassword",
            "--oper", "b:c:d", "--sendq", "1000", "--max-clients", "3", "--no-flood-control", "--ping-interval", "1.5",
            "--ping-timeout", "2", "--registration-timeout", "5", "--password", "pw", "--network", "Net", "--verbose",
        ], options: &options)
        #expect(configuration.host == "::1" && configuration.port == 0 && configuration.serverName == "My.Little.Server")
        #expect(configuration.operators == ["operuser": "operpassword", "b": "c:d"])
        #expect(configuration.sendQueueBytes == 1000 && configuration.maxClients == 3 && !configuration.floodControl)
        #expect(configuration.pingInterval == .milliseconds(1500) && configuration.pingTimeout == .seconds(2))
        #expect(configuration.registrationTimeout == .seconds(5) && configuration.password == "pw" && options.verbose)
        for bad in [["--port", "70000"], ["--oper", "nopassword"], ["--sendq", "-1"], ["--frob"], ["--host"],
                    ["--motd-file", "/nonexistent/motd"]] {
            #expect(throws: ChatServerConfiguration.ArgumentError.self) {
                try ChatServerConfiguration(arguments: bad, options: &options)
            }
        }
    }
}
