/// Appends the wire's primitive values to a byte array: fixed-width integers little-endian,
/// strings and byte runs with a 32-bit length first.
struct _ByteWriter {
    var bytes: [UInt8]

    init(capacity: Int = 64) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    mutating func u8(_ value: UInt8) {
        bytes.append(value)
    }

    mutating func u32(_ value: UInt32) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    mutating func u64(_ value: UInt64) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    mutating func string(_ value: String) {
        var value = value
        value.withUTF8 { utf8 in
            u32(UInt32(utf8.count))
            bytes.append(contentsOf: utf8)
        }
    }

    mutating func run(_ value: some Collection<UInt8>) {
        u32(UInt32(value.count))
        bytes.append(contentsOf: value)
    }
}

/// Reads what `_ByteWriter` wrote; every read checks the length left and throws
/// `ClusterWireError` instead of reading past the end.
struct _ByteReader {
    let bytes: [UInt8]
    private(set) var offset: Int

    init(_ bytes: [UInt8], offset: Int = 0) {
        self.bytes = bytes
        self.offset = offset
    }

    var isAtEnd: Bool { offset == bytes.count }

    private mutating func take(_ count: Int) throws(ClusterWireError) -> Range<Int> {
        guard count >= 0, bytes.count - offset >= count else {
            throw ClusterWireError("truncated frame: \(count) bytes wanted at offset \(offset) of \(bytes.count)")
        }
        defer { offset += count }
        return offset..<(offset + count)
    }

    mutating func u8() throws(ClusterWireError) -> UInt8 {
        bytes[try take(1).lowerBound]
    }

    mutating func u32() throws(ClusterWireError) -> UInt32 {
        let range = try take(4)
        var value: UInt32 = 0
        for index in range.reversed() { value = value << 8 | UInt32(bytes[index]) }
        return value
    }

    mutating func u64() throws(ClusterWireError) -> UInt64 {
        let range = try take(8)
        var value: UInt64 = 0
        for index in range.reversed() { value = value << 8 | UInt64(bytes[index]) }
        return value
    }

    mutating func string() throws(ClusterWireError) -> String {
        let count = Int(try u32())
        let range = try take(count)
        // ASCII (names, paths, manifests, nearly always) needs no validation beyond the check;
        // `String(validating:as:)` is generic and looks up metadata on every call.
        let string: String? = bytes.withUnsafeBufferPointer { buffer in
            let utf8 = UnsafeBufferPointer(rebasing: buffer[range])
            if utf8.allSatisfy({ $0 < 0x80 }) { return String(decoding: utf8, as: UTF8.self) }
            return String(validating: utf8, as: UTF8.self)
        }
        guard let string else { throw ClusterWireError("a string that is not UTF-8 at offset \(range.lowerBound)") }
        return string
    }

    mutating func run() throws(ClusterWireError) -> ArraySlice<UInt8> {
        let count = Int(try u32())
        return bytes[try take(count)]
    }
}

/// A frame from another node that does not parse: counted and dropped, never a crash.
public struct ClusterWireError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What was wrong with the frame.
    public let description: String

    /// An error saying `description` (for hand-written codecs too).
    public init(_ description: String) {
        self.description = description
    }
}
