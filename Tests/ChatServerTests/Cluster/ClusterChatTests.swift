import Foundation
import Mailbox
import MailboxNet
import Testing
@testable import ChatServerCore

/// The chat server on several nodes, on an in-memory cluster (`ClusterHarness`): every node's
/// actors on one virtual clock, syncs as local tells. The same server code the NATS cluster
/// runs; `Tests/Integration/cluster_chat.sh` runs it on real processes.
@Suite("Chat server: several nodes")
struct ClusterChatTests {
    /// The `.line` syncs among `syncs`, by channel.
    private func lines(_ syncs: [ChatSync]) -> [String] {
        syncs.compactMap { sync in
            if case let .channel(name, .line(line)) = sync { return "\(name) \(line)" }
            return nil
        }
    }

    @Test func lineToAChannelSpanningNodes_reachesEveryMember_withOneSyncPerOtherNode() async throws {
        let cluster = ClusterHarness()
        try cluster.start("a")
        try cluster.start("b")
        try cluster.start("c")
        let alice = cluster.client("alice", on: "a", in: "#room")
        let bob = cluster.client("bob", on: "b", in: "#room", others: [alice])
        let betty = cluster.client("betty", on: "b", in: "#room", others: [alice, bob])
        let carol = cluster.client("carol", on: "c", in: "#room", others: [alice, bob, betty])
        let dave = cluster.client("dave", on: "c", others: [alice, bob, betty, carol])   // not in #room
        let alfred = cluster.client("alfred", on: "a", in: "#room", others: [alice, bob, betty, carol])
        for node in ["a", "b", "c"] { _ = cluster.hub.takeSent(to: cluster.node(node)) }

        alice.type("PRIVMSG #room :hello 1", "PRIVMSG #room :hello 2")
        cluster.run()
        let expected = [":alice!~alice@127.0.0.1 PRIVMSG #room :hello 1", ":alice!~alice@127.0.0.1 PRIVMSG #room :hello 2"]
        for member in [bob, betty, carol, alfred] { #expect(member.take() == expected) }
        #expect(alice.take().isEmpty)
        #expect(dave.take().isEmpty)
        // b has two members and c one: one sync per line per node, none to a itself.
        #expect(lines(cluster.hub.takeSent(to: cluster.node("b"))).count == 2)
        #expect(lines(cluster.hub.takeSent(to: cluster.node("c"))).count == 2)
        #expect(lines(cluster.hub.takeSent(to: cluster.node("a"))).isEmpty)
        await cluster.shutdown()
    }

    @Test func joinPartAndNames_showMembersOfEveryNode() async throws {
        let cluster = ClusterHarness()
        try cluster.start("a")
        try cluster.start("b")
        let alice = cluster.client("alice", on: "a", in: "#room")
        let bob = cluster.connect(to: "b")
        bob.type("NICK bob", "USER bob 0 * :Bob", "JOIN #room")
        cluster.run()
        let joined = bob.take()
        // The channel exists on b already (a's copy sent it): bob is not its creator, no @.
        #expect(joined.contains(":b.test 353 bob = #room :@alice bob") || joined.contains(":b.test 353 bob = #room :bob @alice"),
                "\(joined)")
        #expect(alice.take() == [":bob!~bob@127.0.0.1 JOIN #room"])
        alice.type("NAMES #room")
        cluster.run()
        let names = alice.take()
        #expect(names.contains(":a.test 353 alice = #room :@alice bob") || names.contains(":a.test 353 alice = #room :bob @alice"), "\(names)")
        bob.type("PART #room :bye")
        cluster.run()
        #expect(alice.take() == [":bob!~bob@127.0.0.1 PART #room :bye"])
        alice.type("NAMES #room")
        cluster.run()
        #expect(alice.take().contains(":a.test 353 alice = #room :@alice"))
        await cluster.shutdown()
    }

    @Test func nickHeldOnAnotherNode_is433_andFreedWhenItsHolderLeaves() async throws {
        let cluster = ClusterHarness()
        try cluster.start("a")
        try cluster.start("b")
        let alice = cluster.client("alice", on: "a")
        let impostor = cluster.connect(to: "b")
        impostor.type("NICK Alice", "USER x 0 * :X")
        cluster.run()
        #expect(impostor.take().contains(":b.test 433 * Alice :Nickname is already in use"))
        #expect(cluster.hub.owner(of: "alice") == cluster.node("a"))
        alice.type("QUIT :later")
        cluster.run()
        #expect(cluster.hub.owner(of: "alice") == nil)
        impostor.type("NICK alice")
        cluster.run()
        #expect(impostor.take().contains { $0.contains(" 001 alice ") })
        #expect(cluster.hub.owner(of: "alice") == cluster.node("b"))
        await cluster.shutdown()
    }

