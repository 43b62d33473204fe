#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
import Foundation
@testable import MailboxNet

// Helpers shared by the socket layer's tests, the chat server's and the NATS client's.

/// Generous deadline for anything a working implementation does in milliseconds; only a broken
/// one waits this long (ThreadSanitizer on a loaded two-core machine is many times slower).
public let netTestTimeout: TimeInterval = 60

/// Records what a started connection reports, and lets a test wait for it.
///
/// Every property is read and written with `condition` locked (an `NSCondition`, a pthread
/// mutex plus condition variable that ThreadSanitizer sees).
// Safe: every stored var is read and written only with the NSCondition `condition` locked.
public final class ConnectionProbe: @unchecked Sendable {
    public init() {}
    private let condition = NSCondition()
    private var _bytes: [UInt8] = []
    private var _reads = 0
    private var _closeReasons: [TCPConnection.CloseReason] = []
    private var _readAfterClose = false

    public var bytes: [UInt8] { locked { _bytes } }
    public var readCount: Int { locked { _reads } }
    public var closeReasons: [TCPConnection.CloseReason] { locked { _closeReasons } }
    public var readAfterClose: Bool { locked { _readAfterClose } }

    public func record(_ chunk: [UInt8]) {
        locked {
            if !_closeReasons.isEmpty { _readAfterClose = true }
            _bytes += chunk
            _reads += 1
            condition.broadcast()
        }
    }

    public func recordClose(_ reason: TCPConnection.CloseReason) {
        locked {
            _closeReasons.append(reason)
            condition.broadcast()
        }
    }

    /// Starts `connection` with this probe as its callbacks (`onRead` may also echo).
    public func start(
        _ connection: TCPConnection, sendQueueLimit: Int = 1 << 30, farewell: [UInt8]? = nil,
        echo: Bool = false
    ) {
        connection.start(
            sendQueueLimit: sendQueueLimit, farewell: farewell,
            onRead: { [self, weak connection] chunk in
                record(chunk)
                if echo { connection?.send(chunk) }
            },
            onClose: { [self] reason in recordClose(reason) })
    }

    /// Waits until at least `count` bytes arrived; false at the deadline.
    public func waitForBytes(_ count: Int, timeout: TimeInterval = netTestTimeout) -> Bool {
        waitUntil(timeout: timeout) { _bytes.count >= count }
    }

    /// Waits for the first close report; nil at the deadline.
    public func waitForClose(timeout: TimeInterval = netTestTimeout) -> TCPConnection.CloseReason? {
        guard waitUntil(timeout: timeout, { !_closeReasons.isEmpty }) else { return nil }
        return closeReasons.first
    }

    private func waitUntil(timeout: TimeInterval, _ done: () -> Bool) -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock()
        defer { condition.unlock() }
        while !done() {
            if !condition.wait(until: deadline) { return done() }
        }
        return true
    }

    private func locked<T>(_ body: () -> T) -> T {
        condition.lock()
        defer { condition.unlock() }
        return body()
    }
}

/// A thread-safe list a handler appends to and a test waits on.
// Safe: `items` is read and written only with the NSCondition `condition` locked.
public final class WaitableList<Element: Sendable>: @unchecked Sendable {
    public init() {}
    private let condition = NSCondition()
    private var items: [Element] = []

    public var all: [Element] {
        condition.lock()
        defer { condition.unlock() }
        return items
    }

    public func append(_ item: Element) {
        condition.lock()
        items.append(item)
        condition.broadcast()
        condition.unlock()
    }

    /// Waits until the list holds more than `index` elements and returns element `index`.
    public func wait(for index: Int, timeout: TimeInterval = netTestTimeout) -> Element? {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock()
        defer { condition.unlock() }
        while items.count <= index {
            if !condition.wait(until: deadline) && items.count <= index { return nil }
        }
        return items[index]
    }
}

public struct TestFailure: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// A listener on 127.0.0.1, port 0, that collects the connections it accepts.
public final class LoopbackServer: Sendable {
    public let listener: TCPListener
    public let accepted = WaitableList<TCPConnection>()
    public let errors = WaitableList<SocketError>()

    public init() throws {
        listener = try TCPListener(host: "127.0.0.1", port: 0)
        listener.startAccepting { [accepted, errors] result in
            switch result {
            case .success(let connection): accepted.append(connection)
            case .failure(let error): errors.append(error)
            }
        }
    }

    public var port: UInt16 { listener.localAddress.port }

    /// Connects a client and returns it with the server side of the same connection (the
    /// `index`-th accepted one; connect one at a time for the indices to match).
    public func connectPair(index: Int = 0) throws -> (client: TCPConnection, server: TCPConnection) {
        let client = try TCPConnection.connect(host: "127.0.0.1", port: port)
        guard let server = accepted.wait(for: index) else { throw TestFailure("nothing accepted") }
        return (client, server)
    }

