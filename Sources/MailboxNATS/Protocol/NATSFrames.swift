/// Writes client frames (`PUB`, `HPUB`, `SUB`, `UNSUB`, `PING`, `PONG`, `CONNECT`) into an
/// outbound buffer. Pure functions over `[UInt8]`; the caller holds whatever lock protects it.
enum NATSFrames {
    static let ping: [UInt8] = Array("PING\r\n".utf8)
    static let pong: [UInt8] = Array("PONG\r\n".utf8)

    /// True when `subject` can be published to or subscribed on: not empty, no whitespace or
    /// control characters, no empty token (`a..b`, a leading or trailing dot).
    static func isValidSubject(_ subject: String) -> Bool {
        var subject = subject
        return subject.withUTF8 { bytes in
            guard let last = bytes.last, bytes[0] != 46, last != 46 else { return false }
            var previous: UInt8 = 0
            for byte in bytes {
                if byte <= 32 || byte == 127 || (byte == 46 && previous == 46) { return false }
                previous = byte
            }
            return true
        }
    }

    /// True when `name` can be a queue group: not empty, no whitespace or control characters.
    static func isValidQueueGroup(_ name: String) -> Bool {
        !name.isEmpty && !name.utf8.contains { $0 <= 32 || $0 == 127 }
    }

    /// Bytes a `PUB`/`HPUB` frame of these parts takes.
    static func publishFrameSize(subject: String, replyTo: String?, headerCount: Int, payloadCount: Int) -> Int {
        // "HPUB " + subject + " " + reply + " " + digits + " " + digits + "\r\n" + body + "\r\n"
        5 + subject.utf8.count + (replyTo.map { $0.utf8.count + 1 } ?? 0) + 42 + headerCount + payloadCount
    }

    /// Appends `PUB subject [reply] size\r\npayload\r\n` (or `HPUB` when `headers` is given).
    ///
    /// The control line is written into a stack buffer and appended with one copy; then the
    /// headers, the payload and the CR LF.
    static func appendPublish(
        to buffer: inout [UInt8], subject: String, replyTo: String?, headers: NATSHeaders?, payload: [UInt8]
    ) {
        let headerCount = headers?.encodedCount ?? 0
        var subject = subject
        var replyTo = replyTo
        let lineCapacity = 5 + subject.utf8.count + 1 + (replyTo?.utf8.count ?? 0) + 1 + 20 + 1 + 20 + 2
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: lineCapacity) { line in
            var count = 0
            func put(_ byte: UInt8) {
                line[count] = byte
                count += 1
            }
            func put(_ bytes: UnsafeBufferPointer<UInt8>) {
                for byte in bytes { put(byte) }
            }
            func putDecimal(_ value: Int) {
                var divisor = 1
                while divisor <= value / 10 { divisor *= 10 }
                var rest = value
                while divisor > 0 {
                    put(UInt8(48 + rest / divisor))
                    rest %= divisor
                    divisor /= 10
                }
            }
            if headers != nil { put(72) }  // H
            put(80); put(85); put(66); put(32)  // "PUB "
            subject.withUTF8 { put($0) }
            if replyTo != nil {
                put(32)
                replyTo!.withUTF8 { put($0) }
            }
            put(32)
            if headers != nil {
                putDecimal(headerCount)
                put(32)
            }
            putDecimal(headerCount + payload.count)
            put(13); put(10)
            buffer.append(contentsOf: UnsafeBufferPointer(rebasing: line[..<count]))
        }
        headers?.encode(into: &buffer)
        buffer.append(contentsOf: payload)
        buffer.append(13)
        buffer.append(10)
    }

    /// Appends `SUB subject [queue] sid\r\n`.
    static func appendSubscribe(to buffer: inout [UInt8], subject: String, queue: String?, sid: UInt64) {
        buffer.append(contentsOf: "SUB ".utf8)
        buffer.append(contentsOf: subject.utf8)
        if let queue {
            buffer.append(32)
            buffer.append(contentsOf: queue.utf8)
        }
        buffer.append(32)
        appendDecimal(Int(sid), to: &buffer)
        buffer.append(13); buffer.append(10)
    }

    /// Appends `UNSUB sid [max]\r\n`.
    static func appendUnsubscribe(to buffer: inout [UInt8], sid: UInt64, max: Int?) {
        buffer.append(contentsOf: "UNSUB ".utf8)
        appendDecimal(Int(sid), to: &buffer)
        if let max {
            buffer.append(32)
            appendDecimal(max, to: &buffer)
        }
        buffer.append(13); buffer.append(10)
    }

    /// Appends the decimal digits of a non-negative `value`.
    static func appendDecimal(_ value: Int, to buffer: inout [UInt8]) {
        if value < 10 {
            buffer.append(UInt8(48 + value))
            return
        }
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                     UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var count = 0
        var rest = value
        withUnsafeMutableBytes(of: &digits) { raw in
            while rest > 0 {
                raw[19 - count] = UInt8(48 + rest % 10)
                rest /= 10
                count += 1
            }
            buffer.append(contentsOf: raw[(20 - count)...])
        }
    }
}
