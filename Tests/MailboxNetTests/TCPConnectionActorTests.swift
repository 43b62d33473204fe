#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
import Mailbox
import Testing
@testable import MailboxNet
import NetTestSupport

private enum Inbound: Sendable {
    case bytes([UInt8])
    case closed(TCPConnection.CloseReason)
}

/// Echoes every chunk back on `connection` and records what it handled.
private func echo(on connection: TCPConnection, log: WaitableList<String>) -> Behavior<Inbound> {
    .receiveMessage { message in
        switch message {
        case let .bytes(bytes):
            log.append(String(decoding: bytes, as: UTF8.self))
            connection.send(bytes)
        case let .closed(reason):
            log.append("closed: \(reason)")
        }
        return .same
    }
}

@Suite("Net: connections driven into actors")
struct TCPConnectionActorTests {
    @Test func readsGoToTheActor_repliesGoOut_andTheEndComesLast() async throws {
        let system = ActorSystem(name: "net-actor")
        let server = try LoopbackServer()
        let (client, serverSide) = try server.connectPair()
        let log = WaitableList<String>()
        let ref = try system.spawn(echo(on: serverSide, log: log), name: "echo")
        serverSide.start(
            deliveringTo: ref, sendQueueLimit: 1 << 20,
            map: { .bytes($0) }, onClose: { .closed($0) })
        let probe = ConnectionProbe()
        probe.start(client)
        client.send(utf8("hello\n"))
        #expect(await offPool { probe.waitForBytes(6) })
        #expect(probe.bytes == utf8("hello\n"))
        client.close()
        #expect(await offPool { log.wait(for: 1) } == "closed: peerClosed")
        _ = await system.shutdown()
    }

    /// The actor's bounded back-pressure mailbox is full (the actor is held at a gate): the
    /// connection stops reading, so the client's bytes back up into its own send queue instead
    /// of piling up in memory; once the gate opens, every byte arrives, in order.
    @Test func aFullMailbox_pausesReading_andReadingResumesWhenThereIsRoom() async throws {
        let system = ActorSystem(name: "net-actor-full")
        let server = try LoopbackServer()
        let (client, serverSide) = try server.connectPair()
        // Kernel buffers that cannot swallow the whole 2 MiB (loopback's grow to megabytes).
        setBufferSize(serverSide.fd, SO_RCVBUF, 64 * 1024)
        setBufferSize(client.fd, SO_SNDBUF, 64 * 1024)
        let gate = DispatchSemaphore(value: 0)
        let received = WaitableList<Int>()
        let collected = LockedBytes()
        let behavior = Behavior<Inbound>.receiveMessage { message in
            if case let .bytes(bytes) = message {
                if received.all.isEmpty { gate.wait() }
                collected.append(bytes)
                received.append(bytes.count)
            }
            return .same
        }
        let ref = try system.spawn(
            behavior, name: "slow",
            props: Props(mailbox: .bounded(capacity: 2, overflow: .backpressure), scheduler: QueueScheduler(name: "slow")))
        let delivery = serverSide.startDelivery(
            to: ref, sendQueueLimit: 1 << 20, overflow: .close, farewell: nil, readChunkSize: 1024,
            bufferedReads: 2, onWritable: nil, map: { .bytes($0) }, onClose: { _ in nil })
        let probe = ConnectionProbe()
        probe.start(client, sendQueueLimit: 1 << 30)
        let payload = (0..<64).flatMap { block($0, count: 32 * 1024) }  // 2 MiB
        for start in stride(from: 0, to: payload.count, by: 32 * 1024) {
            client.send(Array(payload[start..<(start + 32 * 1024)]))
        }
        // Reading paused: the kernel buffers fill and the client's own queue keeps the rest.
        #expect(await eventually { delivery.pauses >= 1 })
        #expect(await eventually { client.queuedByteCount > 1024 * 1024 })
        // What waits for the mailbox is at most one read event's chunks plus `bufferedReads`,
        // not the 2 MiB sent.
        #expect(delivery.mostPending <= TCPConnection.readsPerEvent + 2)

        gate.signal()
        #expect(await eventually { collected.count == payload.count })
        #expect(bytesDiffer(collected.bytes, payload) == nil)
        #expect(client.queuedByteCount == 0)
        _ = await system.shutdown()
    }

    @Test func anActorThatTerminated_closesTheConnection() async throws {
        let system = ActorSystem(name: "net-actor-gone")
        let server = try LoopbackServer()
        let (client, serverSide) = try server.connectPair()
        let ref = try system.spawn(Behavior<Inbound>.receiveMessage { _ in .stopped }, name: "once")
        serverSide.start(deliveringTo: ref, sendQueueLimit: 1024, map: { .bytes($0) }, onClose: { _ in nil })
        let probe = ConnectionProbe()
        probe.start(client)
        client.send(utf8("first\n"))
        // The first message stops the actor; a later one cannot be delivered: the server closes.
        #expect(await eventually { ref.tell(.bytes([])) != .enqueued })
        client.send(utf8("second\n"))
        #expect(await offPool { probe.waitForClose() } == .peerClosed)
        _ = await system.shutdown()
    }
}

/// Bytes appended from one thread and read from another (inside `box`'s pthread mutex).
private final class LockedBytes: Sendable {
    private let box = LockedValueBox<[UInt8]>([])
    func append(_ bytes: [UInt8]) { box.withLockedValue { $0 += bytes } }
    var bytes: [UInt8] { box.withLockedValue { $0 } }
    var count: Int { box.withLockedValue { $0.count } }
}
