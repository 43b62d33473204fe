#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
import Testing
@testable import MailboxNet
import NetTestSupport

@Suite("Net: TCPConnection reading and sending")
struct TCPConnectionTests {
    @Test func echo_roundTripsALine() throws {
        let server = try LoopbackServer()
        let (client, serverSide) = try server.connectPair()
        let serverProbe = ConnectionProbe()
        serverProbe.start(serverSide, echo: true)
        let clientProbe = ConnectionProbe()
        clientProbe.start(client)

        #expect(client.send(utf8("PING :hello\r\n")) == .queued)
        #expect(clientProbe.waitForBytes(13))
        #expect(clientProbe.bytes == utf8("PING :hello\r\n"))
        #expect(serverProbe.bytes == utf8("PING :hello\r\n"))
        client.close()
        #expect(serverProbe.waitForClose() == .peerClosed)
        #expect(clientProbe.waitForClose() == .closedLocally)
    }

    @Test func echo_ofAMebibyte_arrivesWholeAndInOrder() throws {
        let server = try LoopbackServer()
        let (client, serverSide) = try server.connectPair()
        ConnectionProbe().start(serverSide, echo: true)
        let clientProbe = ConnectionProbe()
        clientProbe.start(client)

        var generator = SeededGenerator(seed: 42)
        let payload = (0..<(1 << 17)).flatMap { _ in withUnsafeBytes(of: generator.next()) { Array($0) } }
        for start in stride(from: 0, to: payload.count, by: 64 * 1024) {
            #expect(client.send(Array(payload[start..<min(start + 64 * 1024, payload.count)])) == .queued)
        }
        #expect(clientProbe.waitForBytes(payload.count))
        #expect(clientProbe.bytes == payload)
        // Reads come in chunks of at most the default 16 KiB.
        #expect(clientProbe.readCount >= payload.count / (16 * 1024))
    }

    @Test func readChunkSize_boundsEachRead() throws {
        let server = try LoopbackServer()
        let (client, serverSide) = try server.connectPair()
        let probe = ConnectionProbe()
        let sizes = WaitableList<Int>()
        serverSide.start(
            sendQueueLimit: 1 << 20, readChunkSize: 7,
            onRead: { chunk in sizes.append(chunk.count); probe.record(chunk) },
            onClose: { probe.recordClose($0) })
        client.send(utf8("0123456789abcdefghij"))
        #expect(probe.waitForBytes(20))
        #expect(probe.bytes == utf8("0123456789abcdefghij"))
        #expect(sizes.all.allSatisfy { $0 <= 7 })
    }

    @Test func twoHundredConcurrentConnections_eachEchoItsOwnBytes() throws {
        ProcessLimits.raiseOpenFileLimit()
        let server = try LoopbackServer()
        let count = 200
        var clients: [(TCPConnection, ConnectionProbe)] = []
        for _ in 0..<count {
            let client = try TCPConnection.connect(host: "127.0.0.1", port: server.port)
            let probe = ConnectionProbe()
            probe.start(client)
            clients.append((client, probe))
        }
        for index in 0..<count {
            let serverSide = try #require(server.accepted.wait(for: index))
            ConnectionProbe().start(serverSide, echo: true)
        }
        let senders = clients.map(\.0)
        DispatchQueue.concurrentPerform(iterations: count) { index in
            senders[index].send(utf8("client \(index) says hello\r\n"))
        }
        for (index, (_, probe)) in clients.enumerated() {
            let expected = utf8("client \(index) says hello\r\n")
            #expect(probe.waitForBytes(expected.count))
            #expect(probe.bytes == expected)
        }
        #expect(server.errors.all.isEmpty)
        for (client, probe) in clients {
            client.close()
            #expect(probe.waitForClose() == .closedLocally)
        }
    }

    @Test func manySendsFromOneThread_arriveInCallOrder() throws {
        let server = try LoopbackServer()
        let (client, serverSide) = try server.connectPair()
        let probe = ConnectionProbe()
        probe.start(serverSide)
        var expected: [UInt8] = []
        for index in 0..<20_000 {
            let line = utf8(":server 001 nick :line \(index)\r\n")
            expected += line
            #expect(serverSide.send(line) == .queued)
        }
        serverSide.close()
        let (received, end) = readRaw(client.fd)
        #expect(end == .eof)
        #expect(received == expected)
        #expect(probe.waitForClose() == .closedLocally)
    }

