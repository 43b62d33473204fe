#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The bytes a connection has accepted but the kernel has not taken yet: a FIFO of whole
/// buffers, the first possibly partly written.
///
/// Keeps the callers' arrays themselves (a broadcast line queued on many connections is one
/// shared array, never copied). Empty when idle: no storage is held then. Not thread-safe: it
/// lives inside the connection's locked state.
struct _SendQueue {
    /// Queued buffers; those before `head` are already written (dropped lazily).
    private var buffers: [[UInt8]] = []
    private var head = 0
    /// Bytes of `buffers[head]` already written.
    private var headOffset = 0
    /// Bytes queued and not yet written.
    private(set) var byteCount = 0

    var isEmpty: Bool { byteCount == 0 }

    /// Appends `bytes`, of which the first `offset` are already written. Empty remainders are
    /// not queued.
    mutating func append(_ bytes: [UInt8], offset: Int = 0) {
        guard offset < bytes.count else { return }
        if head == buffers.count {
            // Empty: reuse the first slot so the head offset applies to this buffer.
            buffers.removeAll(keepingCapacity: true)
            head = 0
            headOffset = offset
        } else if offset != 0 {
            preconditionFailure("_SendQueue: a partly written buffer can only start an empty queue")
        }
        buffers.append(bytes)
        byteCount += bytes.count - offset
    }

    /// Drops everything queued and releases the storage.
    mutating func removeAll() {
        buffers = []
        head = 0
        headOffset = 0
        byteCount = 0
    }

    /// Marks the first `count` queued bytes as written.
    mutating func consume(_ count: Int) {
        precondition(count <= byteCount, "_SendQueue: consumed \(count) of \(byteCount) bytes")
        var remaining = count
        byteCount -= count
        while remaining > 0 {
            let available = buffers[head].count - headOffset
            if remaining < available {
                headOffset += remaining
                return
            }
            remaining -= available
            buffers[head] = []  // release the array now, not when the slot is compacted
            head += 1
            headOffset = 0
        }
        if head == buffers.count {
            // Drained: hold no storage while idle.
            buffers = []
            head = 0
        } else if head >= 64 && head * 2 >= buffers.count {
            buffers.removeFirst(head)
            head = 0
        }
    }

    /// Calls `body` with `iovec`s for up to `maxBuffers` queued buffers, in order, valid only
    /// during the call; returns `body`'s result. The queue must not be empty.
    func withIOVectors<R>(maxBuffers: Int, _ body: (UnsafeMutableBufferPointer<iovec>) -> R) -> R {
        precondition(!isEmpty, "_SendQueue: no bytes to write")
        let count = min(maxBuffers, buffers.count - head)
        return withUnsafeTemporaryAllocation(of: iovec.self, capacity: count) { vectors in
            // Each array's bytes are only addressable inside its withUnsafeBytes, so nest one
            // call per buffer (recursion depth `count`) and write from the innermost.
            func fill(_ index: Int) -> R {
                let offset = index == 0 ? headOffset : 0
                return buffers[head + index].withUnsafeBytes { raw in
                    vectors[index] = iovec(
                        iov_base: UnsafeMutableRawPointer(mutating: raw.baseAddress! + offset),
                        iov_len: raw.count - offset)
                    return index + 1 == count ? body(vectors) : fill(index + 1)
                }
            }
            return fill(0)
        }
    }
}
