/// One IRC message: optional tags and prefix, a command, and its parameters.
///
/// Wire form (RFC 1459 / RFC 2812, with IRCv3 message tags):
/// `[@tags ][:prefix ]COMMAND [middle ...] [:trailing]`, at most 512 bytes including CRLF.
///
/// - Parsing (`init(parsing:)`) is lenient the way ircds are: leading spaces are skipped, runs of
///   spaces separate like one, invalid UTF-8 becomes U+FFFD, and more than 15 parameters are all
///   kept (none is merged into a trailing one).
/// - Serialization (`serialized()`) never lets CR, LF or NUL reach the wire, never writes a
///   middle parameter that would parse differently, and truncates to 512 bytes at a UTF-8
///   character boundary.
///
/// Thread-safety: a value type; `Sendable`.
public struct IRCMessage: Sendable, Hashable, CustomStringConvertible {
    /// The raw IRCv3 tag text without the leading '@' (`nil` when there is none, or it is empty).
    /// The server does not interpret it.
    public var tags: String?
    /// The prefix (source) without the leading ':' (`nil` when there is none, or it is empty).
    public var prefix: String?
    /// The command: ASCII letters uppercased (`"PRIVMSG"`), numerics as given (`"001"`).
    public var command: String
    /// The parameters, in order; the last one may contain spaces (it is written as trailing).
    public var params: [String]

    /// The longest line on the wire, CRLF included (RFC 1459).
    public static let maxLineBytes = 512

    /// A message with no tags.
    ///
    /// Nothing is checked here; `serialized()` makes whatever is given safe for the wire.
    public init(prefix: String? = nil, command: String, params: [String] = []) {
        self.tags = nil
        self.prefix = prefix
        self.command = command
        self.params = params
    }

    /// A message with every field given, tags included.
    public init(tags: String?, prefix: String?, command: String, params: [String]) {
        self.tags = tags
        self.prefix = prefix
        self.command = command
        self.params = params
    }

    // MARK: - Parsing

    /// Parses one line WITHOUT its terminator (as `LineFramer` delivers it).
    ///
    /// - Bytes are decoded as UTF-8; each maximal ill-formed subsequence becomes one U+FFFD
    ///   (the Unicode replacement character, exactly as `String(decoding:as:)` repairs) -- a
    ///   line is never rejected for its encoding. (Latin-1 fallback was not chosen: every
    ///   client in use today sends UTF-8, and U+FFFD makes damage visible rather than silent.)
    /// - Leading spaces are skipped; any run of spaces separates like one space; spaces at the
    ///   end of a line without a trailing parameter are ignored.
    /// - A parameter starting with ':' is the trailing one: the rest of the line, spaces and all
    ///   (possibly empty).
    /// - More than 15 parameters: all are kept, each split at spaces (this server never needs
    ///   the RFC's merge of the 15th and later parameters).
    /// - The command's ASCII letters are uppercased; a numeric must be exactly three digits.
    /// - An empty tag section (`"@ CMD"`) or prefix (`": CMD"`) gives `nil`.
    ///
    /// Cost: one pass over the bytes plus one `String` per field (no allocation for fields up
    /// to 15 UTF-8 bytes).
    ///
    /// - Throws: `.containsNUL` or `.containsLineBreak` if the line has NUL, CR or LF anywhere;
    ///   `.emptyLine` if it is empty or only spaces; `.missingCommand` if tags/prefix are not
    ///   followed by a command; `.invalidCommand` if the command is neither letters only nor
    ///   exactly three digits.
    @inlinable
    public init(parsing line: some Collection<UInt8>) throws(IRCParseError) {
        self = try IRCMessage.parse(line).get()
    }

    /// `init(parsing:)` without throwing: the message, or why the line is not one. Same rules,
    /// same cost; for callers that treat a bad line as data (counting, replying), not as an
    /// exception.
    @inlinable
    public static func parse(_ line: some Collection<UInt8>) -> Result<IRCMessage, IRCParseError> {
        line.withContiguousStorageIfAvailable { IRCMessage._parse($0) }
            ?? Array(line).withUnsafeBufferPointer { IRCMessage._parse($0) }
    }

