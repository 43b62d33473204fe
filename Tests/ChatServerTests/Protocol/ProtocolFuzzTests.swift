import ChatServerCore
import MailboxTestKit
import Testing

/// Seeded fuzzing of framer + parser + serializer. Each test prints its seed; replay a failure
/// with `MAILBOX_SEED=<seed> swift test --filter ChatServerTests`.
@Suite("Protocol fuzz")
struct ProtocolFuzzTests {
    /// Valid lines to mutate.
    static let corpus: [String] = [
        ":nick!user@host.example PRIVMSG #chan :hello world",
        "@time=2024-01-01T00:00:00Z;msgid=42 :srv NOTICE * :*** Looking up your hostname",
        "NICK alice",
        "USER alice 0 * :Alice Liddell",
        "JOIN #a,#b key1,key2",
        "MODE #chan +ov alice bob",
        "PING :irc.example",
        ":irc.example 001 alice :Welcome to the Internet Relay Network alice!alice@host",
        ":irc.example 353 alice = #chan :@alice +bob carol",
        "PRIVMSG #日本 :héllo 😀 wörld",
        "KICK #chan bob :you know why",
        "TOPIC #chan :",
        "QUIT",
        "CAP LS 302",
        "CMD " + (1 ... 18).map { "p\($0)" }.joined(separator: " ") + " :tail",
    ]

    /// Checks one framed line and what the parser and serializer make of it; returns what is
    /// wrong, or nil.
    static func checkLine(_ line: [UInt8]) -> String? {
        if line.isEmpty || line.count > 510 { return "framed line of \(line.count) bytes" }
        if line.contains(where: { $0 == 13 || $0 == 10 }) { return "framed line with CR/LF" }
        // The non-throwing entry point: Swift Testing records a backtrace for every throw,
        // which would dominate the fuzzers' time.
        guard case .success(let message) = IRCMessage.parse(line) else { return nil }
        if message.command.isEmpty { return "parsed an empty command from \(line)" }
        let wire = message.serialized()
        if let problem = checkWire(wire) { return "\(problem) for \(message.debugDescriptionForFuzz)" }
        guard case .success(let reparsed) = IRCMessage.parse(wire.dropLast(2)) else {
            // Only a hard-cut line (a malformed header over 508 bytes) may fail to reparse.
            return wire.count >= 509 ? nil : "serialized form does not parse: \(message.debugDescriptionForFuzz)"
        }
        // Truncation leaves at least 509 bytes; anything shorter must round-trip exactly.
        if wire.count < 509 && reparsed != message {
            return "round trip changed \(message.debugDescriptionForFuzz) into \(reparsed.debugDescriptionForFuzz)"
        }
        // Serializing what was parsed back is a fixpoint.
        if case .success(let again) = IRCMessage.parse(reparsed.serialized().dropLast(2)), again != reparsed {
            return "serialization is not a fixpoint for \(reparsed.debugDescriptionForFuzz)"
        }
        return nil
    }

    /// The wire-form invariants: at most 512 bytes, ends in CRLF, no other CR/LF/NUL, valid UTF-8.
    static func checkWire(_ wire: [UInt8]) -> String? {
        if wire.count > 512 { return "serialized \(wire.count) bytes" }
        if wire.count < 2 || wire.suffix(2) != [13, 10] { return "serialized form does not end in CRLF" }
        if ProtocolTestSupport.hasControl(wire.dropLast(2)) { return "serialized form contains CR/LF/NUL" }
        if String(validating: wire, as: UTF8.self) == nil { return "serialized form is not valid UTF-8" }
        return nil
    }

    /// 256 bytes with the distribution the fuzzers draw from: biased towards the bytes that
    /// matter to IRC (space, ':', '@', CR, LF, NUL, high bytes), indexed by a random byte.
    static let byteTable: [UInt8] = {
        var table: [UInt8] = []
        table += (0 ..< 100).map { UInt8(0x21 + $0 % 94) } // printable ASCII
        table += [UInt8](repeating: 0x20, count: 30)
        table += [UInt8](repeating: UInt8(ascii: ":"), count: 12)
        table += [UInt8](repeating: UInt8(ascii: "@"), count: 6)
        table += [UInt8](repeating: 13, count: 10)
        table += [UInt8](repeating: 10, count: 10)
        table += [UInt8](repeating: 0, count: 4)
        table += (0 ..< 84).map { UInt8(0x80 + ($0 * 3) % 128) } // UTF-8 lead/continuation bytes
        return table
    }()