    @Test func nickClaimedAtOnceOnTwoNodes_onlyOneWins() async throws {
        let cluster = ClusterHarness()
        try cluster.start("a")
        try cluster.start("b")
        cluster.hub.holdClaims = true
        let first = cluster.connect(to: "a")
        let second = cluster.connect(to: "b")
        first.type("NICK zed", "USER z 0 * :Z")
        second.type("NICK zed", "USER z 0 * :Z")
        cluster.run()
        #expect(first.take().isEmpty)   // both wait for the cluster
        #expect(second.take().isEmpty)
        cluster.hub.settleClaims()
        cluster.run()
        let (one, two) = (first.take(), second.take())
        #expect(one.contains { $0.contains(" 001 zed ") })
        #expect(two.contains(":b.test 433 * zed :Nickname is already in use"))
        await cluster.shutdown()
    }

    @Test func clientLeavingWhileItsClaimIsOnItsWay_releasesTheNick() async throws {
        let cluster = ClusterHarness()
        try cluster.start("a")
        try cluster.start("b")
        cluster.hub.holdClaims = true
        let gone = cluster.connect(to: "a")
        gone.type("NICK ghost", "USER g 0 * :G")
        cluster.run()
        gone.disconnect()
        cluster.run()
        cluster.hub.settleClaims()
        cluster.run()
        #expect(cluster.hub.owner(of: "ghost") == nil)
        cluster.hub.holdClaims = false
        _ = cluster.client("ghost", on: "b")
        #expect(cluster.hub.owner(of: "ghost") == cluster.node("b"))
        await cluster.shutdown()
    }

    @Test func privmsgNoticeAndWhoisToANickOnAnotherNode() async throws {
        let cluster = ClusterHarness()
        try cluster.start("a")
        try cluster.start("b")
        let alice = cluster.client("alice", on: "a", in: "#x")
        let bob = cluster.client("bob", on: "b", in: "#x", others: [alice])
        bob.type("AWAY :lunch")
        cluster.run()
        _ = bob.take()
        alice.type("PRIVMSG bob :psst", "NOTICE BOB :note", "WHOIS bob", "PRIVMSG nobody :hm")
        cluster.run()
        #expect(bob.take() == [":alice!~alice@127.0.0.1 PRIVMSG bob :psst", ":alice!~alice@127.0.0.1 NOTICE BOB :note"])
        let replies = alice.take()
        #expect(replies.contains(":a.test 301 alice bob :lunch"))
        #expect(replies.contains(":a.test 311 alice bob ~bob 127.0.0.1 * :Real bob"))
        #expect(replies.contains(":a.test 319 alice bob :#x"))
        #expect(replies.contains { $0.hasPrefix(":a.test 312 alice bob b ") })
        #expect(replies.contains(":a.test 318 alice bob :End of /WHOIS list"))
        #expect(replies.contains(":a.test 401 alice nobody :No such nick/channel"))
        await cluster.shutdown()
    }

