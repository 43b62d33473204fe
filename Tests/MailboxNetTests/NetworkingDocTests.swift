#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
import Mailbox
import MailboxNet
import NetTestSupport
import Testing

// The examples of docs/Networking.md, verbatim between "doc" comments, run as tests. Keep them
// in sync.

// doc begins: session
enum Session: Sendable {
    case received([UInt8])
    case closed(TCPConnection.CloseReason)
}
// doc ends

// doc begins: reconnect
/// Connects, retrying with capped exponential back-off, until it succeeds or the task is
/// cancelled.
func connectWithRetry(host: String, port: UInt16) async throws -> TCPConnection {
    var delay = Duration.milliseconds(100)
    while true {
        do throws(SocketError) {
            return try await TCPConnection.connect(to: host, port: port, timeout: .seconds(2))
        } catch where error.errno == ECANCELED {
            throw CancellationError()
        } catch {
            try await Task.sleep(for: delay * Double.random(in: 0.8...1.2))
            delay = min(delay * 2, .seconds(5))
        }
    }
}
// doc ends

@Suite("Net: docs/Networking.md examples")
struct NetworkingDocTests {
    @Test func accepting_echoes() async throws {
        // doc begins
        let listener = try TCPListener(host: "127.0.0.1", port: 0)   // port 0: the kernel picks one
        listener.startAccepting { result in
            guard case .success(let connection) = result else { return }   // errors: see the table
            connection.start(
                sendQueueLimit: 256 * 1024,
                onRead: { [weak connection] bytes in connection?.send(bytes) },   // echo
                onClose: { reason in print("closed: \(reason)") })
        }
        // doc ends
        defer { listener.close() }
        let client = try TCPConnection.connect(host: "127.0.0.1", port: listener.localAddress.port)
        let probe = ConnectionProbe()
        probe.start(client)
        client.send(utf8("echo me\n"))
        #expect(await offPool { probe.waitForBytes(8) })
        #expect(probe.bytes == utf8("echo me\n"))
    }

    @Test func connecting() async throws {
        let server = try LoopbackServer()
        let port = server.port
        // doc begins
        let connection = try await TCPConnection.connect(to: "127.0.0.1", port: port, timeout: .seconds(2))
        connection.start(sendQueueLimit: 1 << 20, onRead: { bytes in print(bytes.count) }, onClose: { _ in })
        connection.send(Array("PING\r\n".utf8))
        // doc ends
        let serverSide = try #require(await offPool { server.accepted.wait(for: 0) })
        let probe = ConnectionProbe()
        probe.start(serverSide)
        #expect(await offPool { probe.waitForBytes(6) })
        #expect(probe.bytes == utf8("PING\r\n"))
    }

    @Test func producerWaitsForRoom() async throws {
        let server = try LoopbackServer()
        let (client, connection) = try server.connectPair()
        let probe = ConnectionProbe()
        probe.start(client)
        connection.start(sendQueueLimit: 64 * 1024, overflow: .backPressure, onRead: { _ in }, onClose: { _ in })
        let frames = (0..<64).map { block($0, count: 16 * 1024) }   // 1 MiB through a 64 KiB queue
        // doc begins
        // A producer: each frame waits for room, in order; memory stays within the limit.
        for frame in frames {
            try await connection.sendWhenReady(frame)
        }
        // doc ends
        #expect(await offPool { probe.waitForBytes(64 * 16 * 1024) })
        #expect(bytesDiffer(probe.bytes, frames.flatMap { $0 }) == nil)
    }

    @Test func synchronousSendKeepsWhatWasRefused() throws {
        let server = try LoopbackServer()
        let (client, connection) = try server.connectPair()
        setBufferSizes(client, receive: 4096)
        setBufferSizes(connection, send: 4096)
        connection.start(sendQueueLimit: 16 * 1024, overflow: .backPressure, onRead: { _ in }, onClose: { _ in })
        var backlog: [[UInt8]] = []
        var reconnectNeeded = false
        for index in 0..<64 {
            let frame = block(index, count: 4096)
            // doc begins
            // Synchronous code checks the result and keeps what was refused.
            switch connection.send(frame) {
            case .queued: break
            case .full: backlog.append(frame)   // send it again after onWritable
            case .sendQueueExceeded, .closed: reconnectNeeded = true
            }
            // doc ends
        }
        #expect(!backlog.isEmpty)
        #expect(!reconnectNeeded)
    }

    @Test func relayResumesItsInputWhenTheOutputHasRoom() async throws {
        let server = try LoopbackServer()
        let (outputPeer, output) = try server.connectPair(index: 0)
        let (inputPeer, input) = try server.connectPair(index: 1)
        setBufferSizes(outputPeer, receive: 4096)
        setBufferSizes(output, send: 4096)
        // doc begins
        // A relay: stop reading the input while the output is full, resume when it has room.
        output.start(
            sendQueueLimit: 64 * 1024, overflow: .backPressure,
            onWritable: { input.resumeReading() },
            onRead: { _ in }, onClose: { _ in input.close() })
        // doc ends
        let inputProbe = ConnectionProbe()
        input.pauseReading()  // as the relay does on `.full`
        inputProbe.start(input)
        inputPeer.send(utf8("more input"))
        var frames = 0
        while output.send(block(frames, count: 16 * 1024)) == .queued { frames += 1 }
        #expect(inputProbe.bytes.isEmpty)
        // The output's peer reads: room comes back, onWritable resumes the input.
        ConnectionProbe().start(outputPeer)
        #expect(await offPool { inputProbe.waitForBytes(10) })
        #expect(inputProbe.bytes == utf8("more input"))
    }

    @Test func drivenIntoAnActor() async throws {
        let system = ActorSystem(name: "networking-doc")
        let listener = try TCPListener(host: "127.0.0.1", port: 0)
        defer { listener.close() }
        // doc begins
        listener.startAccepting { result in
            guard case .success(let connection) = result else { return }
            let echo = Behavior<Session>.receiveMessage { message in
                if case .received(let bytes) = message { connection.send(bytes) }
                return .same
            }
            guard let session = try? system.spawnAnonymous(
                echo, props: Props(mailbox: .bounded(capacity: 64, overflow: .backpressure)))
            else { return connection.abort() }
            connection.start(
                deliveringTo: session, sendQueueLimit: 256 * 1024,
                map: { .received($0) }, onClose: { .closed($0) })
        }
        // doc ends
        let client = try await TCPConnection.connect(to: "127.0.0.1", port: listener.localAddress.port)
        let probe = ConnectionProbe()
        probe.start(client)
        client.send(utf8("via an actor\n"))
        #expect(await offPool { probe.waitForBytes(13) })
        #expect(probe.bytes == utf8("via an actor\n"))
        client.close()
        _ = await system.shutdown()
    }

    @Test func reconnectingClient_connectsOnceTheServerIsUp() async throws {
        // Find a free port, then listen on it only after the first attempts failed.
        let probeListener = try TCPListener(host: "127.0.0.1", port: 0)
        let port = probeListener.localAddress.port
        probeListener.close()
        let connecting = Task { try await connectWithRetry(host: "127.0.0.1", port: port) }
        try await Task.sleep(for: .milliseconds(150))  // not for correctness: lets attempts fail first
        let listener = try TCPListener(host: "127.0.0.1", port: port)
        defer { listener.close() }
        listener.startAccepting { _ in }
        let connection = try await connecting.value
        #expect(connection.peer.port == port)

        let cancelled = Task { try await connectWithRetry(host: "127.0.0.1", port: 1) }
        cancelled.cancel()
        await #expect(throws: CancellationError.self) { _ = try await cancelled.value }
    }
}
