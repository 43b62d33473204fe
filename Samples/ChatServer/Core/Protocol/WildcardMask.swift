/// A glob mask: '*' matches any run of characters (possibly empty), '?' exactly one character
/// (one Unicode scalar); every other character matches itself under `IRCCaseMapping` (so
/// "NICK[1]" matches "nick{1}"). There is no escape character, as in classic ircds.
///
/// Matching is O(pattern x text) in the worst case, with no exponential backtracking: a
/// pathological pattern such as "*a*a*a*a*a*a*b" against a long text finishes fast.
///
/// Two masks are equal (and hash alike) when their patterns are equal under `IRCCaseMapping`
/// once runs of '*' are collapsed (they then match exactly the same texts), so a ban list
/// keeps "Bad!*@*" and "bad!*@*" once.
///
/// Thread-safety: an immutable value; `Sendable`.
public struct WildcardMask: Sendable, Hashable, CustomStringConvertible {
    /// The pattern as given.
    public let pattern: String
    /// The pattern's UTF-8, folded, runs of '*' collapsed to one.
    private let compiled: [UInt8]

    /// A mask for `pattern` (any string is a valid pattern).
    public init(_ pattern: String) {
        self.pattern = pattern
        var compiled: [UInt8] = []
        compiled.reserveCapacity(pattern.utf8.count)
        for byte in pattern.utf8 {
            if byte == UInt8(ascii: "*") && compiled.last == UInt8(ascii: "*") { continue }
            compiled.append(IRCCaseMapping.fold(byte))
        }
        self.compiled = compiled
    }

    /// The pattern as given.
    public var description: String { pattern }

    /// Whether `text` matches the whole pattern (case-insensitively per `IRCCaseMapping`).
    public func matches(_ text: String) -> Bool {
        var copy = text
        return copy.withUTF8 { utf8 in
            compiled.withUnsafeBufferPointer { Self.match(pattern: $0, text: utf8) }
        }
    }

    /// Greedy glob matching that only ever backtracks to the most recent '*' (enough for
    /// '*'/'?' globs, and what keeps it polynomial). The text is walked in whole scalars
    /// wherever a wildcard consumes it, so '?' is one character.
    private static func match(pattern: UnsafeBufferPointer<UInt8>, text: UnsafeBufferPointer<UInt8>) -> Bool {
        let star = UInt8(ascii: "*")
        let question = UInt8(ascii: "?")
        var p = 0
        var t = 0
        var starP = -1
        var starT = 0
        while t < text.count {
            if p < pattern.count {
                let pc = pattern[p]
                if pc == star {
                    starP = p
                    starT = t
                    p += 1
                    continue
                }
                if pc == question {
                    t = min(t + scalarLength(text[t]), text.count)
                    p += 1
                    continue
                }
                if pc == IRCCaseMapping.fold(text[t]) {
                    p += 1
                    t += 1
                    continue
                }
            }
            guard starP >= 0 else { return false }
            // Let the last '*' swallow one more character and retry after it.
            starT = min(starT + scalarLength(text[starT]), text.count)
            t = starT
            p = starP + 1
        }
        while p < pattern.count && pattern[p] == star { p += 1 }
        return p == pattern.count
    }

    /// The length of the UTF-8 sequence that `lead` starts (1 for ASCII and stray bytes).
    @inline(__always)
    private static func scalarLength(_ lead: UInt8) -> Int {
        if lead < 0xC0 { return 1 }
        if lead < 0xE0 { return 2 }
        if lead < 0xF0 { return 3 }
        return 4
    }

    public static func == (lhs: WildcardMask, rhs: WildcardMask) -> Bool {
        lhs.compiled == rhs.compiled
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(compiled)
    }

    /// Normalises a ban/invite/exception mask to "nick!user@host" as ircds do; empty parts
    /// become '*':
    ///
    /// - "nick" -> "nick!*@*"
    /// - "user@host" -> "*!user@host"
    /// - "nick!user" -> "nick!user@*"
    /// - "host.with.dot" (or with ':', an IPv6 address) -> "*!*@host.with.dot"
    /// - "nick!user@host" (already full) -> unchanged
    ///
    /// The nick part runs to the first '!', the user part from there to the first '@' after
    /// it, the host part is the rest. Never fails; "" gives "*!*@*".
    public static func normalizedBanMask(_ mask: String) -> String {
        func part(_ text: Substring) -> Substring { text.isEmpty ? "*" : text }
        if let bang = mask.firstIndex(of: "!") {
            let nick = mask[..<bang]
            let rest = mask[mask.index(after: bang)...]
            if let at = rest.firstIndex(of: "@") {
                return "\(part(nick))!\(part(rest[..<at]))@\(part(rest[rest.index(after: at)...]))"
            }
            return "\(part(nick))!\(part(rest))@*"
        }
        if let at = mask.firstIndex(of: "@") {
            return "*!\(part(mask[..<at]))@\(part(mask[mask.index(after: at)...]))"
        }
        if mask.contains(".") || mask.contains(":") {
            return "*!*@\(mask)"
        }
        return "\(part(mask[...]))!*@*"
    }
}
