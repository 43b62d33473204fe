import ChatServerCore
import Testing

@Suite("IRCMessage serialization")
struct IRCMessageSerializationTests {
    typealias Support = ProtocolTestSupport

    @Test func wireForm_endsInCRLFAndDescriptionOmitsIt() {
        let message = IRCMessage(prefix: "irc.example", command: "001", params: ["alice", "Welcome to IRC"])
        #expect(Support.wire(message) == ":irc.example 001 alice :Welcome to IRC\r\n")
        #expect(message.description == ":irc.example 001 alice :Welcome to IRC")
    }

    @Test func lastParam_getsAColonOnlyWhenItNeedsOne() {
        #expect(IRCMessage(command: "PING", params: ["token"]).description == "PING token")
        #expect(IRCMessage(command: "TOPIC", params: ["#a", ""]).description == "TOPIC #a :")
        #expect(IRCMessage(command: "PRIVMSG", params: ["#a", "two words"]).description == "PRIVMSG #a :two words")
        #expect(IRCMessage(command: "PRIVMSG", params: ["#a", ":)"]).description == "PRIVMSG #a ::)")
        #expect(IRCMessage(command: "MODE", params: ["#a", "+o", "bob"]).description == "MODE #a +o bob")
        #expect(IRCMessage(command: "PING").description == "PING")
    }

    @Test func tags_areWrittenFirstAndEmptyOnesOmitted() {
        var message = IRCMessage(prefix: "srv", command: "NOTICE", params: ["*", "hi"])
        message.tags = "a=b;c"
        #expect(message.description == "@a=b;c :srv NOTICE * hi")
        message.tags = ""
        message.prefix = ""
        #expect(message.description == "NOTICE * hi")
    }

    @Test(arguments: [
        ":nick!user@host PRIVMSG #chan :hello world",
        "@time=1;id=x :srv 332 me #chan :the topic",
        "PING irc.example",
        "TOPIC #chan :",
        "PRIVMSG #a ::colon first",
        "CMD " + (1 ... 20).map { "p\($0)" }.joined(separator: " ") + " :and trailing",
        ":srv 005 me CHANTYPES=# CASEMAPPING=rfc1459 :are supported by this server",
        "PRIVMSG #日本 :héllo 😀",
    ])
    func canonicalLines_roundTripByteForByte(line: String) throws {
        let message = try Support.parse(line)
        #expect(message.description == line)
        #expect(try IRCMessage(parsing: message.serialized().dropLast(2)) == message)
    }

    @Test func nonCanonicalLines_serializeToTheCanonicalForm() throws {
        #expect(try Support.parse("  privmsg   #a   :hi  ").description == "PRIVMSG #a :hi  ")
        #expect(try Support.parse("PRIVMSG #a :word").description == "PRIVMSG #a word")
        #expect(try Support.parse("MODE #a +o   bob   ").description == "MODE #a +o bob")
    }

    @Test func crLfNulInLastParam_becomeSpacesAndCannotInjectALine() throws {
        let message = IRCMessage(prefix: "evil", command: "PRIVMSG", params: ["#a", "hi\r\nQUIT :bye\u{0}x"])
        let wire = message.serialized()
        #expect(!Support.hasControl(wire.dropLast(2)))
        #expect(wire.suffix(2) == [13, 10])
        let reparsed = try IRCMessage(parsing: wire.dropLast(2))
        #expect(reparsed.command == "PRIVMSG")
        #expect(reparsed.params == ["#a", "hi  QUIT :bye x"])
    }

    @Test func controlAndSpaceInOtherFields_becomeUnderscores() throws {
        var message = IRCMessage(prefix: "a b\r\nc", command: "PRIV\nMSG", params: ["#x\ry", "b c", "last"])
        message.tags = "t=1 \u{0}x"
        #expect(message.description == "@t=1__x :a_b__c PRIV_MSG #x_y b_c last")
    }