    /// The parser proper, on contiguous bytes; see `init(parsing:)`.
    @usableFromInline
    static func _parse(_ bytes: UnsafeBufferPointer<UInt8>) -> Result<IRCMessage, IRCParseError> {
        var hasNonASCII = false
        for byte in bytes {
            if byte <= 13 {
                if byte == 0 { return .failure(.containsNUL) }
                if byte == 10 || byte == 13 { return .failure(.containsLineBreak) }
            } else if byte >= 0x80 {
                hasNonASCII = true
            }
        }
        // Repairing the whole line first is the same as repairing each field: an ill-formed
        // sequence never includes an ASCII byte, so spaces and ':' stay where they were.
        if hasNonASCII, let repaired = UTF8Repair.repaired(bytes) {
            return repaired.withUnsafeBufferPointer { parseFields($0) }
        }
        return parseFields(bytes)
    }

    /// Splits valid UTF-8 without CR, LF or NUL into the message's fields.
    private static func parseFields(_ bytes: UnsafeBufferPointer<UInt8>) -> Result<IRCMessage, IRCParseError> {
        let space = UInt8(ascii: " ")
        let count = bytes.count
        var index = 0
        // Skips a run of spaces; returns the index of the next non-space byte (or count).
        func skipSpaces(_ from: Int) -> Int {
            var at = from
            while at < count && bytes[at] == space { at += 1 }
            return at
        }
        // The end of the token starting at `from`: the next space (or count).
        func tokenEnd(_ from: Int) -> Int {
            var at = from
            while at < count && bytes[at] != space { at += 1 }
            return at
        }
        func text(_ start: Int, _ end: Int) -> String {
            String(decoding: UnsafeBufferPointer(rebasing: bytes[start ..< end]), as: UTF8.self)
        }

        index = skipSpaces(index)
        if index == count { return .failure(.emptyLine) }

        var tags: String?
        if bytes[index] == UInt8(ascii: "@") {
            let end = tokenEnd(index + 1)
            if end > index + 1 { tags = text(index + 1, end) }
            index = skipSpaces(end)
            if index == count { return .failure(.missingCommand) }
        }

        var prefix: String?
        if bytes[index] == UInt8(ascii: ":") {
            let end = tokenEnd(index + 1)
            if end > index + 1 { prefix = text(index + 1, end) }
            index = skipSpaces(end)
            if index == count { return .failure(.missingCommand) }
        }

        let commandEnd = tokenEnd(index)
        guard let command = parseCommand(bytes, index, commandEnd) else { return .failure(.invalidCommand) }
        index = commandEnd

        var params: [String] = []
        while true {
            index = skipSpaces(index)
            if index == count { break }
            if bytes[index] == UInt8(ascii: ":") {
                params.append(text(index + 1, count))
                break
            }
            let end = tokenEnd(index)
            if params.isEmpty { params.reserveCapacity(4) }
            params.append(text(index, end))
            index = end
        }
        return .success(IRCMessage(tags: tags, prefix: prefix, command: command, params: params))
    }

