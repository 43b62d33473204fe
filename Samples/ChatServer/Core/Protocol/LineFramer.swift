/// Splits a byte stream into IRC lines.
///
/// - "\r\n", "\n" and a bare "\r" each end a line (every CR and every LF is a terminator, and
///   the empty "line" between the CR and LF of a CRLF is skipped like any empty line: empty
///   lines are never reported).
/// - A line whose content exceeds `maxLineBytes - 2` bytes (510 by default: 512 with CRLF) is not
///   returned: `.tooLong` is reported once for it, when its terminator arrives; its bytes are
///   discarded as they come, so memory stays bounded by `maxLineBytes`.
/// - If more than `maxDiscardBytes` bytes arrive without any terminator, `.overflow` is reported
///   once and the framer ignores everything after it (the server cuts the connection).
/// - Chunk boundaries never matter: the same bytes fed in any split give the same outputs.
///
/// Thread-safety: a value type with no shared state; one connection's reader owns it.
public struct LineFramer: Sendable {
    /// What the framer reports, in stream order.
    public enum Output: Sendable, Equatable {
        /// One line's content, without its terminator (never empty, never containing CR or LF).
        case line([UInt8])
        /// A line longer than the limit ended; its content was discarded.
        case tooLong
        /// Too many bytes without a terminator; the framer has stopped.
        case overflow
    }

    /// The longest line accepted, terminator included (content up to `maxLineBytes - 2`).
    public let maxLineBytes: Int
    /// How many bytes may arrive without a terminator before `.overflow`.
    public let maxDiscardBytes: Int

    /// The current line's content so far (empty while discarding).
    private var buffer: [UInt8] = []
    /// Bytes since the last terminator (buffered or discarded).
    private var runLength = 0
    /// The current line is too long: its bytes are being dropped until its terminator.
    private var discarding = false
    /// `.overflow` was reported; nothing more will be.
    public private(set) var hasOverflowed = false

    /// A framer for lines of at most `maxLineBytes` (terminator included).
    ///
    /// - Precondition: `maxLineBytes >= 3`, `maxDiscardBytes >= 0`.
    public init(maxLineBytes: Int = 512, maxDiscardBytes: Int = 64 * 1024) {
        precondition(maxLineBytes >= 3, "LineFramer: maxLineBytes must leave room for content and CRLF")
        precondition(maxDiscardBytes >= 0, "LineFramer: maxDiscardBytes must not be negative")
        self.maxLineBytes = maxLineBytes
        self.maxDiscardBytes = maxDiscardBytes
    }

    /// The bytes of an unfinished line held until its terminator arrives (at most
    /// `maxLineBytes - 2`; 0 while a too-long line is being discarded or after `.overflow`).
    public var bufferedByteCount: Int { buffer.count }

    /// Feeds the next bytes of the stream; `emit` is called synchronously for every complete
    /// line, too-long line and overflow they finish, in order. After `.overflow` this does
    /// nothing.
    ///
    /// Cost: one scan of the bytes and one array per line emitted (a line that arrived whole
    /// within one chunk is copied once).
    @inlinable
    public mutating func append(_ bytes: some Collection<UInt8>, _ emit: (Output) -> Void) {
        let done: Void? = bytes.withContiguousStorageIfAvailable { _append($0, emit) }
        if done == nil {
            Array(bytes).withUnsafeBufferPointer { _append($0, emit) }
        }
    }

    /// `append` on contiguous bytes.
    @usableFromInline
    mutating func _append(_ bytes: UnsafeBufferPointer<UInt8>, _ emit: (Output) -> Void) {
        if hasOverflowed { return }
        let count = bytes.count
        let maxContent = maxLineBytes - 2
        var index = 0
        while index < count {
            var end = index
            while end < count {
                let byte = bytes[end]
                if byte == 10 || byte == 13 { break }
                end += 1
            }
            let segment = end - index
            let terminated = end < count
            if segment > 0 {
                runLength += segment
                if runLength > maxDiscardBytes {
                    hasOverflowed = true
                    discarding = false
                    buffer = []
                    emit(.overflow)
                    return
                }
                if !discarding {
                    if buffer.count + segment > maxContent {
                        discarding = true
                        buffer = []
                    } else if !(terminated && buffer.isEmpty) {
                        // A line completed within this chunk is emitted straight from it below.
                        buffer.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[index ..< end]))
                    }
                }
            }
            guard terminated else { return }
            if discarding {
                discarding = false
                emit(.tooLong)
            } else if !buffer.isEmpty {
                let line = buffer
                buffer = []
                emit(.line(line))
            } else if segment > 0 {
                emit(.line(Array(UnsafeBufferPointer(rebasing: bytes[index ..< end]))))
            }
            runLength = 0
            index = end + 1
        }
    }
}
