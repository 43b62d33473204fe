import Foundation
import Mailbox
import MailboxNet
import Testing
@testable import ChatServerCore

/// An in-memory client connection: the test types what the client sends and reads what the
/// server queued for it. Thread-safety: `state` is behind a lock.
final class FakeConnection: ClientConnection {
    private struct State {
        var output: [UInt8] = []
        var onRead: (@Sendable ([UInt8]) -> Void)?
        var onClose: (@Sendable (TCPConnection.CloseReason) -> Void)?
        var closed = false
        var paused = false
        var sendQueueLimit = Int.max
    }

    let id: UInt64
    let peerHost: String
    private let state = LockedValueBox(State())

    init(id: UInt64, host: String = "127.0.0.1") {
        self.id = id
        peerHost = host
    }

    func open(sendQueueLimit: Int, farewell: [UInt8]?, onRead: @escaping @Sendable ([UInt8]) -> Void,
              onClose: @escaping @Sendable (TCPConnection.CloseReason) -> Void) {
        state.withLockedValue {
            $0.onRead = onRead
            $0.onClose = onClose
            $0.sendQueueLimit = sendQueueLimit
        }
    }

    func send(_ bytes: [UInt8]) -> TCPConnection.SendResult {
        state.withLockedValue { state in
            guard !state.closed else { return .closed }
            state.output += bytes
            return .queued
        }
    }

    func closeGracefully(final: [UInt8]?) {
        let onClose = state.withLockedValue { state -> (@Sendable (TCPConnection.CloseReason) -> Void)? in
            guard !state.closed else { return nil }
            state.output += final ?? []
            state.closed = true
            return state.onClose
        }
        onClose?(.closedLocally)
    }

    func pauseReading() { state.withLockedValue { $0.paused = true } }
    func resumeReading() { state.withLockedValue { $0.paused = false } }

    /// The client sends `text` (lines joined with CRLF, one added at the end).
    func type(_ lines: String...) {
        let onRead = state.withLockedValue { $0.onRead }
        onRead?(Array((lines.joined(separator: "\r\n") + "\r\n").utf8))
    }

    /// The client sends raw bytes.
    func typeBytes(_ bytes: [UInt8]) {
        let onRead = state.withLockedValue { $0.onRead }
        onRead?(bytes)
    }

    /// The connection ends from the client's side.
    func disconnect(_ reason: TCPConnection.CloseReason = .peerClosed) {
        let onClose = state.withLockedValue { state -> (@Sendable (TCPConnection.CloseReason) -> Void)? in
            guard !state.closed else { return nil }
            state.closed = true
            return state.onClose
        }
        onClose?(reason)
    }

    /// The lines the server sent since the last call (without CRLF).
    func take() -> [String] {
        let bytes = state.withLockedValue { state -> [UInt8] in
            defer { state.output.removeAll() }
            return state.output
        }
        return String(decoding: bytes, as: UTF8.self).components(separatedBy: "\r\n").filter { !$0.isEmpty }
    }

    var isClosed: Bool { state.withLockedValue { $0.closed } }
    var isPaused: Bool { state.withLockedValue { $0.paused } }
}

/// A chat server on virtual time, with in-memory clients.
final class ServerHarness {
    let scheduler = TestScheduler()
    let system: ActorSystem
    let server: ChatServer
    private var nextID: UInt64 = 1

    init(_ adjust: (inout ChatServerConfiguration) -> Void = { _ in }) throws {
        var configuration = ChatServerConfiguration()
        configuration.serverName = "test.server"
        configuration.createdAt = Date(timeIntervalSince1970: 0)
        configuration.operators = ["operuser": "operpassword"]
        configuration.floodControl = false       // the flood-control tests turn it on
        adjust(&configuration)
        system = ActorSystem(name: "chat-test", configuration: .init(scheduler: scheduler, logHandler: nil))
        server = try ChatServer(configuration: configuration, system: system)
    }

    /// Runs everything due now.
    func run() {
        scheduler.advance(by: .nanoseconds(0))
    }

    /// Moves the virtual clock.
    func advance(by duration: Duration) {
        scheduler.advance(by: duration)
    }

    /// A new connection, not registered.
    func connect(host: String = "127.0.0.1") -> FakeConnection {
        let connection = FakeConnection(id: nextID, host: host)
        nextID += 1
        server.attach(connection)
        run()
        return connection
    }

    /// A new registered client; its welcome burst is consumed.
    func client(_ nick: String, user: String = "user") -> FakeConnection {
        let connection = connect()
        connection.type("NICK \(nick)", "USER \(user) 0 * :Real \(nick)")
        run()
        let welcome = connection.take()
        #expect(welcome.contains { $0.contains(" 001 \(nick) ") }, "no welcome for \(nick): \(welcome)")
        return connection
    }

    /// A registered client joined to `channels`; every line so far is consumed on all `others`.
    func client(_ nick: String, in channels: String..., others: [FakeConnection] = []) -> FakeConnection {
        let connection = client(nick)
        for channel in channels {
            connection.type("JOIN \(channel)")
        }
        run()
        _ = connection.take()
        for other in others { _ = other.take() }
        return connection
    }

    func shutdown() async {
        system.beginShutdown()
        run()
        _ = await system.shutdown()
    }
}

extension [String] {
    /// The numeric or command of each line (the word after the prefix).
    var commands: [String] {
        map { line in
            let words = line.split(separator: " ")
            return words.first?.hasPrefix(":") == true && words.count > 1 ? String(words[1]) : String(words.first ?? "")
        }
    }

    /// True when some line has this numeric or command.
    func has(_ command: String) -> Bool { commands.contains(command) }
}
