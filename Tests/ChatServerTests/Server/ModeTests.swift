import Foundation
import Mailbox
import Testing
@testable import ChatServerCore

@Suite("Chat server: modes, kicks and invitations")
struct ModeTests {
    @Test func channelModeQuery_showsDefaults_andChangesAreBroadcast() async throws {
        let harness = try ServerHarness()
        let alice = harness.client("alice", in: "#a")
        let bob = harness.client("bob", in: "#a", others: [alice])
        alice.type("MODE #a")
        harness.run()
        let query = alice.take()
        #expect(query.commands == ["324", "329"])
        #expect(query.first == ":test.server 324 alice #a :+nt")
        alice.type("MODE #a +imk-t secret", "MODE #a +l 5")
        harness.run()
        #expect(bob.take() == [":alice!~user@127.0.0.1 MODE #a +imk-t secret", ":alice!~user@127.0.0.1 MODE #a +l 5"])
        bob.type("MODE #a -i", "MODE #a +o bob", "MODE #none +i", "MODE #a +z")
        harness.run()
        #expect(bob.take().commands == ["482", "482", "403", "472"])
        await harness.shutdown()
    }

    @Test func joinRestrictions_key_limit_inviteOnly_ban_andInviteLetsIn() async throws {
        let harness = try ServerHarness()
        let alice = harness.client("alice", in: "#a")
        alice.type("MODE #a +k key", "MODE #a +l 1")
        let bob = harness.client("bob")
        _ = alice.take()
        bob.type("JOIN #a", "JOIN #a wrong")
        harness.run()
        #expect(bob.take().commands == ["471", "471"])
        alice.type("MODE #a -l", "MODE #a +i")
        harness.run()
        bob.type("JOIN #a key")
        harness.run()
        #expect(bob.take().commands == ["473"])
        alice.type("MODE #a -i", "MODE #a +b bob")
        harness.run()
        let banEcho = alice.take()
        #expect(banEcho.last == ":alice!~user@127.0.0.1 MODE #a +b bob!*@*")
        bob.type("JOIN #a key", "JOIN #a")
        harness.run()
        #expect(bob.take().commands == ["474", "474"])
        alice.type("MODE #a b", "INVITE bob #a", "INVITE nobody #a", "INVITE bob #none")
        harness.run()
        #expect(alice.take().commands == ["367", "368", "341", "401", "403"])
        #expect(bob.take() == [":alice!~user@127.0.0.1 INVITE bob #a"])
        bob.type("JOIN #a")       // invited: the ban does not apply, the key still does
        harness.run()
        #expect(bob.take().commands == ["475"])
        bob.type("JOIN #a key")
        harness.run()
        #expect(bob.take().first == ":bob!~user@127.0.0.1 JOIN #a")
        await harness.shutdown()
    }

    @Test func moderatedAndNoExternal_refuseSenders_voiceAllows() async throws {
        let harness = try ServerHarness()
        let alice = harness.client("alice", in: "#a")
        let bob = harness.client("bob", in: "#a", others: [alice])
        let outsider = harness.client("carol")
        outsider.type("PRIVMSG #a :from outside")
        alice.type("MODE #a +m")
        harness.run()
        #expect(outsider.take().commands == ["404"])
        _ = bob.take()
        bob.type("PRIVMSG #a :unvoiced")
        harness.run()
        #expect(bob.take().commands == ["404"])
        alice.type("MODE #a +v bob")
        harness.run()
        bob.type("PRIVMSG #a :voiced")
        harness.run()
        #expect(alice.take().last == ":bob!~user@127.0.0.1 PRIVMSG #a :voiced")
        alice.type("MODE #a -n")
        harness.run()
        outsider.type("PRIVMSG #a :-n lets me in")
        harness.run()
        #expect(outsider.take().commands == ["404"])        // +m still applies
        await harness.shutdown()
    }

    @Test func kick_needsOperator_namesMissingUsers_andRemovesTheTarget() async throws {
        let harness = try ServerHarness()
        let alice = harness.client("alice", in: "#a")
        let bob = harness.client("bob", in: "#a", others: [alice])
        bob.type("KICK #a alice :no")
        harness.run()
        #expect(bob.take().commands == ["482"])
        alice.type("KICK #a nobody", "KICK #a bob :behave", "KICK #b bob", "KICK #a")
        harness.run()
        #expect(alice.take().commands == ["441", "KICK", "403", "461"])
        #expect(bob.take() == [":alice!~user@127.0.0.1 KICK #a bob :behave"])
        bob.type("PRIVMSG #a :let me back", "NAMES #a")
        harness.run()
        #expect(bob.take().commands == ["404", "353", "366"])
        await harness.shutdown()
    }

    @Test func userModes_invisibleAndOperator() async throws {
        let harness = try ServerHarness()
        let alice = harness.client("alice")
        alice.type("MODE alice +i", "MODE alice", "MODE bob +i", "MODE alice +x", "MODE alice +o")
        harness.run()
        let lines = alice.take()
        #expect(lines.commands == ["MODE", "221", "502", "501"])
        #expect(lines[0] == ":alice!~user@127.0.0.1 MODE alice +i")
        #expect(lines[1] == ":test.server 221 alice :+i")
        #expect(harness.server.statistics.invisibleUsers == 1)
        let bob = harness.client("bob")
        bob.type("WHO *")
        harness.run()
        #expect(!bob.take().contains { $0.contains(" alice H") })     // invisible: not listed
        await harness.shutdown()
    }

    @Test func secretChannel_isHiddenFromNonMembers_inListNamesAndWho() async throws {
        let harness = try ServerHarness()
        let alice = harness.client("alice", in: "#hidden", "#open")
        alice.type("MODE #hidden +s", "LIST", "NAMES #hidden")
        harness.run()
        let own = alice.take()
        #expect(own.first == ":alice!~user@127.0.0.1 MODE #hidden +s")
        #expect(own.contains { $0.contains(" 322 alice #hidden ") })
        #expect(own.contains(":test.server 353 alice @ #hidden :@alice"))
        let bob = harness.client("bob")
        bob.type("LIST", "NAMES #hidden", "WHO #hidden")
        harness.run()
        #expect(bob.take().commands == ["321", "322", "323", "366", "315"])      // only #open in LIST
        await harness.shutdown()
    }
}
