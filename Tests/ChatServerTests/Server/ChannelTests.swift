import Foundation
import Mailbox
import MailboxNet
import Testing
@testable import ChatServerCore

@Suite("Chat server: channels and messages")
struct ChannelTests {
    @Test func join_echoesJoin_namesTheMembers_andTellsTheOthers() async throws {
        let harness = try ServerHarness()
        let alice = harness.client("alice")
        alice.type("JOIN #Room")
        harness.run()
        #expect(alice.take() == [
            ":alice!~user@127.0.0.1 JOIN #Room",
            ":test.server 353 alice = #Room :@alice",
            ":test.server 366 alice #Room :End of /NAMES list",
        ])
        let bob = harness.client("bob")
        bob.type("JOIN #room")
        harness.run()
        #expect(alice.take() == [":bob!~user@127.0.0.1 JOIN #Room"])
        let names = bob.take()
        #expect(names.contains(":test.server 353 bob = #Room :@alice bob"))
        await harness.shutdown()
    }

    @Test func privmsgToAChannel_reachesEveryOtherMemberOnce_inOrder_neverTheSender() async throws {
        let harness = try ServerHarness { $0.floodControl = false }
        let alice = harness.client("alice", in: "#r")
        let bob = harness.client("bob", in: "#r", others: [alice])
        let carol = harness.client("carol", in: "#r", others: [alice, bob])
        for index in 0..<50 { alice.type("PRIVMSG #r :message \(index)") }
        harness.run()
        let expected = (0..<50).map { ":alice!~user@127.0.0.1 PRIVMSG #r :message \($0)" }
        #expect(bob.take() == expected)
        #expect(carol.take() == expected)
        #expect(alice.take().isEmpty)
        await harness.shutdown()
    }

    @Test func privmsgErrors_401_404_411_412_407_andNoticeNeverGetsOne() async throws {
        let harness = try ServerHarness()
        let alice = harness.client("alice")
        let bob = harness.client("bob", in: "#closed")
        _ = bob
        alice.type("PRIVMSG nobody :hi", "PRIVMSG #nowhere :hi", "PRIVMSG #closed :hi", "PRIVMSG", "PRIVMSG bob",
                   "PRIVMSG a,b,c,d,e :hi", "NOTICE nobody :hi", "NOTICE #closed :hi")
        harness.run()
        // Errors found by other actors (the registry, the directory, the channel) may come after
        // the session's own; PRIVMSG does not wait for them.
        #expect(alice.take().commands.sorted() == ["401", "401", "404", "407", "411", "412"])
        await harness.shutdown()
    }

    @Test func privateMessages_andAway() async throws {
        let harness = try ServerHarness()
        let alice = harness.client("alice")
        let bob = harness.client("bob")
        alice.type("PRIVMSG BOB :hello")
        harness.run()
        #expect(bob.take() == [":alice!~user@127.0.0.1 PRIVMSG BOB :hello"])
        bob.type("AWAY :lunch")
        harness.run()
        #expect(bob.take().commands == ["306"])
        alice.type("PRIVMSG bob :still there?", "NOTICE bob :fyi")
        harness.run()
        #expect(alice.take() == [":test.server 301 alice bob :lunch"])
        bob.type("AWAY")
        harness.run()
        #expect(bob.take().commands == ["PRIVMSG", "NOTICE", "305"])
        await harness.shutdown()
    }

    @Test func quit_reachesEachPeerOnce_evenAcrossSeveralSharedChannels() async throws {
        let harness = try ServerHarness()
        let alice = harness.client("alice", in: "#a", "#b", "#c")
        let bob = harness.client("bob", in: "#a", "#b", others: [alice])
        let carol = harness.client("carol", in: "#c", others: [alice, bob])
        let dave = harness.client("dave")
        alice.type("QUIT :gone fishing")
        harness.run()
        #expect(bob.take() == [":alice!~user@127.0.0.1 QUIT :Quit: gone fishing"])
        #expect(carol.take() == [":alice!~user@127.0.0.1 QUIT :Quit: gone fishing"])
        #expect(dave.take().isEmpty)
        #expect(alice.take() == ["ERROR :Closing Link: 127.0.0.1 (Quit: gone fishing)"])
        #expect(alice.isClosed)
        // The nick is free again.
        _ = harness.client("alice")
        await harness.shutdown()
    }

    @Test func abruptDisconnect_becomesAQuitToTheChannels() async throws {
        let harness = try ServerHarness()
        let alice = harness.client("alice", in: "#a")
        let bob = harness.client("bob", in: "#a", others: [alice])
        alice.type("PRIVMSG #a :half a li")
        alice.disconnect(.failed(SocketError(operation: "read", errno: 104)))
        harness.run()
        let lines = bob.take()
        #expect(lines.count == 2 && lines[0].contains("PRIVMSG #a :half a li"), "\(lines)")
        #expect(lines[1].hasPrefix(":alice!~user@127.0.0.1 QUIT :Read error"))
        await harness.shutdown()
    }

    @Test func nickChange_isSeenOnceByEachPeer_andByTheClient() async throws {
        let harness = try ServerHarness()
        let alice = harness.client("alice", in: "#a", "#b")
        let bob = harness.client("bob", in: "#a", "#b", others: [alice])
        let carol = harness.client("carol")
        alice.type("NICK alicia")
        harness.run()
        #expect(alice.take() == [":alice!~user@127.0.0.1 NICK :alicia"])
        #expect(bob.take() == [":alice!~user@127.0.0.1 NICK :alicia"])
        #expect(carol.take().isEmpty)
        carol.type("NICK bob", "PRIVMSG alicia :found you", "PRIVMSG alice :gone")
        harness.run()
        #expect(carol.take().commands == ["433", "401"])
        #expect(alice.take() == [":carol!~user@127.0.0.1 PRIVMSG alicia :found you"])
        bob.type("NAMES #a")
        harness.run()
        #expect(bob.take().first == ":test.server 353 bob = #a :@alicia bob")
        await harness.shutdown()
    }

    @Test func part_withReason_isBroadcast_andAnEmptyChannelCloses() async throws {
        let harness = try ServerHarness()
        let alice = harness.client("alice", in: "#a")
        let bob = harness.client("bob", in: "#a", others: [alice])
        bob.type("PART #a :see you", "PART #a", "PART #nothere")
        harness.run()
        #expect(alice.take() == [":bob!~user@127.0.0.1 PART #a :see you"])
        #expect(bob.take().commands == ["PART", "442", "403"])
        #expect(harness.server.statistics.channels == 1)
        alice.type("JOIN 0")
        harness.run()
        #expect(alice.take() == [":alice!~user@127.0.0.1 PART #a :alice"])
        #expect(harness.server.statistics.channels == 0)
        alice.type("LIST")
        harness.run()
        #expect(alice.take().commands == ["321", "323"])
        await harness.shutdown()
    }

    @Test func topic_331_332_333_andTopicLock() async throws {
        let harness = try ServerHarness()
        let alice = harness.client("alice", in: "#a")
        let bob = harness.client("bob", in: "#a", others: [alice])
        bob.type("TOPIC #a", "TOPIC #a :bob's topic")
        harness.run()
        #expect(bob.take().commands == ["331", "482"])
        alice.type("TOPIC #a :the topic")
        harness.run()
        #expect(bob.take() == [":alice!~user@127.0.0.1 TOPIC #a :the topic"])
        let carol = harness.client("carol")
        carol.type("TOPIC #a", "JOIN #a", "TOPIC #a :nope", "TOPIC #none")
        harness.run()
        let lines = carol.take()
        #expect(lines.commands == ["332", "333", "JOIN", "332", "333", "353", "366", "482", "403"])
        #expect(lines[1].hasPrefix(":test.server 333 carol #a alice!~user@127.0.0.1 "))
        await harness.shutdown()
    }

    @Test func listWhoWhoisIsonUserhost() async throws {
        let harness = try ServerHarness()
        let alice = harness.client("alice", in: "#a")
        let bob = harness.client("bob", in: "#a", others: [alice])
        alice.type("TOPIC #a :hi all")
        harness.run()
        _ = bob.take()
        bob.type("LIST")
        harness.run()
        #expect(bob.take() == [":test.server 321 bob Channel :Users  Name", ":test.server 322 bob #a 2 :hi all", ":test.server 323 bob :End of /LIST"])
        bob.type("WHO #a")
        harness.run()
        let who = bob.take()
        #expect(who.commands == ["352", "352", "315"])
        #expect(who.contains(":test.server 352 bob #a ~user 127.0.0.1 test.server alice H@ :0 Real alice"))
        bob.type("WHOIS alice", "WHOIS nobody")
        harness.run()
        let whois = bob.take()
        #expect(whois.commands == ["311", "319", "312", "318", "401", "318"])
        bob.type("ISON alice nobody Bob", "USERHOST alice")
        harness.run()
        #expect(bob.take() == [":test.server 303 bob :alice bob", ":test.server 302 bob :alice=+~user@127.0.0.1"])
        await harness.shutdown()
    }

    @Test func operKillAndErrors() async throws {
        let harness = try ServerHarness()
        let alice = harness.client("alice", in: "#a")
        let bob = harness.client("bob", in: "#a", others: [alice])
        alice.type("KILL bob :bye", "OPER operuser wrong", "OPER operuser operpassword", "KILL nobody :x", "KILL bob :spam")
        harness.run()
        let lines = alice.take()
        #expect(lines.commands == ["481", "464", "381", "MODE", "401", "QUIT"])
        #expect(lines.last == ":bob!~user@127.0.0.1 QUIT :Killed (alice (spam))")
        #expect(bob.isClosed && bob.take().last == "ERROR :Closing Link: 127.0.0.1 (Killed (alice (spam)))")
        #expect(harness.server.statistics.operators == 1)
        await harness.shutdown()
    }

    @Test func longLine_gets417_andTheConnectionGoesOn_endlessLineIsCut() async throws {
        let harness = try ServerHarness()
        let alice = harness.client("alice")
        alice.typeBytes(Array(("PRIVMSG alice :" + String(repeating: "x", count: 600) + "\r\nPING :ok\r\n").utf8))
        harness.run()
        #expect(alice.take().commands == ["417", "PONG"])
        alice.typeBytes(Array(repeating: UInt8(ascii: "y"), count: 200_000))
        harness.run()
        #expect(alice.isClosed)
        #expect(alice.take().last?.hasPrefix("ERROR :") == true)
        await harness.shutdown()
    }

    @Test func garbage_neverDesynchronises() async throws {
        let harness = try ServerHarness()
        let alice = harness.client("alice")
        alice.typeBytes([0x00, 0x0D, 0x0A, 0xFF, 0xFE, 0x20, 0x0D, 0x0A, 0x0A, 0x0A])
        alice.typeBytes(Array(":onlyprefix\r\nPI\0NG x\r\nPING :after\rPING :bare-cr\n".utf8))
        harness.run()
        let lines = alice.take()
        #expect(lines.suffix(2) == [":test.server PONG test.server :after", ":test.server PONG test.server :bare-cr"])
        #expect(!alice.isClosed)
        await harness.shutdown()
    }
}
