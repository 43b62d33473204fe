#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
import Testing
@testable import MailboxNet
import NetTestSupport

@Suite("Net: TCPConnection closing")
struct TCPConnectionCloseTests {
    @Test func peerEOF_reportsPeerClosedAfterTheLastRead() throws {
        let server = try LoopbackServer()
        let (client, serverSide) = try server.connectPair()
        let probe = ConnectionProbe()
        probe.start(serverSide)
        client.send(utf8("QUIT :bye\r\n"))
        client.close()
        #expect(probe.waitForClose() == .peerClosed)
        #expect(probe.bytes == utf8("QUIT :bye\r\n"))
        #expect(!probe.readAfterClose)
        #expect(serverSide.send(utf8("too late\r\n")) == .closed)
    }

    /// Linux reports a reset peer as a failed read with `ECONNRESET` (not as `.peerClosed`).
    @Test func peerReset_reportsFailedReadWithConnectionReset() throws {
        let server = try LoopbackServer()
        let (client, serverSide) = try server.connectPair()
        let probe = ConnectionProbe()
        probe.start(serverSide)
        client.abort()
        let reason = probe.waitForClose()
        #if os(Linux)
        #expect(reason == .failed(SocketError(operation: "read", errno: ECONNRESET)))
        #else
        #expect(reason == .failed(SocketError(operation: "read", errno: ECONNRESET)) || reason == .peerClosed)
        #endif
    }

    @Test func sendingToAResetPeer_failsTheConnectionWithoutSIGPIPE() throws {
        let server = try LoopbackServer()
        let (client, serverSide) = try server.connectPair()
        let probe = ConnectionProbe()
        serverSide.pauseReading()  // learn of the reset by writing, not by reading
        probe.start(serverSide)
        client.abort()
        // The send is queued; the flush it schedules writes to the reset socket and fails.
        #expect(serverSide.send([UInt8](repeating: 65, count: 1024)) == .queued)
        let reason = probe.waitForClose()
        #expect(serverSide.send([UInt8](repeating: 65, count: 1024)) == .closed)
        guard case .failed(let error) = reason else {
            Issue.record("expected a failed write, got \(String(describing: reason))")
            return
        }
        #expect(error.operation == "write")
        #expect(error.errno == EPIPE || error.errno == ECONNRESET)
    }

    @Test func closeWithFinal_deliversQueuedThenFinalBytesThenEOF() throws {
        let server = try LoopbackServer()
        let (client, serverSide) = try server.connectPair()
        let probe = ConnectionProbe()
        probe.start(serverSide)
        serverSide.send(utf8(":server NOTICE nick :one\r\n"))
        serverSide.close(final: utf8("ERROR :Closing Link\r\n"))
        serverSide.close(final: utf8("ignored\r\n"))  // idempotent
        #expect(serverSide.send(utf8("after close\r\n")) == .closed)

        let (received, end) = readRaw(client.fd)
        #expect(received == utf8(":server NOTICE nick :one\r\nERROR :Closing Link\r\n"))
        #expect(end == .eof)
        #expect(probe.waitForClose() == .closedLocally)
        #expect(probe.closeReasons.count == 1)
    }

    @Test func closeWithTimeout_whenThePeerNeverReads_resetsAtTheDeadline() throws {
        let server = try LoopbackServer()
        let (client, serverSide) = try server.connectPair()
        setBufferSize(client.fd, SO_RCVBUF, 4096)
        setBufferSize(serverSide.fd, SO_SNDBUF, 4096)
        let probe = ConnectionProbe()
        probe.start(serverSide)
        // Queue far more than the kernel's small buffers can take, so that bytes stay queued.
        let chunk = [UInt8](repeating: 66, count: 16 * 1024)
        for _ in 0..<100 {
            #expect(serverSide.send(chunk) == .queued)
        }
        #expect(serverSide.queuedByteCount > 0)

        serverSide.close(final: utf8("ERROR :bye\r\n"), timeout: .milliseconds(100))
        #expect(probe.waitForClose() == .closedLocally)
        let (_, end) = readRaw(client.fd)
        #expect(end == .error(ECONNRESET))
    }

