#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
import Testing
@testable import MailboxNet
import NetTestSupport

/// Whether this machine can listen on the IPv6 loopback.
private let hasIPv6Loopback: Bool = {
    guard let listener = try? TCPListener(host: "::1", port: 0) else { return false }
    listener.close()
    return true
}()

private func integerOption(_ fd: Int32, _ level: Int32, _ name: Int32) -> Int32 {
    var value: Int32 = -1
    var length = socklen_t(MemoryLayout<Int32>.size)
    _ = getsockopt(fd, level, name, &value, &length)
    return value
}

private func expectConfigured(_ connection: TCPConnection, sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(integerOption(connection.fd, Int32(IPPROTO_TCP), Int32(TCP_NODELAY)) != 0, "TCP_NODELAY", sourceLocation: sourceLocation)
    #expect(fcntl(connection.fd, F_GETFD) & FD_CLOEXEC != 0, "close-on-exec", sourceLocation: sourceLocation)
    #expect(fcntl(connection.fd, F_GETFL) & O_NONBLOCK != 0, "non-blocking", sourceLocation: sourceLocation)
}

/// A listener that never accepts, with the smallest backlog: once its queue is full, further
/// connects hang (Linux drops their SYNs), which is how a time-out is made on loopback.
private func connectUntilOneHangs(
    port: UInt16, timeout: Duration, holding held: inout [TCPConnection]
) async -> SocketError? {
    for _ in 0..<16 {
        do {
            held.append(try await TCPConnection.connect(to: "127.0.0.1", port: port, timeout: timeout))
        } catch {
            return error
        }
    }
    return nil
}

@Suite("Net: client connect")
struct TCPConnectionConnectTests {
    @Test func asyncConnect_toIPv4Loopback_connectsAndConfiguresBothEnds() async throws {
        let server = try LoopbackServer()
        let client = try await TCPConnection.connect(to: "127.0.0.1", port: server.port)
        let serverSide = try #require(await offPool { server.accepted.wait(for: 0) })
        #expect(client.peer == SocketAddress(host: "127.0.0.1", port: server.port))
        #expect(serverSide.peer == client.local)
        expectConfigured(client)
        expectConfigured(serverSide)

        let probe = ConnectionProbe()
        probe.start(serverSide)
        ConnectionProbe().start(client)
        client.send(utf8("hello\n"))
        #expect(await offPool { probe.waitForBytes(6) })
    }

    @Test(.enabled(if: hasIPv6Loopback, "this machine has no ::1 (IPv6 loopback): nothing to test"))
    func asyncConnect_toIPv6Loopback_connectsAndConfiguresBothEnds() async throws {
        let listener = try TCPListener(host: "::1", port: 0)
        defer { listener.close() }
        let accepted = WaitableList<TCPConnection>()
        listener.startAccepting { if case .success(let connection) = $0 { accepted.append(connection) } }
        let client = try await TCPConnection.connect(to: "::1", port: listener.localAddress.port)
        let serverSide = try #require(await offPool { accepted.wait(for: 0) })
        #expect(client.peer.description == "[::1]:\(listener.localAddress.port)")
        #expect(serverSide.peer == client.local)
        expectConfigured(client)
        expectConfigured(serverSide)
        // And the blocking connect too.
        let blocking = try TCPConnection.connect(host: "::1", port: listener.localAddress.port)
        expectConfigured(blocking)
    }

