#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A malformed frame from the server: what was wrong, in words. The connection that read it
/// closes its socket and reconnects (as nats.go does on a parse error).
public struct NATSProtocolError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What was wrong ("MSG with 2 arguments", "control line longer than 65536 bytes", ...).
    public var reason: String

    /// An error with this reason.
    public init(_ reason: String) { self.reason = reason }

    /// "NATS protocol error: <reason>".
    public var description: String { "NATS protocol error: \(reason)" }
}

/// One frame the server sent, as the parser hands it over.
enum NATSServerFrame: Sendable {
    /// `INFO {json}`: the JSON bytes.
    case info([UInt8])
    /// `MSG` or `HMSG`, for the subscription `sid`.
    case message(sid: UInt64, NATSMessage)
    case ping
    case pong
    case ok
    /// `-ERR 'text'`: the text without the quotes.
    case error(String)
}

/// The streaming parser of what nats-server sends a client: accepts the input split anywhere
/// (a frame may arrive a byte at a time or many frames in one read), copies each payload once
/// (from the read buffer into the message's own array), and turns anything malformed into a
/// `NATSProtocolError`, after which it stays failed.
///
/// A state machine over bytes in the manner of nats.go's `parser.go`: a control line is
/// collected up to `\n` (split lines are kept in `partialLine`; a whole line in the chunk is
/// parsed in place), then a message's `size` bytes are copied, then `\r\n` is expected.
///
/// Not thread-safe: a value owned by the one reader of a connection.
struct NATSProtocolParser {
    /// The longest control line accepted (an `INFO` with many `connect_urls` can be long).
    var maxControlLine: Int
    /// The largest message accepted (headers and payload); nats-server's `max_payload` is at
    /// most 64 MiB.
    var maxPayload: Int

    private enum State {
        case controlLine
        /// Reading the payload of `pending`.
        case payload
        case carriageReturn
        case lineFeed
        case failed(NATSProtocolError)
    }

    private struct _PendingMessage {
        var subject: String
        var sid: UInt64
        var replyTo: String?
        var headerLength: Int
        var totalLength: Int
        /// The header block while it is being read (HMSG only).
        var headerBytes: [UInt8]
        var payload: [UInt8]
    }

    private var state = State.controlLine
    /// The message whose payload is being read (kept outside `state` so the arrays it fills
    /// are mutated in place, never copied).
    private var pending = _PendingMessage(subject: "", sid: 0, replyTo: nil, headerLength: 0, totalLength: 0, headerBytes: [], payload: [])
    /// A control line split across chunks, without its `\n`.
    private var partialLine: [UInt8] = []

    init(maxControlLine: Int = 64 * 1024, maxPayload: Int = 64 * 1024 * 1024) {
        self.maxControlLine = maxControlLine
        self.maxPayload = maxPayload
    }