    @Test func topicModeKickAndNick_areSeenOnEveryNode() async throws {
        let cluster = ClusterHarness()
        try cluster.start("a")
        try cluster.start("b")
        let alice = cluster.client("alice", on: "a", in: "#x")
        let bob = cluster.client("bob", on: "b", in: "#x", others: [alice])
        alice.type("TOPIC #x :news", "MODE #x +o bob", "MODE #x +k secret")
        cluster.run()
        _ = alice.take()
        #expect(bob.take() == [
            ":alice!~alice@127.0.0.1 TOPIC #x :news",
            ":alice!~alice@127.0.0.1 MODE #x +o bob",
            ":alice!~alice@127.0.0.1 MODE #x +k secret",
        ])
        // b's copy follows: bob is an operator there, and the key holds there.
        bob.type("MODE #x")
        cluster.run()
        #expect(bob.take().contains(":b.test 324 bob #x +knt :secret"))
        let carol = cluster.connect(to: "b")
        carol.type("NICK carol", "USER c 0 * :C", "JOIN #x")
        cluster.run()
        #expect(carol.take().contains(":b.test 475 carol #x :Cannot join channel (+k)"))
        bob.type("NICK robert")
        cluster.run()
        #expect(alice.take() == [":bob!~bob@127.0.0.1 NICK :robert"])
        _ = bob.take()
        bob.type("KICK #x alice :out")
        cluster.run()
        #expect(alice.take() == [":robert!~bob@127.0.0.1 KICK #x alice :out"])
        #expect(bob.take() == [":robert!~bob@127.0.0.1 KICK #x alice :out"])
        alice.type("PRIVMSG #x :still here?")
        cluster.run()
        #expect(alice.take() == [":a.test 404 alice #x :Cannot send to channel (+n)"])
        #expect(bob.take().isEmpty)
        // The old nick is free in the cluster, the new one taken.
        #expect(cluster.hub.owner(of: "bob") == nil)
        #expect(cluster.hub.owner(of: "robert") == cluster.node("b"))
        await cluster.shutdown()
    }

    @Test func nodeDown_itsUsersQuitOnceFromEveryChannel_andTheOthersKeepChatting() async throws {
        let cluster = ClusterHarness()
        try cluster.start("a")
        try cluster.start("b")
        try cluster.start("c")
        let alice = cluster.client("alice", on: "a", in: "#one", "#two")
        let bob = cluster.client("bob", on: "b", in: "#one", "#two", others: [alice])
        let betty = cluster.client("betty", on: "b", in: "#two", others: [alice, bob])
        let carol = cluster.client("carol", on: "c", in: "#one", others: [alice, bob, betty])
        cluster.hub.down(cluster.node("b"))
        cluster.run()
        let seenByAlice = alice.take()
        #expect(seenByAlice.filter { $0.hasPrefix(":bob!") } == [":bob!~bob@127.0.0.1 QUIT :a b"])
        #expect(seenByAlice.filter { $0.hasPrefix(":betty!") } == [":betty!~betty@127.0.0.1 QUIT :a b"])
        #expect(carol.take() == [":bob!~bob@127.0.0.1 QUIT :c b"])
        alice.type("NAMES #two", "PRIVMSG #one :still here", "WHOIS bob")
        cluster.run()
        let replies = alice.take()
        #expect(replies.contains(":a.test 353 alice = #two :@alice"))
        #expect(replies.contains(":a.test 401 alice bob :No such nick/channel"))
        #expect(carol.take() == [":alice!~alice@127.0.0.1 PRIVMSG #one :still here"])
        await cluster.shutdown()
    }

    @Test func nodeThatComesUpLater_getsTheChannelsAndUsers_andARestartedNodeWorksAgain() async throws {
        let cluster = ClusterHarness()
        try cluster.start("a")
        let alice = cluster.client("alice", on: "a", in: "#x")
        alice.type("TOPIC #x :old news")
        cluster.run()
        _ = alice.take()
        try cluster.start("b")
        let bob = cluster.connect(to: "b")
        bob.type("NICK bob", "USER bob 0 * :Bob", "JOIN #x", "WHOIS alice")
        cluster.run()
        let seen = bob.take()
        #expect(seen.contains(":b.test 332 bob #x :old news"))
        #expect(seen.contains(":b.test 353 bob = #x :@alice bob") || seen.contains(":b.test 353 bob = #x :bob @alice"), "\(seen)")
        #expect(seen.contains(":b.test 311 bob alice ~alice 127.0.0.1 * :Real alice"))
        #expect(alice.take() == [":bob!~bob@127.0.0.1 JOIN #x"])

        // b dies and starts again (a new incarnation); its new users chat with a's.
        cluster.hub.down(cluster.node("b"))
        cluster.run()
        #expect(alice.take() == [":bob!~bob@127.0.0.1 QUIT :a b"])
        try cluster.start("b", incarnation: 2)
        let bob2 = cluster.client("bob", on: "b", in: "#x", others: [alice])
        alice.type("PRIVMSG #x :welcome back")
        cluster.run()
        #expect(bob2.take() == [":alice!~alice@127.0.0.1 PRIVMSG #x :welcome back"])
        await cluster.shutdown()
    }
}

