import Foundation
import MailboxNet
import Mailbox
import MailboxNATS
import NetTestSupport
import Testing

/// The environment `Tests/Integration/nats.sh` sets for the tests that need a real server.
public enum NATSEnvironment {
    public static let variables = ProcessInfo.processInfo.environment
    /// The single server (JetStream on): `nats://127.0.0.1:PORT`.
    public static let url = variables["MAILBOX_NATS_URL"]
    /// What restarting that server takes: its binary, config and pid file.
    public static let serverBinary = variables["MAILBOX_NATS_SERVER_BIN"]
    public static let serverConfig = variables["MAILBOX_NATS_CONFIG"]
    public static let pidFile = variables["MAILBOX_NATS_PID_FILE"]
    /// The three-server cluster's client URLs and pid files, comma-separated.
    public static let clusterURLs = variables["MAILBOX_NATS_CLUSTER_URLS"]?.split(separator: ",").map(String.init) ?? []
    public static let clusterPIDFiles = variables["MAILBOX_NATS_CLUSTER_PID_FILES"]?.split(separator: ",").map(String.init) ?? []
    /// The Python interpreter with `nats-py`, and the peer script.
    public static let python = variables["MAILBOX_NATS_PY"]
    public static let peerScript = variables["MAILBOX_NATS_PEER"]

    public static let hasServer = url != nil
    public static let skipReason: Comment = "MAILBOX_NATS_URL is not set: run `bash Tests/Integration/nats.sh` to start nats-server and these tests"
}

/// A connection to the test server with quick reconnects, closed by the caller.
public func connectToTestServer(
    name: String = #function, configure: (inout NATSConfiguration) -> Void = { _ in }
) async throws -> NATSConnection {
    var configuration = NATSConfiguration(url: NATSEnvironment.url!)
    configuration.name = name
    configuration.reconnectWait = .milliseconds(100)
    // A handshake on a loaded machine can miss the server's 2 s authentication time-out:
    // try again rather than fail the test (bad credentials still fail at once).
    configuration.retryOnFailedConnect = true
    configuration.maxReconnectAttempts = 10
    configure(&configuration)
    return try await NATSConnection.connect(configuration)
}

/// A subject no other test uses.
public func uniqueSubject(_ base: String = "test") -> String {
    "\(base).\(UInt64.random(in: 0...UInt64.max))"
}

/// Collects values from any thread and lets a test await a condition on them, without
/// blocking a thread of the cooperative pool (NSCondition's mutex: TSan sees it).
// Safe: `items`, `waiters` and `nextWaiter` are touched only with `condition` locked.
public final class Collector<Element: Sendable>: @unchecked Sendable {
    private let condition = NSCondition()
    private var items: [Element] = []
    private var waiters: [Int: (predicate: @Sendable ([Element]) -> Bool, continuation: CheckedContinuation<Bool, Never>)] = [:]
    private var nextWaiter = 0

    public init() {}

    public func append(_ item: Element) {
        condition.lock()
        items.append(item)
        let snapshot = items
        var ready: [CheckedContinuation<Bool, Never>] = []
        for (id, waiter) in waiters where waiter.predicate(snapshot) {
            waiters[id] = nil
            ready.append(waiter.continuation)
        }
        condition.unlock()
        for continuation in ready { continuation.resume(returning: true) }
    }

    public var all: [Element] {
        condition.lock()
        defer { condition.unlock() }
        return items
    }

    public var count: Int { all.count }

    /// Returns once `predicate` holds for the items, or false at the (generous) deadline.
    @discardableResult
    public func wait(timeout: TimeInterval = 30, until predicate: @escaping @Sendable ([Element]) -> Bool) async -> Bool {
        await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            condition.lock()
            if predicate(items) {
                condition.unlock()
                continuation.resume(returning: true)
                return
            }
            let id = nextWaiter
            nextWaiter += 1
            waiters[id] = (predicate, continuation)
            condition.unlock()
            DispatchQueue.global().asyncAfter(deadline: .now() + timeout) { [self] in
                condition.lock()
                let waiter = waiters.removeValue(forKey: id)
                let holds = predicate(items)
                condition.unlock()
                waiter?.continuation.resume(returning: holds)
            }
        }
    }

    @discardableResult
    public func wait(forCount count: Int, timeout: TimeInterval = 30) async -> Bool {
        await wait(timeout: timeout) { $0.count >= count }
    }
}

/// Waits (generous deadline) until `connection.state` is `state`.
public func waitForState(_ connection: NATSConnection, _ state: NATSConnectionState, timeout: TimeInterval = 30) async -> Bool {
    let seen = Collector<NATSConnectionState>()
    let disposable = connection.state.producer.startWithValues { seen.append($0) }
    defer { disposable.dispose() }
    return await seen.wait(timeout: timeout) { $0.last == state }
}

/// Runs a process to completion and returns its exit status and standard output.
public func run(_ executable: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    try process.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: data, as: UTF8.self))
}

