/// The headers of a NATS message (`HPUB`/`HMSG`): the `NATS/1.0` version line with an optional
/// status code and description, then `Name: value` fields, as nats-server 2.2+ carries them.
///
/// Names keep the case they were given; `subscript`, `values(for:)` and `remove` compare names
/// case-insensitively (ASCII), as nats.go's `Header.Get` does for canonical names. A name may
/// have several values, kept in the order added. A plain value: `Sendable`, `Hashable`.
///
/// Failure modes: a name or value containing CR or LF, or a name containing a colon or a space,
/// is rejected by `append`/`subscript` with a precondition (it would break the frame).
public struct NATSHeaders: Sendable, Hashable, Sequence, CustomStringConvertible {
    /// The fields, in order: (name, value).
    public private(set) var fields: [(name: String, value: String)] = []
    /// The status code of the version line (`503` for "no responders", `100` for a JetStream
    /// heartbeat or flow-control request, `404`/`408`/`409` from JetStream), or nil.
    public var status: Int?
    /// The text after the status code ("Idle Heartbeat", "No Messages"), or nil.
    public var statusDescription: String?

    /// Empty headers (no status, no fields).
    public init() {}

    /// Headers with these fields, in order.
    public init(_ fields: [(String, String)]) {
        for (name, value) in fields { append(value, for: name) }
    }

    /// True when there is no field and no status.
    public var isEmpty: Bool { fields.isEmpty && status == nil }

    /// The first value for `name`, or nil; setting replaces every value of `name` (nil removes).
    public subscript(name: String) -> String? {
        get { fields.first { Self.sameName($0.name, name) }?.value }
        set {
            remove(name)
            if let newValue { append(newValue, for: name) }
        }
    }

    /// Every value for `name`, in the order added.
    public func values(for name: String) -> [String] {
        fields.filter { Self.sameName($0.name, name) }.map(\.value)
    }

    /// Adds a value for `name` after the existing ones.
    /// - Precondition: `name` is a non-empty token (no CR, LF, colon, space, tab); `value`
    ///   has no CR or LF.
    public mutating func append(_ value: String, for name: String) {
        precondition(
            !name.isEmpty && !name.utf8.contains { $0 == 13 || $0 == 10 || $0 == 58 || $0 == 32 || $0 == 9 },
            "NATSHeaders: invalid header name \(name.debugDescription)")
        precondition(!value.utf8.contains { $0 == 13 || $0 == 10 }, "NATSHeaders: CR or LF in the value of \(name)")
        fields.append((name, value))
    }

    /// Removes every value of `name`.
    public mutating func remove(_ name: String) {
        fields.removeAll { Self.sameName($0.name, name) }
    }

    /// The fields in order.
    public func makeIterator() -> IndexingIterator<[(name: String, value: String)]> {
        fields.makeIterator()
    }

    /// "NATS/1.0 503; Name: value" (for logs).
    public var description: String {
        var text = "NATS/1.0"
        if let status { text += " \(status)" }
        if let statusDescription { text += " \(statusDescription)" }
        for (name, value) in fields { text += "; \(name): \(value)" }
        return text
    }

    /// Same status, description and fields in the same order (names compared exactly).
    public static func == (lhs: NATSHeaders, rhs: NATSHeaders) -> Bool {
        lhs.status == rhs.status && lhs.statusDescription == rhs.statusDescription
            && lhs.fields.count == rhs.fields.count
            && zip(lhs.fields, rhs.fields).allSatisfy { $0.name == $1.name && $0.value == $1.value }
    }

    /// Hashes what `==` compares.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(status)
        hasher.combine(statusDescription)
        for (name, value) in fields {
            hasher.combine(name)
            hasher.combine(value)
        }
    }

    static func sameName(_ a: String, _ b: String) -> Bool {
        a.utf8.count == b.utf8.count && zip(a.utf8, b.utf8).allSatisfy { x, y in
            (x | 0x20) == (y | 0x20) && (x >= 65 || x == y)  // ASCII letters fold, others exact
        }
    }

    // MARK: - Wire form

    /// Appends the wire form (`NATS/1.0\r\n`, the fields, a blank line) to `buffer`.
    func encode(into buffer: inout [UInt8]) {
        buffer.append(contentsOf: "NATS/1.0".utf8)
        if let status {
            buffer.append(32)
            buffer.append(contentsOf: String(status).utf8)
            if let statusDescription {
                buffer.append(32)
                buffer.append(contentsOf: statusDescription.utf8)
            }
        }
        buffer.append(13); buffer.append(10)
        for (name, value) in fields {
            buffer.append(contentsOf: name.utf8)
            buffer.append(58); buffer.append(32)
            buffer.append(contentsOf: value.utf8)
            buffer.append(13); buffer.append(10)
        }
        buffer.append(13); buffer.append(10)
    }

    /// The number of bytes `encode(into:)` appends.
    var encodedCount: Int {
        var count = 8 + 4
        if let status {
            count += 1 + String(status).utf8.count
            if let statusDescription { count += 1 + statusDescription.utf8.count }
        }
        for (name, value) in fields { count += name.utf8.count + 2 + value.utf8.count + 2 }
        return count
    }

    /// Parses the header block of an `HMSG` (version line, fields, blank line).
    ///
    /// - Throws: `NATSProtocolError` when the block does not start with `NATS/1.0`, a field has
    ///   no colon, or the block does not end with a blank line.
    init(parsing bytes: ArraySlice<UInt8>) throws(NATSProtocolError) {
        var lines: [ArraySlice<UInt8>] = []
        var start = bytes.startIndex
        var index = bytes.startIndex
        while index < bytes.endIndex {
            if bytes[index] == 10 {
                var end = index
                if end > start && bytes[end - 1] == 13 { end -= 1 }
                lines.append(bytes[start..<end])
                start = index + 1
            }
            index += 1
        }
        guard start == bytes.endIndex, let first = lines.first, lines.count >= 2, lines.last!.isEmpty else {
            throw NATSProtocolError("header block is not terminated by an empty line")
        }
        let version = Array("NATS/1.0".utf8)
        guard first.count >= version.count, first.prefix(version.count).elementsEqual(version) else {
            throw NATSProtocolError("header block does not start with NATS/1.0")
        }
        var rest = first.dropFirst(version.count).drop { $0 == 32 || $0 == 9 }
        if !rest.isEmpty {
            let digits = rest.prefix { $0 >= 48 && $0 <= 57 }
            guard !digits.isEmpty, digits.count <= 3, let code = Int(String(decoding: digits, as: UTF8.self)) else {
                throw NATSProtocolError("header status is not a number")
            }
            status = code
            rest = rest.dropFirst(digits.count).drop { $0 == 32 || $0 == 9 }
            if !rest.isEmpty { statusDescription = String(decoding: rest, as: UTF8.self) }
        }
        for line in lines.dropFirst().dropLast() {
            if line.isEmpty { throw NATSProtocolError("empty line inside a header block") }
            guard let colon = line.firstIndex(of: 58), colon > line.startIndex else {
                throw NATSProtocolError("header field without a name or colon")
            }
            let name = String(decoding: line[..<colon], as: UTF8.self)
            let value = line[(colon + 1)...].drop { $0 == 32 || $0 == 9 }
            var trimmedEnd = value.endIndex
            while trimmedEnd > value.startIndex && (value[trimmedEnd - 1] == 32 || value[trimmedEnd - 1] == 9) { trimmedEnd -= 1 }
            fields.append((name, String(decoding: value[value.startIndex..<trimmedEnd], as: UTF8.self)))
        }
    }
}