    @Test func sendQueueExceeded_whenThePeerDoesNotRead_sendsFarewellAndCloses() throws {
        let server = try LoopbackServer()
        let (client, serverSide) = try server.connectPair()
        setBufferSize(client.fd, SO_RCVBUF, 64 * 1024)
        setBufferSize(serverSide.fd, SO_SNDBUF, 4096)
        let probe = ConnectionProbe()
        let farewell = utf8("ERROR :Closing Link (SendQ exceeded)\r\n")
        probe.start(serverSide, sendQueueLimit: 64 * 1024, farewell: farewell)

        let chunk = [UInt8](repeating: 67, count: 1024)
        var result = TCPConnection.SendResult.queued
        var accepted = 0
        for _ in 0..<100_000 where result == .queued {
            result = serverSide.send(chunk)
            if result == .queued { accepted += 1 }
        }
        #expect(result == .sendQueueExceeded)
        #expect(serverSide.send(chunk) == .closed)
        serverSide.close()  // already closing: no second report, reason kept

        // The peer reads at last: every accepted chunk, then the farewell, then EOF.
        let (received, end) = readRaw(client.fd)
        #expect(end == .eof)
        #expect(received.count == accepted * chunk.count + farewell.count)
        #expect(Array(received.suffix(farewell.count)) == farewell)
        #expect(probe.waitForClose() == .sendQueueExceeded)
        #expect(probe.closeReasons == [.sendQueueExceeded])
    }

    @Test func sendLargerThanTheLimit_overflowsAtOnce() throws {
        let server = try LoopbackServer()
        let (client, serverSide) = try server.connectPair()
        let probe = ConnectionProbe()
        probe.start(serverSide, sendQueueLimit: 100, farewell: utf8("bye\r\n"))
        #expect(serverSide.send([UInt8](repeating: 1, count: 101)) == .sendQueueExceeded)
        #expect(probe.waitForClose() == .sendQueueExceeded)
        let (received, end) = readRaw(client.fd)
        #expect(received == utf8("bye\r\n"))
        #expect(end == .eof)
    }

    @Test func racingCloseCalls_reportOnCloseExactlyOnce() throws {
        let server = try LoopbackServer()
        for round in 0..<30 {
            let (client, serverSide) = try server.connectPair(index: round)
            let probe = ConnectionProbe()
            probe.start(serverSide)
            serverSide.send(utf8("hello\r\n"))
            DispatchQueue.concurrentPerform(iterations: 8) { index in
                switch index {
                case 0: client.abort()
                case 1: serverSide.abort()
                case 2: serverSide.pauseReading()
                case 3: serverSide.send(utf8("racing\r\n"))
                default: serverSide.close(final: utf8("bye \(index)\r\n"))
                }
            }
            #expect(probe.waitForClose() != nil)
            // Every close call has returned; whatever they enqueued has run after these.
            serverSide.queue.sync {}
            serverSide.queue.sync {}
            #expect(probe.closeReasons.count == 1, "round \(round): \(probe.closeReasons)")
            #expect(serverSide.send(utf8("x")) == .closed)
        }
    }

    @Test func startAfterClose_reportsTheCloseOnce() throws {
        let server = try LoopbackServer()
        let (client, serverSide) = try server.connectPair()
        serverSide.close(final: utf8("ERROR :go away\r\n"))
        let probe = ConnectionProbe()
        probe.start(serverSide)
        #expect(probe.waitForClose() == .closedLocally)
        let (received, end) = readRaw(client.fd)
        #expect(received == utf8("ERROR :go away\r\n"))
        #expect(end == .eof)
        serverSide.queue.sync {}
        #expect(probe.closeReasons == [.closedLocally])
        #expect(probe.readCount == 0)
    }

    @Test func closedConnection_letsGoOfItsSourcesCallbacksAndSocket() throws {
        let server = try LoopbackServer()
        let (client, serverSide) = try server.connectPair()
        let probe = ConnectionProbe()
        probe.start(serverSide)
        // Make it create a write source and a flush timer too.
        setBufferSize(serverSide.fd, SO_SNDBUF, 4096)
        let chunk = [UInt8](repeating: 68, count: 16 * 1024)
        for _ in 0..<10_000 where serverSide.queuedByteCount == 0 { serverSide.send(chunk) }
        serverSide.close(timeout: .milliseconds(50))
        #expect(probe.waitForClose() == .closedLocally)
        // onClose runs once the sources are cancelled: nothing holds the connection any more
        // (the sources' handlers are what kept it alive while open).
        let released = serverSide.state.withLockedValue { state in
            state.readSource == nil && state.writeSource == nil && state.flushTimer == nil
                && state.onClose == nil && state.descriptorClosed && state.pending.isEmpty
        }
        #expect(released)
        _ = client
    }
}
