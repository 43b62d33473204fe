import Foundation
import Mailbox
import Testing
@testable import ChatServerCore

/// Behaviour a conformance suite (irctest) checks, beyond the basics.
@Suite("Chat server: conformance details")
struct ConformanceTests {
    @Test func targetLists_areAnsweredInTheOrderGiven() async throws {
        let harness = try ServerHarness()
        let alice = harness.client("alice")
        alice.type("JOIN #one,#two,#three k1", "NAMES #three,#one", "PRIVMSG nobody,#none :x")
        harness.run()
        let lines = alice.take().filter { !$0.contains(" 353 ") }
        #expect(lines.map { $0.split(separator: " ").prefix(3).joined(separator: " ") } == [
            ":alice!~user@127.0.0.1 JOIN #one", ":test.server 366 alice", ":alice!~user@127.0.0.1 JOIN #two", ":test.server 366 alice",
            ":alice!~user@127.0.0.1 JOIN #three", ":test.server 366 alice",
            ":test.server 366 alice", ":test.server 366 alice", ":test.server 401 alice", ":test.server 401 alice",
        ])
        #expect(lines[7].contains(" #one ") && lines[8].contains(" nobody ") && lines[9].contains(" #none "))
        await harness.shutdown()
    }

    @Test func repliesFromOtherActors_comeBeforeTheNextCommandsReplies() async throws {
        let harness = try ServerHarness()
        let alice = harness.client("alice", in: "#a")
        let bob = harness.client("bob", in: "#a", others: [alice])
        alice.type("MODE #a +m")
        bob.type("AWAY :out")
        harness.run()
        _ = bob.take()
        _ = alice.take()
        bob.type("PRIVMSG #a :muted", "PING :one")
        alice.type("PRIVMSG bob :hi", "PING :two", "PART #a :bye", "PING :three")
        harness.run()
        #expect(bob.take().commands.filter { $0 != "PRIVMSG" && $0 != "PART" } == ["404", "PONG"])
        #expect(alice.take().commands == ["301", "PONG", "PART", "PONG"])
        await harness.shutdown()
    }

    @Test func kickLists_pairChannelsAndNicks() async throws {
        let harness = try ServerHarness()
        let alice = harness.client("alice", in: "#a", "#b")
        let bob = harness.client("bob", in: "#a", "#b", others: [alice])
        alice.type("KICK #a,#b bob,bob :out")
        harness.run()
        #expect(bob.take() == [":alice!~user@127.0.0.1 KICK #a bob :out", ":alice!~user@127.0.0.1 KICK #b bob :out"])
        await harness.shutdown()
    }

    @Test func inviteToAMissingNick_isNotRecorded() async throws {
        let harness = try ServerHarness()
        let alice = harness.client("alice", in: "#a")
        alice.type("MODE #a +i", "INVITE bob #a")
        harness.run()
        #expect(alice.take().commands == ["MODE", "401"])
        let bob = harness.client("bob")
        bob.type("JOIN #a")
        harness.run()
        #expect(bob.take().commands == ["473"])
        await harness.shutdown()
    }

    @Test func invalidKey_is696_emptyRealname461_info_lusersCountsRegisteredClients() async throws {
        let harness = try ServerHarness()
        let alice = harness.client("alice", in: "#a")
        alice.type("MODE #a +k :with spaces", "MODE #a +k :", "INFO", "LUSERS")
        _ = harness.connect()                     // unregistered: not one of 255's clients
        harness.run()
        let lines = alice.take()
        #expect(lines.prefix(2) == [":test.server 696 alice #a k * :Invalid key", ":test.server 696 alice #a k * :Invalid key"])
        #expect(lines.commands.contains("371") && lines.commands.contains("374"))
        #expect(lines.contains(":test.server 255 alice :I have 1 clients and 0 servers"))
        let empty = harness.connect()
        empty.type("NICK e", "USER e 0 * :")
        harness.run()
        #expect(empty.take().commands == ["461"])
        await harness.shutdown()
    }

    @Test func whoisShowsChannelStatus_andWhoShowsInvisibleUsersSharingAChannel() async throws {
        let harness = try ServerHarness()
        let alice = harness.client("alice", in: "#a", "#b")
        let bob = harness.client("bob", in: "#a", others: [alice])
        alice.type("MODE #a +v bob", "MODE alice +i")
        harness.run()
        bob.type("WHOIS alice", "WHO ali*")
        harness.run()
        let lines = bob.take()
        #expect(lines.contains(":test.server 319 bob alice :@#a @#b"))
        #expect(lines.contains { $0.contains(" 352 bob * ~user 127.0.0.1 test.server alice ") })
        let carol = harness.client("carol")
        carol.type("WHO ali*", "WHOIS bob")
        harness.run()
        let carolLines = carol.take()
        #expect(!carolLines.contains { $0.contains(" 352 ") })
        #expect(carolLines.contains(":test.server 319 carol bob :+#a"))
        await harness.shutdown()
    }

    @Test func whowas_listsPreviousHoldersNewestFirst() async throws {
        let harness = try ServerHarness()
        let first = harness.client("gone", user: "one")
        first.type("QUIT")
        harness.run()
        let second = harness.client("gone", user: "two")
        second.type("QUIT")
        harness.run()
        let asker = harness.client("asker")
        asker.type("WHOWAS gone", "WHOWAS gone 1", "WHOWAS never", "WHOWAS")
        harness.run()
        let lines = asker.take()
        #expect(lines.commands == ["314", "312", "314", "312", "369", "314", "312", "369", "406", "369", "431"])
        #expect(lines[0].hasPrefix(":test.server 314 asker gone ~two 127.0.0.1 * :"))
        #expect(lines[2].hasPrefix(":test.server 314 asker gone ~one 127.0.0.1 * :"))
        await harness.shutdown()
    }
}
