import Testing
@testable import ChatServerCore

/// Decoding, apart from handling: lines into commands by family, lists of targets into one
/// command per target, and the queue of input the session takes from.
@Suite("Session input decoding")
struct SessionInputTests {
    @Test func everyKnownCommandHasOneFamily_andOnlyRegistrationAndConnectionNeedNoRegistration() {
        let unregistered = ["CAP", "PASS", "NICK", "USER", "PING", "PONG", "QUIT"]
        let registered = ["JOIN", "PART", "PRIVMSG", "NOTICE", "TOPIC", "NAMES", "LIST", "WHO", "WHOIS", "AWAY", "MODE", "KICK",
                          "INVITE", "OPER", "KILL", "ISON", "USERHOST", "VERSION", "TIME", "MOTD", "LUSERS", "INFO", "WHOWAS"]
        for name in unregistered { #expect(SessionCommand(name)?.needsRegistration == false, "\(name)") }
        for name in registered { #expect(SessionCommand(name)?.needsRegistration == true, "\(name)") }
        #expect(SessionCommand("PRIVMSG") == .messaging(.privmsg) && SessionCommand("NOTICE")?.isMessage == true)
        #expect(SessionCommand("JOIN")?.isMessage == false)
        #expect(SessionCommand("FOO") == nil && SessionCommand("privmsg") == nil && SessionCommand("001") == nil)
    }

    @Test(arguments: [
        ("JOIN #a,#b k1", ["JOIN #a k1", "JOIN #b"]),
        ("JOIN #a,#b,#c ,k2", ["JOIN #a", "JOIN #b k2", "JOIN #c"]),
        ("PART #a,#b :gone", ["PART #a gone", "PART #b gone"]),
        ("NAMES #a,#b", ["NAMES #a", "NAMES #b"]),
        ("PRIVMSG alice,#b :hi there", ["PRIVMSG alice hi there", "PRIVMSG #b hi there"]),
        ("NOTICE a,b :x", ["NOTICE a x", "NOTICE b x"]),
        ("KICK #a,#b x,y :why", ["KICK #a x why", "KICK #b y why"]),
        ("WHOIS a,b", ["WHOIS a", "WHOIS b"]),
        ("WHOIS server a,b", ["WHOIS a", "WHOIS b"]),
    ])
    func aListOfTargets_becomesOneCommandPerTarget_inOrder(_ line: String, _ expected: [String]) throws {
        let message = try ProtocolTestSupport.parse(line)
        let split = try #require(SessionCommand(message.command)?.splitByTarget(message, maxTargets: 4))
        #expect(split.map { ([$0.command] + $0.params).joined(separator: " ") } == expected)
    }

    @Test(arguments: [
        "JOIN #a", "JOIN 0", "PRIVMSG a,b,c,d,e :too many", "KICK #a,#b x", "KICK #a x,y", "WHOIS a", "TOPIC #a,#b", "MODE #a,#b",
    ])
    func aSingleTarget_orAListRefusedAsAWhole_runsAsItIs(_ line: String) throws {
        let message = try ProtocolTestSupport.parse(line)
        #expect(SessionCommand(message.command)?.splitByTarget(message, maxTargets: 4) == nil)
    }

    @Test func input_queuesLinesInOrder_whateverTheSplit_andPrependsSplitCommands() throws {
        var input = SessionInput()
        var accepted = input.append(Array("NICK a\r\nPRIV".utf8))
        accepted = input.append(Array("MSG #c :hi\r\n:only.a.prefix\r\nFOO bar\n".utf8)) && accepted
        accepted = input.append(Array(String(repeating: "x", count: 600).utf8) + [10]) && accepted
        #expect(accepted)
        #expect(input.backlog == 5)
        guard case let .message(nick, .registration(.nick)) = input.take() else { Issue.record("not NICK"); return }
        #expect(nick.params == ["a"])
        #expect(input.first?.isMessage == true)
        input.prepend([IRCMessage(command: "PING", params: ["1"]), IRCMessage(command: "FOO")])
        #expect(input.backlog == 6)
        guard case .message(_, .connection(.ping)) = input.take() else { Issue.record("not PING"); return }
        guard case .message(_, nil) = input.take() else { Issue.record("not an unknown command"); return }
        guard case .message(_, .messaging(.privmsg)) = input.take() else { Issue.record("not PRIVMSG"); return }
        guard case .malformed = input.take() else { Issue.record("not malformed"); return }
        guard case .message(_, nil) = input.take() else { Issue.record("not FOO"); return }
        guard case .tooLong = input.take() else { Issue.record("not too long"); return }
        #expect(input.first == nil && input.backlog == 0)
        input.compact()
        #expect(input.backlog == 0)
    }

    @Test func input_reportsAnOverflow_afterQueueingTheLinesBeforeIt() {
        var input = SessionInput()
        let accepted = input.append(Array("QUIT\r\n".utf8) + Array(repeating: UInt8(ascii: "x"), count: 70_000))
        #expect(!accepted)
        #expect(input.backlog == 1)
    }
}

extension SessionInput {
    /// The next item, taken.
    mutating func take() -> Item? {
        defer { if first != nil { removeFirst() } }
        return first
    }
}