    @Test func middleParams_neverVanishOrBecomeTrailing() throws {
        let message = IRCMessage(command: "CMD", params: ["", ":x", "ok", "last word"])
        #expect(message.description == "CMD * _x ok :last word")
        #expect(try IRCMessage(parsing: message.serialized().dropLast(2)).params.count == 4)
    }

    @Test func lineOfExactly512Bytes_isNotTruncated() throws {
        // "PRIVMSG #a :" is 12 bytes; 12 + 498 + 2 = 512.
        let text = "x " + String(repeating: "y", count: 496)
        let wire = IRCMessage(command: "PRIVMSG", params: ["#a", text]).serialized()
        #expect(wire.count == 512)
        #expect(try IRCMessage(parsing: wire.dropLast(2)).params.last == text)
    }

    @Test func longLine_isTruncatedTo512WithItsLastParamCut() throws {
        let text = String(repeating: "abc ", count: 200)
        let message = IRCMessage(prefix: "nick!user@host", command: "PRIVMSG", params: ["#chan", text])
        let wire = message.serialized()
        #expect(wire.count == 512)
        #expect(wire.suffix(2) == [13, 10])
        let reparsed = try IRCMessage(parsing: wire.dropLast(2))
        #expect(reparsed.prefix == "nick!user@host")
        #expect(reparsed.params.first == "#chan")
        let kept = try #require(reparsed.params.last)
        #expect(text.hasPrefix(kept))
        #expect(kept.utf8.count == 512 - 2 - ":nick!user@host PRIVMSG #chan :".utf8.count)
    }

    @Test func truncation_cutsOnlyAtUTF8CharacterBoundaries() throws {
        for character in ["é", "日", "😀"] {
            for padding in 0 ..< 4 {
                let text = String(repeating: "p", count: padding) + String(repeating: character, count: 300)
                let wire = IRCMessage(command: "PRIVMSG", params: ["#a", text]).serialized()
                #expect(wire.count <= 512 && wire.count > 512 - character.utf8.count)
                let body = wire.dropLast(2)
                // Valid UTF-8: decoding validates, so a cut sequence would show up as U+FFFD.
                let kept = try #require(try IRCMessage(parsing: body).params.last)
                #expect(!kept.contains("\u{FFFD}"), "\(character) with \(padding) bytes of padding")
                #expect(text.hasPrefix(kept))
            }
        }
    }

    @Test func truncatedBareWord_isWrittenAsTrailingSoItStaysOneParam() throws {
        let word = String(repeating: "w", count: 600)
        let wire = IRCMessage(command: "PRIVMSG", params: ["#a", word]).serialized()
        #expect(wire.count == 512)
        #expect(Array(wire.prefix(12)) == Array("PRIVMSG #a :".utf8))
    }

    @Test func lineTooLongEvenWithoutItsLastParam_isCutWhole() {
        let hugePrefix = String(repeating: "h", count: 600)
        for params in [[], ["x"], ["a", "b c"]] {
            let wire = IRCMessage(prefix: hugePrefix, command: "PRIVMSG", params: params).serialized()
            #expect(wire.count == 512)
            #expect(wire.suffix(2) == [13, 10])
            #expect(!Support.hasControl(wire.dropLast(2)))
        }
        let wideMiddle = IRCMessage(command: "X", params: [String(repeating: "é", count: 400), "y"]).serialized()
        #expect(wideMiddle.count <= 512)
        #expect(String(validating: wideMiddle, as: UTF8.self) != nil)
    }

    @Test func serializeInto_appendsTheSameBytes() {
        let messages = [
            IRCMessage(command: "PING", params: ["x"]),
            IRCMessage(prefix: "s", command: "NOTICE", params: ["*", String(repeating: "z ", count: 400)]),
            IRCMessage(prefix: String(repeating: "h", count: 700), command: "X"),
        ]
        var batch: [UInt8] = Array("prior".utf8)
        for message in messages { message.serialize(into: &batch) }
        #expect(batch == Array("prior".utf8) + messages.flatMap { $0.serialized() })
    }
}
