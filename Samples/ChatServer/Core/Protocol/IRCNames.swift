/// Validation of nicknames, channel names and usernames.
///
/// Thread-safety: pure functions; callable from any thread.
public enum IRCNames {
    /// Whether `nick` is an RFC 2812 nickname of 1...`maxLength` characters: the first a letter
    /// or a special (`[]\`_^{|}`), the rest letters, digits, specials or '-'. ASCII only (so
    /// characters are bytes).
    public static func isValidNick(_ nick: String, maxLength: Int) -> Bool {
        let utf8 = nick.utf8
        guard !utf8.isEmpty, utf8.count <= maxLength else { return false }
        var isFirst = true
        for byte in utf8 {
            let letter = (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
            // [ \ ] ^ _ ` and { | }
            let special = (byte >= 0x5B && byte <= 0x60) || (byte >= 0x7B && byte <= 0x7D)
            if isFirst {
                guard letter || special else { return false }
                isFirst = false
            } else {
                let digit = byte >= 0x30 && byte <= 0x39
                guard letter || special || digit || byte == UInt8(ascii: "-") else { return false }
            }
        }
        return true
    }

    /// Whether `name` is a channel name this server accepts: starts with '#', 2...`maxLength`
    /// UTF-8 bytes, and (RFC 2812) no space, comma, BEL (0x07), NUL, CR or LF. ':' is allowed,
    /// as RFC 2812 allows it.
    public static func isValidChannel(_ name: String, maxLength: Int) -> Bool {
        let utf8 = name.utf8
        guard utf8.count >= 2, utf8.count <= maxLength, utf8.first == UInt8(ascii: "#") else { return false }
        for byte in utf8 where byte == 0x20 || byte == 0x2C || byte == 0x07 || byte == 0 || byte == 0x0D || byte == 0x0A {
            return false
        }
        return true
    }

    /// Whether `user` is acceptable as USER's username: non-empty, no space, NUL, CR, LF or '@'.
    /// (The server truncates it to its maximum length itself.)
    public static func isValidUser(_ user: String) -> Bool {
        let utf8 = user.utf8
        guard !utf8.isEmpty else { return false }
        for byte in utf8 where byte == 0x20 || byte == 0 || byte == 0x0D || byte == 0x0A || byte == UInt8(ascii: "@") {
            return false
        }
        return true
    }
}