/// Reads a pid file and sends `signal` to that process; returns the pid.
@discardableResult
public func signalServer(pidFile: String, _ signal: Int32 = SIGKILL) throws -> Int32 {
    let text = try String(contentsOfFile: pidFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
    guard let pid = Int32(text) else { throw TestFailure("pid file \(pidFile) holds \(text.debugDescription)") }
    kill(pid, signal)
    return pid
}

/// Waits until the process `pid` has exited (kill -0 fails), generous deadline.
public func waitForExit(pid: Int32, timeout: TimeInterval = 30) -> Bool {
    let deadline = Date(timeIntervalSinceNow: timeout)
    while Date() < deadline {
        if kill(pid, 0) != 0 { return true }
        usleep(10_000)  // polling an external process's exit: there is no event to wait on
    }
    return false
}

/// A nats-server of one test's own (so killing it disturbs no other test), on a free loopback
/// port, from `MAILBOX_NATS_SERVER_BIN`; `stop()` kills it, `start()` starts it again on the
/// same port with the same store.
public final class OwnServer: @unchecked Sendable {
    // Safe: `process` is touched only by the test that owns the server, one call at a time.
    public let port: UInt16
    public let directory: URL
    private var process: Process?

    public var url: String { "nats://127.0.0.1:\(port)" }

    public init(jetStream: Bool = false) throws {
        port = try LoopbackServer.freePort()
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("mailbox-nats-\(port)-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var config = "listen: 127.0.0.1:\(port)\nping_interval: \"2s\"\nping_max: 2\n"
        if jetStream { config += "jetstream { store_dir: \"\(directory.path)/js\" }\n" }
        try config.write(to: directory.appendingPathComponent("server.conf"), atomically: true, encoding: .utf8)
        try start()
    }

    /// Starts the server and waits (generous deadline) until its port accepts.
    public func start() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: NATSEnvironment.serverBinary ?? "/usr/sbin/nats-server")
        process.arguments = ["-c", directory.appendingPathComponent("server.conf").path]
        let log = FileHandle(forWritingAtPath: "/dev/null")
        process.standardOutput = log
        process.standardError = log
        try process.run()
        self.process = process
        let deadline = Date(timeIntervalSinceNow: 30)
        while Date() < deadline {
            if let connection = try? TCPConnection.connect(host: "127.0.0.1", port: port, timeout: .seconds(1)) {
                connection.abort()
                return
            }
            usleep(20_000)  // waiting for an external process's port to open: no event to wait on
        }
        throw TestFailure("nats-server on port \(port) did not start within 30 s")
    }

    /// Kills the server (SIGKILL: a crash, as far as clients can tell) and waits for it to exit.
    public func stop() {
        guard let process else { return }
        process.terminate()
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        self.process = nil
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: directory)
    }
}

extension LoopbackServer {
    /// A loopback port nobody listens on right now (bound, then released).
    public static func freePort() throws -> UInt16 {
        let listener = try TCPListener(host: "127.0.0.1", port: 0)
        defer { listener.close() }
        return listener.localAddress.port
    }
}

/// A child process whose standard output is collected line by line.
public final class PeerProcess: @unchecked Sendable {
    // Safe: `process` and `input` are set once in init; `lines` is a thread-safe Collector.
    public let lines = Collector<String>()
    private let process = Process()
    private let input = Pipe()
    private let partial = LockedBytes()

    public init(_ executable: String, _ arguments: [String]) throws {
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardInput = input
        output.fileHandleForReading.readabilityHandler = { [lines, partial] handle in
            let data = handle.availableData
            if data.isEmpty {
                handle.readabilityHandler = nil
                return
            }
            for line in partial.appendAndSplitLines(Array(data)) { lines.append(line) }
        }
        try process.run()
    }

    /// Waits until the process printed `line`.
    public func waitFor(_ line: String, timeout: TimeInterval = 30) async -> Bool {
        await lines.wait(timeout: timeout) { $0.contains(line) }
    }

    /// Waits until the process printed a line that starts with `prefix`; returns it.
    public func waitForLine(startingWith prefix: String, after count: Int = 0, timeout: TimeInterval = 30) async -> String? {
        let found = await lines.wait(timeout: timeout) { $0.dropFirst(count).contains { $0.hasPrefix(prefix) } }
        return found ? lines.all.dropFirst(count).first { $0.hasPrefix(prefix) } : nil
    }

    /// Writes `line` to the process's standard input.
    public func send(_ line: String) {
        input.fileHandleForWriting.write(Data((line + "\n").utf8))
    }

    /// The process's id (for signals).
    public var pid: Int32 { process.processIdentifier }

    /// Sends `signal` to the process.
    public func signal(_ signal: Int32) {
        kill(process.processIdentifier, signal)
    }

    /// Closes its standard input and waits for it to exit; returns its status.
    public func finish() -> Int32 {
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
        return process.terminationStatus
    }

    deinit {
        if process.isRunning { process.terminate() }
    }
}

/// Bytes of a stream not yet ended by a newline, in the package's value box.
public struct LockedBytes: Sendable {
    private let bytes = LockedValueBox<[UInt8]>([])

    public init() {}

    public func appendAndSplitLines(_ more: [UInt8]) -> [String] {
        bytes.withLockedValue { bytes in
            bytes += more
            var lines: [String] = []
            while let newline = bytes.firstIndex(of: 10) {
                lines.append(String(decoding: bytes[..<newline], as: UTF8.self))
                bytes.removeSubrange(...newline)
            }
            return lines
        }
    }
}
