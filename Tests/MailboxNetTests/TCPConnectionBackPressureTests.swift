#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
import Testing
@testable import MailboxNet
import NetTestSupport

/// A server-side connection in `.backPressure` mode whose client never reads until the test
/// drains it with `readRaw`: small kernel buffers, so the send queue fills after a few blocks.
private struct BackPressuredPair {
    let server: LoopbackServer
    let client: TCPConnection
    let side: TCPConnection
    let probe = ConnectionProbe()

    static let limit = 64 * 1024
    static let blockSize = 16 * 1024

    init(onWritable: (@Sendable () -> Void)? = nil) throws {
        server = try LoopbackServer()
        // Small segments (accepted sockets inherit the listener's TCP_MAXSEG), so that the tiny
        // buffers below still hold several: with loopback's 64 KiB segments a tiny receive
        // window only reopens on the persist timer, and draining would take seconds.
        var segment: Int32 = 1024
        setsockopt(server.listener.fd, Int32(IPPROTO_TCP), TCP_MAXSEG, &segment, socklen_t(MemoryLayout<Int32>.size))
        (client, side) = try server.connectPair()
        // Tiny kernel buffers, so the kernel cannot absorb the queue behind the test's back.
        setBufferSize(client.fd, SO_RCVBUF, 4096)
        setBufferSize(side.fd, SO_SNDBUF, 4096)
        side.start(
            sendQueueLimit: Self.limit, overflow: .backPressure, onWritable: onWritable,
            onRead: { [probe] in probe.record($0) }, onClose: { [probe] in probe.recordClose($0) })
    }

    /// Sends blocks 0, 1, ... until one is refused with `.full`; returns the accepted ones.
    func fill() -> [[UInt8]] {
        var accepted: [[UInt8]] = []
        while true {
            let next = block(accepted.count, count: Self.blockSize)
            switch side.send(next) {
            case .queued: accepted.append(next)
            case .full: return accepted
            case let other: Issue.record("send returned \(other)"); return accepted
            }
            if accepted.count > 10_000 { Issue.record("never full"); return accepted }
        }
    }

    /// Reads `count` bytes at the client, off the cooperative pool.
    func drain(_ count: Int) async -> [UInt8] {
        let fd = client.fd
        return await offPool { readRaw(fd, maxBytes: count).bytes }
    }
}

@Suite("Net: send back-pressure")
struct TCPConnectionBackPressureTests {
    @Test func sendOverTheLimit_returnsFull_keepsTheConnectionOpen_andLosesNothingAccepted() async throws {
        let pair = try BackPressuredPair()
        let accepted = pair.fill()
        #expect(!accepted.isEmpty)
        #expect(pair.side.queuedByteCount <= BackPressuredPair.limit)
        // Refused bytes stay with the caller: again `.full` (a limit-sized block fits only an
        // empty queue), nothing queued, still open.
        #expect(pair.side.send(block(999, count: BackPressuredPair.limit)) == .full)
        #expect(pair.probe.closeReasons.isEmpty)

        let expected = accepted.flatMap { $0 }
        let received = await pair.drain(expected.count)
        #expect(bytesDiffer(received, expected) == nil)
        // Room again: the connection was never closed.
        #expect(await eventually { pair.side.queuedByteCount == 0 })
        #expect(pair.side.send(utf8("after\n")) == .queued)
        #expect(await pair.drain(6) == utf8("after\n"))
        #expect(pair.probe.closeReasons.isEmpty)
    }

    @Test func onWritable_comesOnceRoomIsBack_andMayCallStraightBackIn() async throws {
        let calls = WaitableList<TCPConnection.SendResult>()
        let connection = WaitableList<TCPConnection>()
        let pair = try BackPressuredPair(onWritable: {
            // Re-entrant on the connection's own queue: must not deadlock.
            guard let side = connection.all.first else { return }
            side.pauseReading()
            side.resumeReading()
            calls.append(side.send(utf8("resumed\n")))
        })
        connection.append(pair.side)
        let accepted = pair.fill().flatMap { $0 }
        #expect(calls.all.isEmpty)

        let received = await pair.drain(accepted.count + 8)
        #expect(bytesDiffer(received, accepted + utf8("resumed\n")) == nil)
        #expect(calls.wait(for: 0) == .queued)
        #expect(calls.all.count == 1)  // once per `.full`
    }