    /// The command in `bytes[start..<end]`, letters uppercased, or `nil` if it is neither
    /// ASCII letters only nor exactly three digits.
    private static func parseCommand(_ bytes: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int) -> String? {
        let length = end - start
        guard length > 0 else { return nil }
        let first = bytes[start]
        if first >= UInt8(ascii: "0") && first <= UInt8(ascii: "9") {
            guard length == 3 else { return nil }
            for at in start ..< end where !(bytes[at] >= UInt8(ascii: "0") && bytes[at] <= UInt8(ascii: "9")) {
                return nil
            }
            return String(decoding: UnsafeBufferPointer(rebasing: bytes[start ..< end]), as: UTF8.self)
        }
        var hasLower = false
        for at in start ..< end {
            let byte = bytes[at]
            if byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z") {
                hasLower = true
            } else if !(byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z")) {
                return nil
            }
        }
        if !hasLower {
            return String(decoding: UnsafeBufferPointer(rebasing: bytes[start ..< end]), as: UTF8.self)
        }
        return String(unsafeUninitializedCapacity: length) { out in
            for offset in 0 ..< length {
                let byte = bytes[start + offset]
                // Letters only here: clearing 0x20 uppercases.
                out[offset] = byte & ~0x20
            }
            return length
        }
    }

    // MARK: - Serialization

    /// The wire form, ending in "\r\n": `"[@tags ][:prefix ]COMMAND p1 p2 :last"`.
    ///
    /// - The last parameter is written as trailing (with ':') exactly when it has to be: when it
    ///   is empty, contains a space (or CR/LF/NUL, which become spaces), starts with ':', or was
    ///   truncated.
    /// - CR, LF and NUL never reach the wire: in the last parameter they become spaces. Middle
    ///   parameters (all but the last), the tags, the prefix and the command can carry no space
    ///   either, so there CR, LF, NUL and space become '_'; a middle parameter starting with ':'
    ///   has that ':' written as '_', and an empty one is written as "*" (so that no parameter
    ///   vanishes or swallows the rest of the line). Empty tags or prefix are omitted.
    /// - At most 512 bytes including CRLF (and tags, if any): a longer line has its last
    ///   parameter truncated at a UTF-8 character boundary. If even the line without its last parameter is too long (a
    ///   malformed message: huge prefix or middle parameters), the whole line is cut at a UTF-8
    ///   character boundary at 510 bytes.
    ///
    /// The command is written as given (sanitized as above); an empty one gives a malformed
    /// line, so callers always set one.
    ///
    /// - Parameter alwaysTrailing: write the last parameter with ':' even when it need not be,
    ///   as ircds do for texts (`PRIVMSG #a :hi`, numerics' messages), for clients that split
    ///   on " :" instead of parsing.
    ///
    /// Cost: one allocation of exactly the line's size and one copy of each field. Serialize
    /// once and send the same bytes to every recipient.
    public func serialized(alwaysTrailing: Bool = false) -> [UInt8] {
        let layout = self.layout(alwaysTrailing: alwaysTrailing)
        if let cut = layout.hardCut {
            return hardCutLine(fullBodyLength: cut)
        }
        return [UInt8](unsafeUninitializedCapacity: layout.total) { buffer, initialized in
            let written = writeBody(buffer.baseAddress!, lastLength: layout.lastLength, lastColon: layout.lastColon)
            buffer[written] = 13
            buffer[written + 1] = 10
            initialized = written + 2
        }
    }

    /// Appends the wire form (as `serialized()` returns it) to `buffer`, e.g. to batch several
    /// messages into one write.
    public func serialize(into buffer: inout [UInt8], alwaysTrailing: Bool = false) {
        let layout = self.layout(alwaysTrailing: alwaysTrailing)
        if let cut = layout.hardCut {
            buffer.append(contentsOf: hardCutLine(fullBodyLength: cut))
            return
        }
        let start = buffer.count
        buffer.append(contentsOf: repeatElement(0, count: layout.total))
        buffer.withUnsafeMutableBufferPointer { all in
            let base = all.baseAddress! + start
            let written = writeBody(base, lastLength: layout.lastLength, lastColon: layout.lastColon)
            base[written] = 13
            base[written + 1] = 10
        }
    }

    /// The wire form without CRLF (truncated like `serialized()`), for logs and tests.
    public var description: String {
        let wire = serialized()
        return String(decoding: wire[..<(wire.count - 2)], as: UTF8.self)
    }

    /// How the line is laid out: its total size with CRLF, how many bytes of the last parameter
    /// are written and whether with ':'; or, if the line cannot be saved by truncating the last
    /// parameter, the untruncated body length to cut (`hardCut`).
    private struct Layout {
        var total: Int
        var lastLength: Int
        var lastColon: Bool
        var hardCut: Int?
    }

    private func layout(alwaysTrailing: Bool) -> Layout {
        var header = command.utf8.count
        if let tags, !tags.isEmpty { header += tags.utf8.count + 2 }
        if let prefix, !prefix.isEmpty { header += prefix.utf8.count + 2 }
        let middleCount = max(params.count - 1, 0)
        for position in 0 ..< middleCount {
            header += 1 + max(params[position].utf8.count, 1)
        }
        let limit = Self.maxLineBytes
        guard let last = params.last else {
            let total = header + 2
            return total <= limit
                ? Layout(total: total, lastLength: 0, lastColon: false, hardCut: nil)
                : Layout(total: 0, lastLength: 0, lastColon: false, hardCut: header)
        }
        let lastLength = last.utf8.count
        let lastColon = alwaysTrailing || Self.needsTrailing(last)
        let total = header + 1 + (lastColon ? 1 : 0) + lastLength + 2
        if total <= limit {
            return Layout(total: total, lastLength: lastLength, lastColon: lastColon, hardCut: nil)
        }
        // Too long: keep what fits of the last parameter, as trailing (always valid).
        let budget = limit - 2 - header - 2
        guard budget >= 0 else {
            return Layout(total: 0, lastLength: 0, lastColon: false, hardCut: total - 2)
        }
        var keep = budget
        var copy = last
        copy.withUTF8 { utf8 in
            // Back up over continuation bytes (10xxxxxx) to the start of a character.
            while keep > 0 && utf8[keep] & 0xC0 == 0x80 { keep -= 1 }
        }
        return Layout(total: header + 2 + keep + 2, lastLength: keep, lastColon: true, hardCut: nil)
    }

    /// Whether `last` must be written with ':': empty, starts with ':', or has a byte that is
    /// (or becomes) a space.
    private static func needsTrailing(_ last: String) -> Bool {
        var copy = last
        return copy.withUTF8 { utf8 in
            guard let first = utf8.first, first != UInt8(ascii: ":") else { return true }
            for byte in utf8 where byte <= 32 && (byte == 32 || byte == 0 || byte == 10 || byte == 13) {
                return true
            }
            return false
        }
    }

    /// Writes everything but CRLF to `out` (which has room), with `lastLength` bytes of the last
    /// parameter; returns the number of bytes written.
    private func writeBody(_ out: UnsafeMutablePointer<UInt8>, lastLength: Int, lastColon: Bool) -> Int {
        var at = 0
        if let tags, !tags.isEmpty {
            out[at] = UInt8(ascii: "@")
            at += 1
            at += Self.put(tags, out + at, limit: Int.max, spaceToo: true)
            out[at] = 32
            at += 1
        }
        if let prefix, !prefix.isEmpty {
            out[at] = UInt8(ascii: ":")
            at += 1
            at += Self.put(prefix, out + at, limit: Int.max, spaceToo: true)
            out[at] = 32
            at += 1
        }
        at += Self.put(command, out + at, limit: Int.max, spaceToo: true)
        guard !params.isEmpty else { return at }
        for position in 0 ..< params.count - 1 {
            out[at] = 32
            at += 1
            let written = Self.put(params[position], out + at, limit: Int.max, spaceToo: true)
            if written == 0 {
                out[at] = UInt8(ascii: "*")
                at += 1
            } else {
                if out[at] == UInt8(ascii: ":") { out[at] = UInt8(ascii: "_") }
                at += written
            }
        }
        out[at] = 32
        at += 1
        if lastColon {
            out[at] = UInt8(ascii: ":")
            at += 1
        }
        at += Self.put(params[params.count - 1], out + at, limit: lastLength, spaceToo: false)
        return at
    }

    /// Copies up to `limit` UTF-8 bytes of `text` to `out`, replacing CR, LF and NUL (and, if
    /// `spaceToo`, space) with a harmless byte: '_' where spaces are not allowed, else space.
    @inline(__always)
    private static func put(_ text: String, _ out: UnsafeMutablePointer<UInt8>, limit: Int, spaceToo: Bool) -> Int {
        var copy = text
        return copy.withUTF8 { utf8 in
            let length = min(utf8.count, limit)
            guard length > 0, let base = utf8.baseAddress else { return 0 }
            out.initialize(from: base, count: length)
            let replacement: UInt8 = spaceToo ? UInt8(ascii: "_") : 32
            for offset in 0 ..< length {
                let byte = out[offset]
                if byte <= 32 && (byte == 0 || byte == 10 || byte == 13 || (spaceToo && byte == 32)) {
                    out[offset] = replacement
                }
            }
            return length
        }
    }

    /// The rare malformed case: writes the whole body, cuts it at a character boundary at most
    /// 510 bytes in, and ends it with CRLF.
    private func hardCutLine(fullBodyLength: Int) -> [UInt8] {
        let body = [UInt8](unsafeUninitializedCapacity: fullBodyLength) { buffer, initialized in
            initialized = writeBody(buffer.baseAddress!, lastLength: params.last?.utf8.count ?? 0, lastColon: Self.needsTrailingOrEmpty(params))
        }
        var keep = min(body.count, Self.maxLineBytes - 2)
        while keep > 0 && keep < body.count && body[keep] & 0xC0 == 0x80 { keep -= 1 }
        var line = [UInt8]()
        line.reserveCapacity(keep + 2)
        line.append(contentsOf: body[..<keep])
        line.append(13)
        line.append(10)
        return line
    }

    private static func needsTrailingOrEmpty(_ params: [String]) -> Bool {
        guard let last = params.last else { return false }
        return needsTrailing(last)
    }
}