    @Test func asyncConnect_toAClosedPort_throwsConnectionRefused() async throws {
        let listener = try TCPListener(host: "127.0.0.1", port: 0)
        let port = listener.localAddress.port
        listener.close()
        await #expect(throws: SocketError(operation: "connect", errno: ECONNREFUSED)) {
            _ = try await TCPConnection.connect(to: "127.0.0.1", port: port)
        }
    }

    @Test func asyncConnect_toAFullBacklog_timesOutAfterItsTimeout() async throws {
        let listener = try TCPListener(host: "127.0.0.1", port: 0, backlog: 0)
        defer { listener.close() }
        var held: [TCPConnection] = []
        let started = ContinuousClock.now
        let error = await connectUntilOneHangs(port: listener.localAddress.port, timeout: .milliseconds(200), holding: &held)
        #expect(error == SocketError(operation: "connect", errno: ETIMEDOUT))
        #expect(started.duration(to: .now) >= .milliseconds(200))
        // Only a hang detector: a loaded machine (ThreadSanitizer beside a compiler) is slow.
        #expect(started.duration(to: .now) < .seconds(60))
    }

    /// Sixteen connects waiting at once hold no thread: all sixteen are under way (each says
    /// so just before it connects) while a probe task on the same two-thread cooperative pool
    /// still runs, and only then are they cancelled. Blocking waits would let at most two start
    /// before the 60 s time-out: the first result would then be a connect error, not the probe.
    @Test func asyncConnects_waitWithoutHoldingThreads() async throws {
        let listener = try TCPListener(host: "127.0.0.1", port: 0, backlog: 0)
        defer { listener.close() }
        var held: [TCPConnection] = []
        _ = await connectUntilOneHangs(port: listener.localAddress.port, timeout: .milliseconds(100), holding: &held)
        let port = listener.localAddress.port
        let (started, starting) = AsyncStream<Void>.makeStream()
        enum Outcome: Sendable, Equatable { case probe, connect(SocketError?) }
        let outcomes = await withTaskGroup(of: Outcome.self) { group in
            for _ in 0..<16 {
                group.addTask {
                    starting.yield()
                    do throws(SocketError) {
                        _ = try await TCPConnection.connect(to: "127.0.0.1", port: port, timeout: .seconds(60))
                        return .connect(nil)
                    } catch {
                        return .connect(error)
                    }
                }
            }
            group.addTask {
                var count = 0
                for await _ in started {
                    count += 1
                    if count == 16 { break }
                }
                return .probe
            }
            var outcomes: [Outcome] = []
            while let outcome = await group.next() {
                outcomes.append(outcome)
                if outcome == .probe { group.cancelAll() }
            }
            return outcomes
        }
        #expect(outcomes.first == .probe, "a connect finished before all sixteen were waiting: \(outcomes.prefix(3))")
        #expect(outcomes.count == 17)
        #expect(outcomes.dropFirst().allSatisfy { $0 == .connect(SocketError(operation: "connect", errno: ECANCELED)) })
    }

    @Test func asyncConnect_cancelled_throwsECANCELEDPromptly() async throws {
        let listener = try TCPListener(host: "127.0.0.1", port: 0, backlog: 0)
        defer { listener.close() }
        var held: [TCPConnection] = []
        _ = await connectUntilOneHangs(port: listener.localAddress.port, timeout: .milliseconds(100), holding: &held)
        let port = listener.localAddress.port
        let task = Task { try await TCPConnection.connect(to: "127.0.0.1", port: port, timeout: .seconds(30)) }
        try await Task.sleep(for: .milliseconds(50))  // not for correctness: lets the connect begin
        let started = ContinuousClock.now
        task.cancel()
        await #expect(throws: SocketError(operation: "connect", errno: ECANCELED)) { _ = try await task.value }
        #expect(started.duration(to: .now) < .seconds(5))
    }

    @Test func asyncConnect_toANameThatDoesNotResolve_throwsAGetaddrinfoError() async throws {
        do {
            _ = try await TCPConnection.connect(to: "no-such-host.invalid", port: 80, timeout: .seconds(10))
            Issue.record("connected to no-such-host.invalid")
        } catch {
            #expect(error.operation == "getaddrinfo")
            #expect(error.description.hasPrefix("getaddrinfo failed:"))
        }
    }

    /// A multicast address: the kernel refuses a TCP connect to it locally (no packet leaves).
    @Test func asyncConnect_toAnAddressWithoutARoute_throwsNetworkUnreachable() async throws {
        await #expect(throws: SocketError(operation: "connect", errno: ENETUNREACH)) {
            _ = try await TCPConnection.connect(to: "224.0.0.1", port: 80)
        }
    }
}

@Suite("Net: half-close and reset")
struct TCPConnectionHalfCloseTests {
    @Test func peerShutsDownItsWriteSide_allBytesThenPeerClosed() throws {
        let server = try LoopbackServer()
        let (client, serverSide) = try server.connectPair()
        let probe = ConnectionProbe()
        probe.start(serverSide)
        let payload = block(3, count: 100_000)
        let written = payload.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let count = _Posix.send(client.fd, UnsafeRawBufferPointer(rebasing: bytes[offset...]))
                if count > 0 { offset += count } else { var p = pollfd(fd: client.fd, events: Int16(POLLOUT), revents: 0); _ = poll(&p, 1, 1000) }
            }
            return offset
        }
        shutdown(client.fd, Int32(SHUT_WR))
        #expect(probe.waitForClose() == .peerClosed)
        #expect(probe.bytes.count == written)
        #expect(probe.bytes == payload)
        #expect(!probe.readAfterClose)
    }

    /// A reset (SO_LINGER 0) shows as `.failed(read ECONNRESET)`, or as `.peerClosed` when the
    /// kernel reports the end before the reset is read.
    @Test func peerResets_closesWithResetOrPeerClosed() throws {
        let server = try LoopbackServer()
        let (client, serverSide) = try server.connectPair()
        let probe = ConnectionProbe()
        probe.start(serverSide)
        client.send(utf8("half a line"))
        client.abort()
        let reason = probe.waitForClose()
        #expect(reason == .failed(SocketError(operation: "read", errno: ECONNRESET)) || reason == .peerClosed)
    }

    /// Not reading, the server learns of the reset only by writing: no SIGPIPE (the process
    /// would die), the connection fails with EPIPE/ECONNRESET and later sends are `.closed`.
    @Test func sendAfterThePeerReset_failsWithoutSIGPIPE() throws {
        let server = try LoopbackServer()
        let (client, serverSide) = try server.connectPair()
        let probe = ConnectionProbe()
        serverSide.pauseReading()
        probe.start(serverSide)
        client.abort()
        var results: [TCPConnection.SendResult] = []
        for _ in 0..<100 where results.last != .closed {
            results.append(serverSide.send(block(1, count: 1000)))
            _ = probe.waitForClose(timeout: 0.01)
        }
        #expect(results.last == .closed)
        let reason = try #require(probe.waitForClose())
        let resets: [TCPConnection.CloseReason] = [
            .failed(SocketError(operation: "write", errno: EPIPE)),
            .failed(SocketError(operation: "write", errno: ECONNRESET)),
        ]
        #expect(resets.contains(reason), "closed with \(reason)")
        #expect(serverSide.send([1]) == .closed)
    }
}