    deinit { listener.close() }
}

/// How a raw read of a socket ended.
public enum ReadEnd: Equatable {
    case eof
    case error(Int32)
    case timedOut
}

/// Reads `fd` (a socket nobody else reads: an unstarted connection's) until EOF, an error, or
/// `maxBytes`/the deadline, waiting in `poll`.
public func readRaw(
    _ fd: Int32, maxBytes: Int = .max, timeout: TimeInterval = netTestTimeout
) -> (bytes: [UInt8], end: ReadEnd) {
    let deadline = Date(timeIntervalSinceNow: timeout)
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 64 * 1024)
    while bytes.count < maxBytes {
        let remaining = deadline.timeIntervalSinceNow
        if remaining <= 0 { return (bytes, .timedOut) }
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let ready = poll(&descriptor, 1, Int32(remaining * 1000) + 1)
        if ready < 0 && errno == EINTR { continue }
        if ready <= 0 { continue }
        let wanted = min(buffer.count, maxBytes - bytes.count)
        let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, wanted, 0) }
        if count > 0 {
            bytes += buffer[..<count]
        } else if count == 0 {
            return (bytes, .eof)
        } else if errno != EINTR && errno != EAGAIN {
            return (bytes, .error(errno))
        }
    }
    return (bytes, .timedOut)
}

/// Sets a socket buffer size option (`SO_SNDBUF`/`SO_RCVBUF`) on `fd`.
public func setBufferSize(_ fd: Int32, _ option: Int32, _ bytes: Int32) {
    var value = bytes
    _ = setsockopt(fd, SOL_SOCKET, option, &value, socklen_t(MemoryLayout<Int32>.size))
}

/// Bytes of `text` in UTF-8.
public func utf8(_ text: String) -> [UInt8] { Array(text.utf8) }

/// A small seeded generator (SplitMix64) for replayable randomised tests.
public struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64
    public init(seed: UInt64) { state = seed }
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// The seed from `MAILBOX_SEED`, or a fresh one; printed so a failure can be replayed.
    public static func fromEnvironment(_ testName: String) -> SeededGenerator {
        let seed = ProcessInfo.processInfo.environment["MAILBOX_SEED"].flatMap(UInt64.init)
            ?? UInt64.random(in: 0...UInt64.max)
        print("\(testName): seed \(seed) (replay with MAILBOX_SEED=\(seed))")
        return SeededGenerator(seed: seed)
    }
}

/// Runs a blocking `body` (a raw read, a wait for a probe) on a thread of its own and awaits
/// it, so async tests never block the cooperative pool's few threads, nor Dispatch's global
/// queues (libdispatch adds a thread for blocked ones only after about a second, which stalls
/// every Dispatch timer and handler of the process meanwhile).
public func offPool<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        Thread { continuation.resume(returning: body()) }.start()
    }
}

/// Waits until `condition` holds, checking every millisecond; false at the deadline. For
/// states that have no event to wait on (a counter inside the code under test).
public func eventually(
    timeout: TimeInterval = netTestTimeout, _ condition: @Sendable () -> Bool
) async -> Bool {
    let deadline = Date(timeIntervalSinceNow: timeout)
    while !condition() {
        if Date() >= deadline { return false }
        try? await Task.sleep(for: .milliseconds(1))
    }
    return true
}

/// The number of open descriptors of this process (entries of `/proc/self/fd`, less the one
/// the listing itself opens); -1 where `/proc` is missing.
public func openDescriptorCount() -> Int {
    guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") else { return -1 }
    return entries.count - 1
}

/// A block of `count` bytes that names its index (`index % 251` repeated), so a test can see
/// which block arrived where.
public func block(_ index: Int, count: Int) -> [UInt8] {
    [UInt8](repeating: UInt8(index % 251), count: count)
}

/// Sets `connection`'s kernel buffer sizes (`SO_RCVBUF`, `SO_SNDBUF`), for tests that import
/// `MailboxNet` without `@testable` (the documentation tests) and cannot reach its descriptor.
public func setBufferSizes(_ connection: TCPConnection, receive: Int32? = nil, send: Int32? = nil) {
    if let receive { setBufferSize(connection.fd, SO_RCVBUF, receive) }
    if let send { setBufferSize(connection.fd, SO_SNDBUF, send) }
}

/// Nil when `actual` equals `expected`; otherwise a one-line account of how they differ. For
/// `#expect(bytesDiffer(a, b) == nil)`: a failure prints that line, not two arrays of
/// megabytes (CI keeps only the tail of its log).
public func bytesDiffer(_ actual: [UInt8], _ expected: [UInt8]) -> String? {
    if actual == expected { return nil }
    let first = (0..<min(actual.count, expected.count)).first { actual[$0] != expected[$0] } ?? min(actual.count, expected.count)
    return "got \(actual.count) bytes, expected \(expected.count); first difference at byte \(first)"
}