    /// Parses `chunk`, calling `emit` with each complete frame in order.
    ///
    /// - Throws: `NATSProtocolError` for a malformed frame (and on every call after one).
    mutating func parse(_ chunk: UnsafeRawBufferPointer, emit: (NATSServerFrame) -> Void) throws(NATSProtocolError) {
        let bytes = chunk.bindMemory(to: UInt8.self)
        var index = 0
        let end = bytes.count
        while index < end {
            switch state {
            case .failed(let error):
                throw error
            case .controlLine:
                // Find the end of the line in this chunk.
                var newline = end
                if let found = memchr(bytes.baseAddress! + index, 10, end - index) {
                    newline = bytes.baseAddress!.distance(to: found.assumingMemoryBound(to: UInt8.self))
                }
                if newline == end {
                    guard partialLine.count + (end - index) <= maxControlLine else {
                        throw fail("control line longer than \(maxControlLine) bytes")
                    }
                    partialLine.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[index..<end]))
                    return
                }
                if partialLine.isEmpty {
                    guard newline - index <= maxControlLine else {
                        throw fail("control line longer than \(maxControlLine) bytes")
                    }
                    try controlLine(UnsafeBufferPointer(rebasing: bytes[index..<newline]), emit: emit)
                } else {
                    guard partialLine.count + (newline - index) <= maxControlLine else {
                        throw fail("control line longer than \(maxControlLine) bytes")
                    }
                    partialLine.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[index..<newline]))
                    let line = partialLine
                    partialLine.removeAll(keepingCapacity: true)
                    try line.withUnsafeBufferPointer { line throws(NATSProtocolError) in try controlLine(line, emit: emit) }
                }
                index = newline + 1
            case .payload:
                let wantedHeaders = pending.headerLength - pending.headerBytes.count
                if wantedHeaders > 0 {
                    let take = min(wantedHeaders, end - index)
                    pending.headerBytes.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[index..<(index + take)]))
                    index += take
                }
                let payloadLength = pending.totalLength - pending.headerLength
                let wantedPayload = payloadLength - pending.payload.count
                if wantedPayload > 0 && index < end {
                    let take = min(wantedPayload, end - index)
                    let slice = UnsafeBufferPointer(rebasing: bytes[index..<(index + take)])
                    if pending.payload.isEmpty && take == payloadLength {
                        pending.payload = Array(slice)  // all here: one allocation, one copy
                    } else {
                        if pending.payload.isEmpty { pending.payload.reserveCapacity(payloadLength) }
                        pending.payload.append(contentsOf: slice)
                    }
                    index += take
                }
                if pending.headerBytes.count == pending.headerLength && pending.payload.count == payloadLength {
                    var headers: NATSHeaders?
                    if pending.headerLength > 0 {
                        do throws(NATSProtocolError) {
                            headers = try NATSHeaders(parsing: pending.headerBytes[...])
                        } catch {
                            throw fail(error.reason)
                        }
                    }
                    state = .carriageReturn
                    let message = NATSMessage(subject: pending.subject, replyTo: pending.replyTo, headers: headers, payload: pending.payload)
                    pending.payload = []
                    pending.headerBytes = []
                    emit(.message(sid: pending.sid, message))
                }
            case .carriageReturn:
                guard bytes[index] == 13 else { throw fail("message payload not followed by CR LF") }
                state = .lineFeed
                index += 1
            case .lineFeed:
                guard bytes[index] == 10 else { throw fail("message payload not followed by CR LF") }
                state = .controlLine
                index += 1
            }
        }
        if case .failed(let error) = state { throw error }
    }

    /// Convenience for tests and callers holding an array.
    mutating func parse(_ chunk: [UInt8], emit: (NATSServerFrame) -> Void) throws(NATSProtocolError) {
        let result = chunk.withUnsafeBytes { raw in
            Result { () throws(NATSProtocolError) in try parse(raw, emit: emit) }
        }
        try result.get()
    }

    private mutating func fail(_ reason: String) -> NATSProtocolError {
        let error = NATSProtocolError(reason)
        state = .failed(error)
        return error
    }

    /// Handles one control line (without `\n`; a trailing `\r` is dropped here).
    private mutating func controlLine(_ raw: UnsafeBufferPointer<UInt8>, emit: (NATSServerFrame) -> Void) throws(NATSProtocolError) {
        var line = raw[...]
        if let last = line.last, last == 13 { line = line.dropLast() }
        // The operation name: up to the first space or tab.
        let opEnd = line.firstIndex { $0 == 32 || $0 == 9 } ?? line.endIndex
        let op = line[line.startIndex..<opEnd]
        let rest = line[opEnd...]
        switch Self.operation(op) {
        case .msg:
            let arguments = Self.split(rest)
            guard arguments.count == 3 || arguments.count == 4 else {
                throw fail("MSG with \(arguments.count) arguments")
            }
            let size = try number(arguments[arguments.count - 1], "MSG size")
            try beginPayload(arguments, fields: arguments.count - 1, headerLength: 0, totalLength: size)
        case .hmsg:
            let arguments = Self.split(rest)
            guard arguments.count == 4 || arguments.count == 5 else {
                throw fail("HMSG with \(arguments.count) arguments")
            }
            let headerLength = try number(arguments[arguments.count - 2], "HMSG header size")
            let totalLength = try number(arguments[arguments.count - 1], "HMSG total size")
            guard headerLength <= totalLength else { throw fail("HMSG header size \(headerLength) > total \(totalLength)") }
            try beginPayload(arguments, fields: arguments.count - 2, headerLength: headerLength, totalLength: totalLength)
        case .ping:
            emit(.ping)
        case .pong:
            emit(.pong)
        case .ok:
            emit(.ok)
        case .err:
            var text = String(decoding: rest, as: UTF8.self)
            text = text.trimmingSpaces()
            if text.hasPrefix("'") && text.hasSuffix("'") && text.count >= 2 {
                text = String(text.dropFirst().dropLast())
            }
            emit(.error(text))
        case .info:
            let json = rest.drop { $0 == 32 || $0 == 9 }
            guard !json.isEmpty else { throw fail("INFO without a body") }
            emit(.info(Array(json)))
        case nil:
            if line.isEmpty { throw fail("empty control line") }
            let shown = String(decoding: op.prefix(16), as: UTF8.self)
            throw fail("unknown operation \(shown.debugDescription)")
        }
    }

    /// Starts reading a message's payload; the first `fields` arguments are subject, sid and,
    /// when `fields` is 3, the reply subject (the sizes after them are already read).
    private mutating func beginPayload(_ arguments: _Arguments, fields: Int, headerLength: Int, totalLength: Int) throws(NATSProtocolError) {
        guard totalLength <= maxPayload else { throw fail("message of \(totalLength) bytes exceeds \(maxPayload)") }
        let subject = String(decoding: arguments[0], as: UTF8.self)
        guard let sid = Self.decimal(arguments[1]) else {
            throw fail("subscription id \(String(decoding: arguments[1].prefix(20), as: UTF8.self).debugDescription) is not a number")
        }
        let replyTo = fields == 3 ? String(decoding: arguments[2], as: UTF8.self) : nil
        pending.subject = subject
        pending.sid = sid
        pending.replyTo = replyTo
        pending.headerLength = headerLength
        pending.totalLength = totalLength
        if headerLength > 0 { pending.headerBytes.reserveCapacity(headerLength) }
        state = .payload
    }

    private mutating func number(_ bytes: Slice<UnsafeBufferPointer<UInt8>>, _ what: String) throws(NATSProtocolError) -> Int {
        guard !bytes.isEmpty, bytes.count <= 18, bytes.allSatisfy({ $0 >= 48 && $0 <= 57 }) else {
            throw fail("\(what) \(String(decoding: bytes.prefix(20), as: UTF8.self).debugDescription) is not a number")
        }
        var value = 0
        for digit in bytes { value = value * 10 + Int(digit - 48) }
        return value
    }

    /// The value of 1 to 19 ASCII digits, or nil.
    private static func decimal(_ bytes: Slice<UnsafeBufferPointer<UInt8>>) -> UInt64? {
        guard !bytes.isEmpty, bytes.count <= 19 else { return nil }
        var value: UInt64 = 0
        for digit in bytes {
            guard digit >= 48 && digit <= 57 else { return nil }
            value = value * 10 + UInt64(digit - 48)
        }
        return value
    }

    private enum Operation {
        case msg, hmsg, ping, pong, ok, err, info
    }

    /// The operation `name` names, case-insensitively, or nil.
    private static func operation(_ name: Slice<UnsafeBufferPointer<UInt8>>) -> Operation? {
        func matches(_ word: StaticString) -> Bool {
            guard name.count == word.utf8CodeUnitCount else { return false }
            return word.withUTF8Buffer { expected in
                zip(name, expected).allSatisfy { a, b in a == b || (a | 0x20) == (b | 0x20) && b >= 65 }
            }
        }
        switch name.count {
        case 3: return matches("MSG") ? .msg : matches("+OK") ? .ok : nil
        case 4:
            if matches("PING") { return .ping }
            if matches("PONG") { return .pong }
            if matches("HMSG") { return .hmsg }
            if matches("-ERR") { return .err }
            if matches("INFO") { return .info }
            return nil
        default: return nil
        }
    }

    /// The arguments of a control line: runs of bytes between spaces and tabs (at most 6 are
    /// kept; a count of 6 means "too many" to the callers).
    private static func split(_ rest: Slice<UnsafeBufferPointer<UInt8>>) -> _Arguments {
        var arguments = _Arguments(base: rest.base)
        var index = rest.startIndex
        while index < rest.endIndex && arguments.count < 6 {
            while index < rest.endIndex && (rest[index] == 32 || rest[index] == 9) { index += 1 }
            guard index < rest.endIndex else { break }
            let start = index
            while index < rest.endIndex && rest[index] != 32 && rest[index] != 9 { index += 1 }
            arguments.append(start, index)
        }
        return arguments
    }

    /// Up to 6 argument ranges of one control line, without a heap allocation.
    private struct _Arguments {
        let base: UnsafeBufferPointer<UInt8>
        private var bounds: (Int, Int, Int, Int, Int, Int, Int, Int, Int, Int, Int, Int) = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        private(set) var count = 0

        init(base: UnsafeBufferPointer<UInt8>) {
            self.base = base
        }

        mutating func append(_ start: Int, _ end: Int) {
            withUnsafeMutableBytes(of: &bounds) { raw in
                raw.storeBytes(of: start, toByteOffset: 2 * count * MemoryLayout<Int>.stride, as: Int.self)
                raw.storeBytes(of: end, toByteOffset: (2 * count + 1) * MemoryLayout<Int>.stride, as: Int.self)
            }
            count += 1
        }

        subscript(index: Int) -> Slice<UnsafeBufferPointer<UInt8>> {
            precondition(index < count, "NATSProtocolParser: argument \(index) of \(count)")
            return withUnsafeBytes(of: bounds) { raw in
                let start = raw.load(fromByteOffset: 2 * index * MemoryLayout<Int>.stride, as: Int.self)
                let end = raw.load(fromByteOffset: (2 * index + 1) * MemoryLayout<Int>.stride, as: Int.self)
                return base[start..<end]
            }
        }
    }
}

extension String {
    /// The string without leading and trailing spaces and tabs.
    func trimmingSpaces() -> String {
        let utf8 = self.utf8
        guard let first = utf8.firstIndex(where: { $0 != 32 && $0 != 9 }) else { return "" }
        let last = utf8.lastIndex(where: { $0 != 32 && $0 != 9 })!
        return String(self[first...last])
    }
}
