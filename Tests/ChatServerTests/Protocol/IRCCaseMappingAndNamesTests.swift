import ChatServerCore
import Testing

@Suite("IRC case mapping")
struct IRCCaseMappingTests {
    @Test func fold_mapsLettersAndRFC1459Specials() {
        #expect(IRCCaseMapping.fold("NiCk[]\\~") == "nick{}|^")
        #expect(IRCCaseMapping.fold("#Chan-NAME_01") == "#chan-name_01")
    }

    @Test func fold_leavesAlreadyFoldedAndNonASCIIUnchanged() {
        #expect(IRCCaseMapping.fold("nick{}|^") == "nick{}|^")
        #expect(IRCCaseMapping.fold("ÄBC日本") == "Äbc日本")
        #expect(IRCCaseMapping.fold("") == "")
    }

    @Test func foldOfAByte_changesExactlyTheMappedBytes() {
        for value in 0 ... 255 {
            let byte = UInt8(value)
            let expected: UInt8 = switch byte {
            case UInt8(ascii: "A") ... UInt8(ascii: "Z"): byte + 32
            case UInt8(ascii: "["): UInt8(ascii: "{")
            case UInt8(ascii: "]"): UInt8(ascii: "}")
            case UInt8(ascii: "\\"): UInt8(ascii: "|")
            case UInt8(ascii: "~"): UInt8(ascii: "^")
            default: byte
            }
            #expect(IRCCaseMapping.fold(byte) == expected, "byte \(value)")
        }
    }

    @Test(arguments: [
        ("Nick", "nICK", true),
        ("a[b]", "A{B}", true),
        ("x\\y", "X|Y", true),
        ("x~", "X^", true),
        ("same", "same", true),
        ("", "", true),
        ("ab", "abc", false),
        ("nick", "nicK_", false),
        ("é", "É", false),
        ("a^", "a~~", false),
        ("{", "|", false),
    ])
    func equal_comparesUnderTheMapping(a: String, b: String, expected: Bool) {
        #expect(IRCCaseMapping.equal(a, b) == expected)
        #expect(IRCCaseMapping.equal(b, a) == expected)
        #expect((IRCCaseMapping.fold(a) == IRCCaseMapping.fold(b)) == expected)
    }
}

@Suite("IRC name validation")
struct IRCNamesTests {
    @Test(arguments: ["a", "Nick", "[foo]", "`x", "_-_", "a-1", "{|}^", "x\\y", "Z9", "abcdefghi"])
    func validNicks_areAccepted(nick: String) {
        #expect(IRCNames.isValidNick(nick, maxLength: 9))
    }

    @Test(arguments: ["", "1abc", "-abc", "a b", "a,b", "a!b", "a@b", "é", "#chan", ":x", "a*", "a?", "a.b", "abcdefghij", "a\u{0}"])
    func invalidNicks_areRejected(nick: String) {
        #expect(!IRCNames.isValidNick(nick, maxLength: 9))
    }

    @Test(arguments: ["#a", "#chan", "#c:ol", "#日本", "##", "#a-b_c!@", "#\(String(repeating: "x", count: 49))"])
    func validChannels_areAccepted(name: String) {
        #expect(IRCNames.isValidChannel(name, maxLength: 50))
    }

    @Test(arguments: ["", "#", "chan", "&chan", "+chan", "#a b", "#a,b", "#a\u{07}", "#a\u{0}", "#a\r", "#a\n", "#\(String(repeating: "x", count: 50))"])
    func invalidChannels_areRejected(name: String) {
        #expect(!IRCNames.isValidChannel(name, maxLength: 50))
    }

    @Test func channelLength_isCountedInUTF8Bytes() {
        #expect(IRCNames.isValidChannel("#日", maxLength: 4))
        #expect(!IRCNames.isValidChannel("#日", maxLength: 3))
    }

    @Test(arguments: ["user", "~u", "a.b", "ü", String(repeating: "u", count: 100)])
    func validUsers_areAccepted(user: String) {
        #expect(IRCNames.isValidUser(user))
    }

    @Test(arguments: ["", "a b", "a@b", "a\u{0}", "a\r", "a\n"])
    func invalidUsers_areRejected(user: String) {
        #expect(!IRCNames.isValidUser(user))
    }
}