@Suite("Chat server: several nodes, conflicts and bad input")
struct ClusterChatConflictTests {
    @Test func topicAndModesSetAtOnceOnTwoNodes_endTheSameOnBoth_laterChangeWins() async throws {
        let cluster = ClusterHarness()
        try cluster.start("a")
        try cluster.start("b")
        let alice = cluster.client("alice", on: "a", in: "#x")
        let bob = cluster.client("bob", on: "b", in: "#x", others: [alice])
        alice.type("MODE #x +o bob")
        cluster.run()
        _ = alice.take()
        _ = bob.take()
        // Both in the same instant: each node applies its own first, then the other's. The
        // stamps tie on time; the greater node name ("b") wins on both nodes.
        alice.type("TOPIC #x :from a", "MODE #x +m")
        bob.type("TOPIC #x :from b", "MODE #x +i")
        cluster.run()
        _ = alice.take()
        _ = bob.take()
        alice.type("TOPIC #x", "MODE #x")
        bob.type("TOPIC #x", "MODE #x")
        cluster.run()
        let seenOnA = alice.take(), seenOnB = bob.take()
        #expect(seenOnA.contains(":a.test 332 alice #x :from b"), "\(seenOnA)")
        #expect(seenOnB.contains(":b.test 332 bob #x :from b"), "\(seenOnB)")
        #expect(seenOnA.contains(":a.test 324 alice #x :+int"), "\(seenOnA)")   // b's whole set: a's +m lost
        #expect(seenOnB.contains(":b.test 324 bob #x :+int"), "\(seenOnB)")

        // Later, a's change wins everywhere.
        cluster.scheduler.advance(by: .seconds(1))
        alice.type("TOPIC #x :later from a")
        cluster.run()
        _ = alice.take()
        bob.type("TOPIC #x")
        cluster.run()
        #expect(bob.take().contains(":b.test 332 bob #x :later from a"))
        await cluster.shutdown()
    }

    @Test func syncsAboutUnknownUsersChannelsOrBadNames_areDropped_andNothingElseChanges() async throws {
        let cluster = ClusterHarness()
        try cluster.start("a")
        try cluster.start("b")
        let alice = cluster.client("alice", on: "a", in: "#x")
        let b = cluster.node("b"), a = cluster.node("a")
        let stranger = ChatUserRecord(id: 77, nick: "stranger", user: "~s", host: "h", realName: "S")
        cluster.hub.inject(.channel(name: "nochannel", .joined(stranger, isOperator: true)), from: b, to: a)   // not a channel name
        cluster.hub.inject(.channel(name: "#gone", .line(":x PRIVMSG #gone :hi\r\n")), from: b, to: a)         // no such channel
        cluster.hub.inject(.channel(name: "#x", .parted(ChatUserRef(node: b, id: 5), line: ":x PART #x\r\n")), from: b, to: a)
        cluster.hub.inject(.deliver(id: 999, line: ":x PRIVMSG nobody :hi\r\n"), from: b, to: a)
        cluster.hub.inject(.quit(id: 12345, reason: "never was"), from: b, to: a)
        cluster.run()
        #expect(alice.take().isEmpty)
        alice.type("LIST", "NAMES #x")
        cluster.run()
        let replies = alice.take()
        #expect(replies.filter { $0.contains(" 322 ") } == [":a.test 322 alice #x 1 :"])
        #expect(replies.contains(":a.test 353 alice = #x :@alice"))
        // The stranger's record was not taken from a bad join either.
        alice.type("WHOIS stranger")
        cluster.run()
        #expect(alice.take().contains(":a.test 401 alice stranger :No such nick/channel"))
        await cluster.shutdown()
    }

    @Test func whoAndList_countAndShowMembersOfEveryNode() async throws {
        let cluster = ClusterHarness()
        try cluster.start("a")
        try cluster.start("b")
        let alice = cluster.client("alice", on: "a", in: "#x")
        let bob = cluster.client("bob", on: "b", in: "#x", others: [alice])
        bob.type("AWAY :gone")
        cluster.run()
        _ = bob.take()
        alice.type("WHO #x", "WHO bob", "LIST")
        cluster.run()
        let replies = alice.take()
        #expect(replies.contains(":a.test 352 alice #x ~bob 127.0.0.1 a.test bob G :0 Real bob"), "\(replies)")
        #expect(replies.contains(":a.test 352 alice #x ~alice 127.0.0.1 a.test alice H@ :0 Real alice"))
        #expect(replies.contains(":a.test 352 alice * ~bob 127.0.0.1 a.test bob G :0 Real bob"))
        #expect(replies.contains(":a.test 322 alice #x 2 :"))
        await cluster.shutdown()
    }

    @Test func anObserverOfPeerEvents_mayCallBackIntoTheServer_onItsOwnThread() async throws {
        let cluster = ClusterHarness()
        try cluster.start("a")
        let late = FakeConnection(id: 1_000)
        let seen = LockedValueBox<[String]>([])
        try cluster.start("b") { server in
            server.events.observeValues { event in
                guard case let .peerUp(node) = event else { return }
                // Re-entrance: the server's own callback uses the server.
                seen.withLockedValue { $0.append("\(node) \(server.statistics.connections)") }
                server.attach(late)
            }
        }
        cluster.run()
        #expect(seen.withLockedValue { $0 } == ["a:0000000000000001 0"])
        late.type("NICK late", "USER l 0 * :L")
        cluster.run()
        #expect(late.take().contains { $0.contains(" 001 late ") })
        await cluster.shutdown()
    }
}