    @Test func concurrentSenders_neverInterleaveBuffersAndKeepEachThreadsOrder() throws {
        var generator = SeededGenerator.fromEnvironment("concurrentSenders")
        let threads = 4
        let perThread = 400
        // Each thread's buffers: "<thread> <seq> " then a random run of its own letter, "\n".
        let plans: [[[UInt8]]] = (0..<threads).map { thread in
            (0..<perThread).map { sequence in
                let letter = UInt8(ascii: "a") + UInt8(thread)
                let filler = Int.random(in: 1...3000, using: &generator)
                return utf8("\(thread) \(sequence) ") + [UInt8](repeating: letter, count: filler) + [10]
            }
        }
        let total = plans.joined().reduce(0) { $0 + $1.count }

        let server = try LoopbackServer()
        let (client, serverSide) = try server.connectPair()
        serverSide.start(sendQueueLimit: 1 << 30, onRead: { _ in }, onClose: { _ in })
        let probe = ConnectionProbe()
        probe.start(client)
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            for buffer in plans[thread] { serverSide.send(buffer) }
        }
        #expect(probe.waitForBytes(total))

        let lines = probe.bytes.split(separator: 10, omittingEmptySubsequences: false).dropLast()
        #expect(lines.count == threads * perThread)
        var nextSequence = [Int](repeating: 0, count: threads)
        for line in lines {
            let fields = line.split(separator: 32, maxSplits: 2)
            guard fields.count == 3,
                  let thread = Int(String(decoding: fields[0], as: UTF8.self)),
                  let sequence = Int(String(decoding: fields[1], as: UTF8.self)),
                  (0..<threads).contains(thread), (0..<perThread).contains(sequence)
            else {
                Issue.record("malformed (interleaved) line: \(String(decoding: line.prefix(40), as: UTF8.self))")
                return
            }
            #expect(sequence == nextSequence[thread], "thread \(thread) out of order")
            nextSequence[thread] = sequence + 1
            #expect(Array(line) == Array(plans[thread][sequence].dropLast()), "line of thread \(thread) mixed")
        }
        #expect(nextSequence == [Int](repeating: perThread, count: threads))
    }

    @Test func pauseReading_leavesBytesInTheKernelUntilResume() throws {
        let server = try LoopbackServer()
        let (client, serverSide) = try server.connectPair()
        let probe = ConnectionProbe()
        serverSide.pauseReading()  // before start: starts paused
        probe.start(serverSide)
        serverSide.pauseReading()  // idempotent

        let message = utf8("PRIVMSG #flood :paused\r\n")
        client.send(message)
        // Wait until the bytes are in the server's receive buffer, not read.
        var descriptor = pollfd(fd: serverSide.fd, events: Int16(POLLIN), revents: 0)
        #expect(poll(&descriptor, 1, Int32(netTestTimeout * 1000)) == 1)
        var available: Int32 = 0
        #expect(ioctl(serverSide.fd, UInt(FIONREAD), &available) == 0)
        #expect(available == Int32(message.count))
        serverSide.queue.sync {}  // any read handler already queued has run by now
        #expect(probe.readCount == 0)

        serverSide.resumeReading()
        serverSide.resumeReading()  // idempotent
        #expect(probe.waitForBytes(message.count))
        #expect(probe.bytes == message)

        // Pausing again stops the next bytes; resuming delivers them.
        serverSide.pauseReading()
        client.send(message)
        descriptor.revents = 0
        #expect(poll(&descriptor, 1, Int32(netTestTimeout * 1000)) == 1)
        serverSide.queue.sync {}
        #expect(probe.bytes.count == message.count)
        serverSide.resumeReading()
        #expect(probe.waitForBytes(2 * message.count))
    }

    @Test func sendingTheSameArrayToManyConnections_deliversItToEach() throws {
        let server = try LoopbackServer()
        let line = utf8(":nick!user@host PRIVMSG #chan :hello everyone\r\n")
        var probes: [ConnectionProbe] = []
        var serverSides: [TCPConnection] = []
        for index in 0..<20 {
            let (client, serverSide) = try server.connectPair(index: index)
            let probe = ConnectionProbe()
            probe.start(client)
            probes.append(probe)
            serverSide.start(sendQueueLimit: 4096, onRead: { _ in }, onClose: { _ in })
            serverSides.append(serverSide)
        }
        for serverSide in serverSides { #expect(serverSide.send(line) == .queued) }
        for probe in probes {
            #expect(probe.waitForBytes(line.count))
            #expect(probe.bytes == line)
        }
    }

    @Test func sendsBeforeStart_areWrittenAtOnce() throws {
        let server = try LoopbackServer()
        let (client, serverSide) = try server.connectPair()
        #expect(serverSide.send(utf8("NOTICE * :early\r\n")) == .queued)
        #expect(serverSide.send([]) == .queued)
        let (received, _) = readRaw(client.fd, maxBytes: 17)
        #expect(received == utf8("NOTICE * :early\r\n"))
        #expect(serverSide.queuedByteCount == 0)
    }
}
