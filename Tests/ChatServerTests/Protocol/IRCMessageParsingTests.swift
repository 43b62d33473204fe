import ChatServerCore
import Testing

@Suite("IRCMessage parsing")
struct IRCMessageParsingTests {
    typealias Support = ProtocolTestSupport

    @Test func commandWithoutPrefixOrParams_parsesToBareCommand() throws {
        let message = try Support.parse("QUIT")
        #expect(message.tags == nil)
        #expect(message.prefix == nil)
        #expect(message.command == "QUIT")
        #expect(message.params.isEmpty)
    }

    @Test func prefix_isSplitOffWithoutItsColon() throws {
        let message = try Support.parse(":nick!user@host.example PRIVMSG #chan :hello world")
        #expect(message.prefix == "nick!user@host.example")
        #expect(message.command == "PRIVMSG")
        #expect(message.params == ["#chan", "hello world"])
    }

    @Test func tags_areKeptRawWithoutTheirAt() throws {
        let message = try Support.parse("@time=2024-01-01T00:00:00Z;msgid=a\\sb :srv NOTICE * :hi")
        #expect(message.tags == "time=2024-01-01T00:00:00Z;msgid=a\\sb")
        #expect(message.prefix == "srv")
        #expect(message.command == "NOTICE")
        #expect(message.params == ["*", "hi"])

        let noPrefix = try Support.parse("@a=b PING x")
        #expect(noPrefix.tags == "a=b")
        #expect(noPrefix.prefix == nil)
        #expect(noPrefix.params == ["x"])
    }

    @Test func emptyTagsOrPrefix_becomeNil() throws {
        #expect(try Support.parse("@ PING x") == IRCMessage(command: "PING", params: ["x"]))
        #expect(try Support.parse(": PING x") == IRCMessage(command: "PING", params: ["x"]))
    }

    @Test func trailing_keepsSpacesAndColonsVerbatim() throws {
        let message = try Support.parse("PRIVMSG #a :  two  leading, :colon: and trailing  ")
        #expect(message.params == ["#a", "  two  leading, :colon: and trailing  "])
        #expect(try Support.parse("PRIVMSG #a ::)").params == ["#a", ":)"])
    }

    @Test func emptyTrailing_isAnEmptyParameter() throws {
        #expect(try Support.parse("TOPIC #chan :").params == ["#chan", ""])
        #expect(try Support.parse("AWAY :").params == [""])
    }

    @Test func leadingAndRepeatedSpaces_separateLikeOne() throws {
        let message = try Support.parse("   :srv    MODE   #chan    +o    nick   ")
        #expect(message.prefix == "srv")
        #expect(message.command == "MODE")
        #expect(message.params == ["#chan", "+o", "nick"])
        #expect(try Support.parse("  @t=1   :p   PRIVMSG   #a   :x  y").params == ["#a", "x  y"])
    }

    @Test func numerics_areKeptAsGiven() throws {
        let message = try Support.parse(":irc.example 001 alice :Welcome to the network")
        #expect(message.command == "001")
        #expect(message.params == ["alice", "Welcome to the network"])
        #expect(try Support.parse("433 * nick :Nickname is already in use").command == "433")
    }

    @Test(arguments: [("privmsg", "PRIVMSG"), ("PrivMsg", "PRIVMSG"), ("nick", "NICK"), ("JOIN", "JOIN"), ("cap", "CAP")])
    func commandLetters_areUppercased(input: String, expected: String) throws {
        #expect(try Support.parse("\(input) x").command == expected)
    }

    @Test func moreThanFifteenParams_areAllKept() throws {
        let words = (1 ... 20).map { "p\($0)" }
        let message = try Support.parse("CMD " + words.joined(separator: " ") + " :last one")
        #expect(message.params == words + ["last one"])
    }

    @Test func invalidUTF8_isDecodedWithReplacementCharacters() throws {
        let bytes = Array("PRIVMSG #a :caf".utf8) + [0xE9, 0x20, 0xFF] + Array("ok".utf8)
        let message = try IRCMessage(parsing: bytes)
        #expect(message.params == ["#a", "caf\u{FFFD} \u{FFFD}ok"])
    }

    @Test func validUTF8_isDecodedAsIs() throws {
        #expect(try Support.parse("PRIVMSG #日本 :héllo 😀").params == ["#日本", "héllo 😀"])
    }

    @Test func anyCollectionOfBytes_isAccepted() throws {
        let bytes = Array("PING :token here".utf8)
        let expected = IRCMessage(command: "PING", params: ["token here"])
        #expect(try IRCMessage(parsing: bytes[...]) == expected)
        // Not contiguous: the parser copies it.
        #expect(try IRCMessage(parsing: bytes.lazy.map { $0 }) == expected)
        #expect(try IRCMessage(parsing: "PING :token here".utf8) == expected)
    }

    @Test(arguments: [
        ("", IRCParseError.emptyLine),
        ("     ", .emptyLine),
        (":prefix", .missingCommand),
        (":prefix    ", .missingCommand),
        ("@tags", .missingCommand),
        ("@a=b :prefix", .missingCommand),
        ("12 x", .invalidCommand),
        ("0012 x", .invalidCommand),
        ("1AB x", .invalidCommand),
        ("PRIV1 x", .invalidCommand),
        ("PRIV-MSG x", .invalidCommand),
        ("PRIVMSG\u{E9} x", .invalidCommand),
        (":p :x", .invalidCommand),
        ("PRIVMSG #a :a\u{0}b", .containsNUL),
        ("\u{0}", .containsNUL),
        ("PRIVMSG #a :a\rb", .containsLineBreak),
        ("PING x\n", .containsLineBreak),
    ])
    func malformedLines_throwTheMatchingError(line: String, expected: IRCParseError) {
        #expect(throws: expected) { try Support.parse(line) }
    }

    @Test func resultParse_agreesWithTheThrowingInit() {
        #expect(IRCMessage.parse(Array("privmsg #a :hi".utf8)) == .success(IRCMessage(command: "PRIVMSG", params: ["#a", "hi"])))
        #expect(IRCMessage.parse(Array(":p".utf8)) == .failure(.missingCommand))
    }

    @Test func parseErrors_describeThemselves() {
        #expect(IRCParseError.emptyLine.description == "empty line")
        #expect(IRCParseError.invalidCommand != IRCParseError.missingCommand)
        #expect(!IRCParseError.containsNUL.description.isEmpty)
    }
}
