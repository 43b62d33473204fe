/// RFC 1459 case mapping (ISUPPORT `CASEMAPPING=rfc1459`): ASCII A-Z fold to a-z, and `[]\~`
/// fold to `{}|^`. Every other byte (including all of non-ASCII UTF-8) is its own fold, so
/// folding works byte by byte on UTF-8 and never changes a string's length.
///
/// Use `fold` for dictionary keys of nicknames and channel names, `equal` for one comparison.
///
/// Thread-safety: pure functions; callable from any thread.
public enum IRCCaseMapping {
    /// The fold of one byte: 'A'...'Z' -> 'a'...'z', '[' -> '{', '\\' -> '|', ']' -> '}',
    /// '~' -> '^'; any other byte unchanged.
    @inlinable
    public static func fold(_ byte: UInt8) -> UInt8 {
        switch byte {
        case 0x41 ... 0x5D: byte | 0x20 // A-Z and [ \ ]
        case 0x7E: 0x5E // ~ -> ^
        default: byte
        }
    }

    /// `name` folded; returns `name` itself (no allocation) when nothing in it folds.
    public static func fold(_ name: String) -> String {
        var copy = name
        let folded: String? = copy.withUTF8 { utf8 in
            guard let first = utf8.firstIndex(where: { fold($0) != $0 }) else { return nil }
            return String(unsafeUninitializedCapacity: utf8.count) { out in
                for offset in 0 ..< first { out[offset] = utf8[offset] }
                for offset in first ..< utf8.count { out[offset] = fold(utf8[offset]) }
                return utf8.count
            }
        }
        return folded ?? name
    }

    /// Whether `a` and `b` are the same name under this mapping (no allocation).
    public static func equal(_ a: String, _ b: String) -> Bool {
        guard a.utf8.count == b.utf8.count else { return false }
        var left = a
        var right = b
        return left.withUTF8 { l in
            right.withUTF8 { r in
                for offset in 0 ..< l.count where l[offset] != r[offset] && fold(l[offset]) != fold(r[offset]) {
                    return false
                }
                return true
            }
        }
    }
}