    /// `count` random bytes drawn from `byteTable` (8 per random number).
    static func randomBytes(_ count: Int, _ random: inout SeededRandom) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count + 8)
        while bytes.count < count {
            var bits = random.next()
            for _ in 0 ..< 8 {
                bytes.append(byteTable[Int(bits & 0xFF)])
                bits >>= 8
            }
        }
        return Array(bytes.prefix(count))
    }

    static func randomByte(_ random: inout SeededRandom) -> UInt8 {
        byteTable[Int(random.next() & 0xFF)]
    }

    /// Feeds `stream` whole and in random chunks; checks both give the same outputs, and every
    /// line; returns what is wrong, or nil.
    static func checkStream(_ stream: [UInt8], _ random: inout SeededRandom) -> String? {
        var whole = LineFramer()
        var wholeOutputs: [LineFramer.Output] = []
        whole.append(stream) { wholeOutputs.append($0) }

        var chunked = LineFramer()
        var chunkedOutputs: [LineFramer.Output] = []
        var start = 0
        while start < stream.count {
            let end = min(stream.count, start + Int.random(in: 1 ... 200, using: &random))
            chunked.append(stream[start ..< end]) { chunkedOutputs.append($0) }
            if chunked.bufferedByteCount > 510 { return "framer buffered \(chunked.bufferedByteCount) bytes" }
            start = end
        }
        if wholeOutputs != chunkedOutputs { return "chunking changed the framer's outputs" }
        for output in wholeOutputs {
            if case .line(let line) = output, let problem = checkLine(line) { return problem }
        }
        return nil
    }

    static func mutate(_ line: [UInt8], _ random: inout SeededRandom) -> [UInt8] {
        var bytes = line
        for _ in 0 ..< Int.random(in: 1 ... 4, using: &random) {
            let position = Int.random(in: 0 ... bytes.count, using: &random)
            switch Int.random(in: 0 ..< 8, using: &random) {
            case 0: bytes.insert(randomByte(&random), at: position)
            case 1 where !bytes.isEmpty:
                let end = min(bytes.count, position + Int.random(in: 1 ... 8, using: &random))
                bytes.removeSubrange(min(position, bytes.count - 1) ..< end)
            case 2 where position < bytes.count: bytes[position] = randomByte(&random)
            case 3:
                let end = min(bytes.count, position + Int.random(in: 0 ... 40, using: &random))
                bytes.insert(contentsOf: bytes[position ..< end], at: position)
            case 4: bytes.insert(contentsOf: [UInt8](repeating: 0x20, count: Int.random(in: 1 ... 5, using: &random)), at: position)
            case 5: bytes.insert(contentsOf: Array(":@ ".utf8).shuffled(using: &random), at: position)
            case 6: bytes.insert(contentsOf: [UInt8](repeating: randomByte(&random), count: Int.random(in: 100 ... 600, using: &random)), at: position)
            default: bytes.insert(contentsOf: Array("é😀日".utf8).prefix(Int.random(in: 1 ... 9, using: &random)), at: position)
            }
        }
        return bytes
    }

    @Test func randomByteStreams_neverBreakTheInvariants() {
        let seed = ProtocolTestSupport.seed(for: "ProtocolFuzzTests.randomByteStreams")
        var random = SeededRandom(seed: seed)
        for iteration in 0 ..< 2_000 {
            let length = Int.random(in: 0 ... (iteration % 20 == 0 ? 2_000 : 400), using: &random)
            let stream = Self.randomBytes(length, &random)
            if let problem = Self.checkStream(stream, &random) {
                Issue.record("seed \(seed), iteration \(iteration): \(problem)")
                return
            }
        }
    }

    @Test func mutatedValidLines_neverBreakTheInvariants() {
        let seed = ProtocolTestSupport.seed(for: "ProtocolFuzzTests.mutatedValidLines")
        var random = SeededRandom(seed: seed)
        let terminators: [[UInt8]] = [[13, 10], [10], [13]]
        for iteration in 0 ..< 2_000 {
            var stream: [UInt8] = []
            for _ in 0 ..< Int.random(in: 1 ... 4, using: &random) {
                let line = Array(Self.corpus.randomElement(using: &random)!.utf8)
                stream += Self.mutate(line, &random) + terminators.randomElement(using: &random)!
            }
            if let problem = Self.checkStream(stream, &random) {
                Issue.record("seed \(seed), iteration \(iteration): \(problem)")
                return
            }
        }
    }

    @Test func invalidUTF8Repair_agreesWithTheStandardLibrary() {
        let seed = ProtocolTestSupport.seed(for: "ProtocolFuzzTests.invalidUTF8Repair")
        var random = SeededRandom(seed: seed)
        let head = Array("PRIVMSG #a :".utf8)
        // Few iterations: the standard library throws internally on invalid UTF-8, and Swift
        // Testing captures a backtrace for every throw.
        for iteration in 0 ..< 300 {
            let tail = Self.randomBytes(Int.random(in: 0 ... 40, using: &random), &random).filter { $0 != 0 && $0 != 10 && $0 != 13 }
            guard case .success(let message) = IRCMessage.parse(head + tail) else {
                Issue.record("seed \(seed), iteration \(iteration): \(tail) does not parse")
                return
            }
            if message.params.last != String(decoding: tail, as: UTF8.self) {
                Issue.record("seed \(seed), iteration \(iteration): \(tail) decodes differently")
                return
            }
        }
    }

    @Test func randomMessageValues_alwaysSerializeSafely() {
        let seed = ProtocolTestSupport.seed(for: "ProtocolFuzzTests.randomMessageValues")
        var random = SeededRandom(seed: seed)
        let pieces = ["a", "Z", "0", " ", ":", "@", "!", "\r", "\n", "\r\n", "\u{0}", "é", "日", "😀", "*", "\u{FFFD}"]
        func text(_ maxPieces: Int) -> String {
            var bits = random.next()
            let count = Int(bits % UInt64(maxPieces + 1))
            if bits >> 60 == 0 {
                return String(repeating: pieces[Int((bits >> 8) % 16)], count: count)
            }
            var result = ""
            for index in 0 ..< count {
                if index % 15 == 0 { bits = random.next() }
                result += pieces[Int(bits & 15)]
                bits >>= 4
            }
            return result
        }
        for iteration in 0 ..< 2_000 {
            // Mostly short fields; now and then one field long enough to force truncation (a
            // long last param) or a hard cut (a long prefix, tag text or middle param).
            let long = iteration % 4 == 0 ? Int.random(in: 0 ..< 4, using: &random) : -1
            var message = IRCMessage(
                prefix: Bool.random(using: &random) ? text(long == 0 ? 600 : 8) : nil,
                command: Bool.random(using: &random) ? ["PRIVMSG", "001", "NOTICE"].randomElement(using: &random)! : text(6),
                params: (0 ..< Int.random(in: 0 ... 17, using: &random)).map { _ in text(8) })
            if long == 1 || Int.random(in: 0 ..< 4, using: &random) == 0 { message.tags = text(long == 1 ? 600 : 8) }
            if long >= 2 {
                message.params.append(text(600))
                if long == 3 { message.params.append("x") }
            }
            let wire = message.serialized()
            if let problem = Self.checkWire(wire) {
                Issue.record("seed \(seed), iteration \(iteration): \(problem) for \(message.debugDescriptionForFuzz)")
                return
            }
            var appended: [UInt8] = []
            message.serialize(into: &appended)
            if appended != wire {
                Issue.record("seed \(seed), iteration \(iteration): serialize(into:) differs from serialized()")
                return
            }
        }
    }
}

extension IRCMessage {
    /// Every field, escaped, for failure messages.
    fileprivate var debugDescriptionForFuzz: String {
        "IRCMessage(tags: \(String(reflecting: tags)), prefix: \(String(reflecting: prefix)), command: \(String(reflecting: command)), params: \(String(reflecting: params)))"
    }
}
