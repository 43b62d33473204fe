import ChatServerCore
import MailboxTestKit
import Testing

@Suite("WildcardMask")
struct WildcardMaskTests {
    @Test(arguments: [
        ("*", "", true),
        ("*", "anything at all", true),
        ("", "", true),
        ("", "a", false),
        ("abc", "abc", true),
        ("abc", "abcd", false),
        ("abc", "ab", false),
        ("a?c", "abc", true),
        ("a?c", "ac", false),
        ("a?c", "aéc", true),
        ("a?c", "a😀c", true),
        ("a??c", "a😀c", false),
        ("*.example.com", "irc.example.com", true),
        ("*.example.com", "example.com", false),
        ("a*b*c", "aXXbYYc", true),
        ("a*b*c", "aXXbYY", false),
        ("*a", "banana", true),
        ("*n?n*", "banana", true),
        ("**", "x", true),
        ("?*", "", false),
        ("*?", "é", true),
        ("nick!*@*", "Nick!user@host", true),
        ("NICK[1]!*@*", "nick{1}!u@h", true),
        ("*!*@*.BAD.net", "x!y@host.bad.NET", true),
        ("x~", "X^", true),
    ])
    func matches_followsGlobRulesCaseInsensitively(pattern: String, text: String, expected: Bool) {
        #expect(WildcardMask(pattern).matches(text) == expected)
    }

    @Test func pathologicalPatterns_finishFast() {
        let text = String(repeating: "a", count: 20_000)
        let clock = ContinuousClock()
        let started = clock.now
        #expect(!WildcardMask("*a*a*a*a*a*a*b").matches(text))
        #expect(!WildcardMask("a*a*a*a*a*a*a*a*a*a*c").matches(text))
        #expect(!WildcardMask("*?*?*?*?*?*b").matches(text))
        #expect(WildcardMask("*a*a*a*a*a*a*a").matches(text))
        // A backtracking matcher takes astronomically long here; this one is linear-ish.
        #expect(clock.now - started < .seconds(2))
    }

    @Test func equalMasks_ignoreCaseAndRepeatedStars() {
        #expect(WildcardMask("Bad!*@*") == WildcardMask("bad!**@*"))
        #expect(WildcardMask("Bad!*@*").hashValue == WildcardMask("bad!**@*").hashValue)
        #expect(WildcardMask("a*") != WildcardMask("a?"))
        #expect(Set([WildcardMask("X!*@*"), WildcardMask("x!*@*"), WildcardMask("y!*@*")]).count == 2)
        #expect(WildcardMask("Bad!*@*").pattern == "Bad!*@*")
        #expect(WildcardMask("Bad!*@*").description == "Bad!*@*")
    }

    @Test(arguments: [
        ("nick", "nick!*@*"),
        ("user@host", "*!user@host"),
        ("nick!user", "nick!user@*"),
        ("host.with.dot", "*!*@host.with.dot"),
        ("2001:db8::1", "*!*@2001:db8::1"),
        ("nick!user@host", "nick!user@host"),
        ("*!*@*", "*!*@*"),
        ("", "*!*@*"),
        ("nick!", "nick!*@*"),
        ("!user@", "*!user@*"),
        ("@host", "*!*@host"),
        ("n!u@h@x", "n!u@h@x"),
    ])
    func normalizedBanMask_fillsTheMissingParts(mask: String, expected: String) {
        #expect(WildcardMask.normalizedBanMask(mask) == expected)
    }

    /// A plain dynamic-programming matcher over characters, for comparison (pattern and text
    /// already folded).
    static func referenceMatch(_ pattern: [Character], _ text: [Character]) -> Bool {
        var row = [Bool](repeating: false, count: text.count + 1)
        row[0] = true
        for p in pattern {
            var next = [Bool](repeating: false, count: text.count + 1)
            if p == "*" {
                var any = false
                for t in 0 ... text.count {
                    any = any || row[t]
                    next[t] = any
                }
            } else {
                for t in 1 ... max(text.count, 1) where t <= text.count {
                    next[t] = row[t - 1] && (p == "?" || p == text[t - 1])
                }
            }
            row = next
        }
        return row[text.count]
    }

    @Test func randomPatterns_agreeWithAReferenceMatcher() {
        let seed = ProtocolTestSupport.seed(for: "WildcardMaskTests.randomPatterns")
        var random = SeededRandom(seed: seed)
        let alphabet: [Character] = ["a", "A", "b", "[", "{", "é", "😀", "*", "?", "*", "?"]
        for _ in 0 ..< 2_000 {
            let pattern = (0 ..< Int.random(in: 0 ... 7, using: &random)).map { _ in alphabet.randomElement(using: &random)! }
            let text = (0 ..< Int.random(in: 0 ... 9, using: &random)).map { _ in alphabet.dropLast(4).randomElement(using: &random)! }
            let expected = Self.referenceMatch(Array(IRCCaseMapping.fold(String(pattern))), Array(IRCCaseMapping.fold(String(text))))
            if WildcardMask(String(pattern)).matches(String(text)) != expected {
                Issue.record("seed \(seed): \"\(String(pattern))\" vs \"\(String(text))\" should be \(expected)")
                return
            }
        }
    }
}
