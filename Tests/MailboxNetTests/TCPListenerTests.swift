#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
import Testing
@testable import MailboxNet
import NetTestSupport

@Suite("Net: TCPListener")
struct TCPListenerTests {
    @Test func listenerOnPortZero_reportsTheEphemeralPortItGot() throws {
        let listener = try TCPListener(host: "127.0.0.1", port: 0)
        defer { listener.close() }
        #expect(listener.localAddress.host == "127.0.0.1")
        #expect(listener.localAddress.port != 0)
        #expect(listener.localAddress.description == "127.0.0.1:\(listener.localAddress.port)")
        // The reported port is the one that accepts.
        let client = try TCPConnection.connect(host: "127.0.0.1", port: listener.localAddress.port)
        #expect(client.peer == listener.localAddress)
    }

    @Test func listenerOnIPv6Loopback_acceptsAndDescribesWithBrackets() throws {
        let listener: TCPListener
        do {
            listener = try TCPListener(host: "::1", port: 0)
        } catch {
            // A machine without IPv6 on loopback: nothing to test.
            #expect(error.errno == EADDRNOTAVAIL || error.errno == EAFNOSUPPORT || error.operation == "getaddrinfo")
            return
        }
        defer { listener.close() }
        let accepted = WaitableList<TCPConnection>()
        listener.startAccepting { if case .success(let connection) = $0 { accepted.append(connection) } }
        let client = try TCPConnection.connect(host: "::1", port: listener.localAddress.port)
        let server = try #require(accepted.wait(for: 0))
        #expect(listener.localAddress.description == "[::1]:\(listener.localAddress.port)")
        #expect(server.peer == client.local)
        #expect(server.local == client.peer)
        #expect(server.peer.description.hasPrefix("[::1]:"))
    }

    @Test func bindingAPortInUse_throwsAClearBindError() throws {
        let first = try TCPListener(host: "127.0.0.1", port: 0)
        defer { first.close() }
        #expect {
            _ = try TCPListener(host: "127.0.0.1", port: first.localAddress.port)
        } throws: { error in
            guard let error = error as? SocketError else { return false }
            return error == SocketError(operation: "bind", errno: EADDRINUSE)
                && error.description.hasPrefix("bind failed: ")
                && error.description.hasSuffix("(errno \(EADDRINUSE))")
        }
    }

    @Test func unresolvableHost_throwsGetaddrinfoError() {
        #expect {
            _ = try TCPListener(host: "no-such-host.invalid", port: 0)
        } throws: { error in
            (error as? SocketError)?.operation == "getaddrinfo"
        }
    }

    @Test func acceptedConnections_carryPeerAndLocalAddressesAndUniqueIDs() throws {
        let server = try LoopbackServer()
        let first = try server.connectPair(index: 0)
        let second = try server.connectPair(index: 1)
        #expect(first.server.peer == first.client.local)
        #expect(first.server.local == first.client.peer)
        #expect(first.server.local.port == server.port)
        #expect(Set([first.client.id, first.server.id, second.client.id, second.server.id]).count == 4)
    }

    @Test func close_stopsAcceptingAndRefusesNewPeers() throws {
        let server = try LoopbackServer()
        _ = try server.connectPair()
        server.listener.close()
        server.listener.close()  // idempotent
        #expect {
            _ = try TCPConnection.connect(host: "127.0.0.1", port: server.port, timeout: .seconds(5))
        } throws: { error in
            (error as? SocketError) == SocketError(operation: "connect", errno: ECONNREFUSED)
        }
        #expect(server.accepted.all.count == 1)
        // The port is free again once close has returned.
        let again = try TCPListener(host: "127.0.0.1", port: server.port)
        again.close()
    }

    @Test func closeFromInsideTheHandler_stopsFurtherHandlerCalls() throws {
        let listener = try TCPListener(host: "127.0.0.1", port: 0)
        let calls = WaitableList<Int>()
        listener.startAccepting { _ in
            listener.close()
            calls.append(1)
        }
        let port = listener.localAddress.port
        _ = try TCPConnection.connect(host: "127.0.0.1", port: port)
        #expect(calls.wait(for: 0) != nil)
        // Closed from the handler: the next peer is refused, and no second call comes.
        // The listen stops inside close (shutdown), before the handler returns.
        #expect(throws: SocketError.self) {
            _ = try TCPConnection.connect(host: "127.0.0.1", port: port)
        }
        listener.close()
        #expect(calls.all.count == 1)
    }

    @Test func closeBeforeStart_makesStartAcceptingANoOp() throws {
        let listener = try TCPListener(host: "127.0.0.1", port: 0)
        listener.close()
        listener.startAccepting { _ in Issue.record("handler called after close") }
        #expect(throws: SocketError.self) {
            _ = try TCPConnection.connect(host: "127.0.0.1", port: listener.localAddress.port)
        }
    }
}
