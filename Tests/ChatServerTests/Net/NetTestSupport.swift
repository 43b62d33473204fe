#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
import Foundation
@testable import ChatServerCore

/// Generous deadline for anything a working implementation does in milliseconds; only a broken
/// one waits this long.
let netTestTimeout: TimeInterval = 10

/// Records what a started connection reports, and lets a test wait for it.
///
/// Every property is read and written with `condition` locked (an `NSCondition`, a pthread
/// mutex plus condition variable that ThreadSanitizer sees).
// Safe: every stored var is read and written only with the NSCondition `condition` locked.
final class ConnectionProbe: @unchecked Sendable {
    private let condition = NSCondition()
    private var _bytes: [UInt8] = []
    private var _reads = 0
    private var _closeReasons: [TCPConnection.CloseReason] = []
    private var _readAfterClose = false

    var bytes: [UInt8] { locked { _bytes } }
    var readCount: Int { locked { _reads } }
    var closeReasons: [TCPConnection.CloseReason] { locked { _closeReasons } }
    var readAfterClose: Bool { locked { _readAfterClose } }

    func record(_ chunk: [UInt8]) {
        locked {
            if !_closeReasons.isEmpty { _readAfterClose = true }
            _bytes += chunk
            _reads += 1
            condition.broadcast()
        }
    }

    func recordClose(_ reason: TCPConnection.CloseReason) {
        locked {
            _closeReasons.append(reason)
            condition.broadcast()
        }
    }

    /// Starts `connection` with this probe as its callbacks (`onRead` may also echo).
    func start(
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
    func waitForBytes(_ count: Int, timeout: TimeInterval = netTestTimeout) -> Bool {
        waitUntil(timeout: timeout) { _bytes.count >= count }
    }

    /// Waits for the first close report; nil at the deadline.
    func waitForClose(timeout: TimeInterval = netTestTimeout) -> TCPConnection.CloseReason? {
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
final class WaitableList<Element: Sendable>: @unchecked Sendable {
    private let condition = NSCondition()
    private var items: [Element] = []

    var all: [Element] {
        condition.lock()
        defer { condition.unlock() }
        return items
    }

    func append(_ item: Element) {
        condition.lock()
        items.append(item)
        condition.broadcast()
        condition.unlock()
    }

    /// Waits until the list holds more than `index` elements and returns element `index`.
    func wait(for index: Int, timeout: TimeInterval = netTestTimeout) -> Element? {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock()
        defer { condition.unlock() }
        while items.count <= index {
            if !condition.wait(until: deadline) && items.count <= index { return nil }
        }
        return items[index]
    }
}

struct TestFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// A listener on 127.0.0.1, port 0, that collects the connections it accepts.
final class LoopbackServer: Sendable {
    let listener: TCPListener
    let accepted = WaitableList<TCPConnection>()
    let errors = WaitableList<SocketError>()

    init() throws {
        listener = try TCPListener(host: "127.0.0.1", port: 0)
        listener.startAccepting { [accepted, errors] result in
            switch result {
            case .success(let connection): accepted.append(connection)
            case .failure(let error): errors.append(error)
            }
        }
    }

    var port: UInt16 { listener.localAddress.port }

    /// Connects a client and returns it with the server side of the same connection (the
    /// `index`-th accepted one; connect one at a time for the indices to match).
    func connectPair(index: Int = 0) throws -> (client: TCPConnection, server: TCPConnection) {
        let client = try TCPConnection.connect(host: "127.0.0.1", port: port)
        guard let server = accepted.wait(for: index) else { throw TestFailure("nothing accepted") }
        return (client, server)
    }

    deinit { listener.close() }
}

/// How a raw read of a socket ended.
enum ReadEnd: Equatable {
    case eof
    case error(Int32)
    case timedOut
}

/// Reads `fd` (a socket nobody else reads: an unstarted connection's) until EOF, an error, or
/// `maxBytes`/the deadline, waiting in `poll`.
func readRaw(
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
func setBufferSize(_ fd: Int32, _ option: Int32, _ bytes: Int32) {
    var value = bytes
    _ = setsockopt(fd, SOL_SOCKET, option, &value, socklen_t(MemoryLayout<Int32>.size))
}

/// Bytes of `text` in UTF-8.
func utf8(_ text: String) -> [UInt8] { Array(text.utf8) }

/// A small seeded generator (SplitMix64) for replayable randomised tests.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// The seed from `MAILBOX_SEED`, or a fresh one; printed so a failure can be replayed.
    static func fromEnvironment(_ testName: String) -> SeededGenerator {
        let seed = ProcessInfo.processInfo.environment["MAILBOX_SEED"].flatMap(UInt64.init)
            ?? UInt64.random(in: 0...UInt64.max)
        print("\(testName): seed \(seed) (replay with MAILBOX_SEED=\(seed))")
        return SeededGenerator(seed: seed)
    }
}