    @Test func sendWhenReady_waitersAreServedInFIFOOrder_andSyncSendsCannotOvertake() async throws {
        let pair = try BackPressuredPair()
        let accepted = pair.fill().flatMap { $0 }
        // The first waits for an empty queue (it is as large as the limit), the rest queue behind.
        let waiterBlocks = [block(100, count: BackPressuredPair.limit)]
            + (101..<105).map { block($0, count: BackPressuredPair.blockSize) }
        var tasks: [Task<Void, any Error>] = []
        for (index, bytes) in waiterBlocks.enumerated() {
            let side = pair.side
            tasks.append(Task { try await side.sendWhenReady(bytes) })
            #expect(await eventually { side.waitingSenderCount == index + 1 })
        }
        #expect(pair.side.send(utf8("x")) == .full)

        let expected = accepted + waiterBlocks.flatMap { $0 }
        let received = await pair.drain(expected.count)
        #expect(bytesDiffer(received, expected) == nil)
        for task in tasks { try await task.value }
        #expect(pair.side.waitingSenderCount == 0)
    }

    @Test func sendWhenReady_throwsClosedError_whenTheConnectionClosesWhileWaiting() async throws {
        let pair = try BackPressuredPair()
        _ = pair.fill()
        let side = pair.side
        // As large as the whole limit: it waits until the queue is empty, which it cannot be while
        // the client does not read.
        let waiting = Task { try await side.sendWhenReady(block(7, count: BackPressuredPair.limit)) }
        #expect(await eventually { side.waitingSenderCount == 1 })
        side.abort()
        await #expect(throws: TCPConnection.ClosedError(reason: .closedLocally)) { try await waiting.value }
        #expect(pair.probe.waitForClose() == .closedLocally)
        // And after the close, at once.
        await #expect(throws: TCPConnection.ClosedError(reason: .closedLocally)) { try await side.sendWhenReady([1]) }
    }

    @Test func sendWhenReady_throwsClosedErrorWithTheReason_whenThePeerResetsWhileWaiting() async throws {
        let pair = try BackPressuredPair()
        _ = pair.fill()
        let side = pair.side
        let waiting = Task { try await side.sendWhenReady(block(8, count: BackPressuredPair.limit)) }
        #expect(await eventually { side.waitingSenderCount == 1 })
        pair.client.abort()  // SO_LINGER 0: the server side reads ECONNRESET (or writes EPIPE)
        do {
            try await waiting.value
            Issue.record("the waiter was served after the reset")
        } catch let error as TCPConnection.ClosedError {
            #expect(error.reason == pair.probe.waitForClose())
            #expect(error.reason != .closedLocally)  // the peer's doing: .failed or .peerClosed
        }
    }

    @Test func sendWhenReady_cancelled_removesTheWaiterAndThrowsCancellationError() async throws {
        let pair = try BackPressuredPair()
        let accepted = pair.fill().flatMap { $0 }
        let side = pair.side
        let cancelled = Task { try await side.sendWhenReady(block(50, count: BackPressuredPair.limit)) }
        #expect(await eventually { side.waitingSenderCount == 1 })
        cancelled.cancel()
        await #expect(throws: CancellationError.self) { try await cancelled.value }
        #expect(side.waitingSenderCount == 0)

        // The cancelled bytes never go out; the next send does, right after what was accepted.
        let received = await pair.drain(accepted.count)
        #expect(bytesDiffer(received, accepted) == nil)
        #expect(await eventually { side.queuedByteCount == 0 })
        try await side.sendWhenReady(utf8("next\n"))
        #expect(await pair.drain(5) == utf8("next\n"))
    }

    @Test func sendWhenReady_inACancelledTask_throwsWithoutQueueing() async throws {
        let pair = try BackPressuredPair()
        _ = pair.fill()
        let side = pair.side
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await side.sendWhenReady([1, 2, 3])
        }
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(side.waitingSenderCount == 0)
    }

    @Test func closeMode_isStillTheDefault_sendWhenReadyThrowsSendQueueExceeded() async throws {
        let server = try LoopbackServer()
        let (client, side) = try server.connectPair()
        setBufferSize(client.fd, SO_RCVBUF, 4096)
        setBufferSize(side.fd, SO_SNDBUF, 4096)
        let probe = ConnectionProbe()
        probe.start(side, sendQueueLimit: 16 * 1024)
        var outcome: (any Error)?
        for index in 0..<1000 {
            do {
                try await side.sendWhenReady(block(index, count: 4096))
            } catch {
                outcome = error
                break
            }
        }
        #expect(outcome as? TCPConnection.ClosedError == TCPConnection.ClosedError(reason: .sendQueueExceeded))
        #expect(probe.waitForClose() == .sendQueueExceeded)
    }

    @Test func onClose_mayCallBackIntoTheConnection() async throws {
        let server = try LoopbackServer()
        let (client, side) = try server.connectPair()
        let results = WaitableList<TCPConnection.SendResult>()
        side.start(
            sendQueueLimit: 1024, overflow: .backPressure, onRead: { _ in },
            onClose: { [side] _ in
                side.pauseReading()
                side.close()
                results.append(side.send([1]))
            })
        client.close()
        #expect(results.wait(for: 0) == .closed)
    }
}
