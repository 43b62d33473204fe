#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Mailbox
@testable import MailboxNet
import NetTestSupport
import Testing
@testable import ChatServerCore

/// What a probe task saw when its phase ran.
private struct PhaseProbe: Sendable, Equatable {
    var phase: String
    var newConnect: String
    var client: String
}

/// Tries a new connection: "accepted" or "refused".
private func tryConnect(port: UInt16) -> String {
    do {
        let connection = try TCPConnection.connect(host: "127.0.0.1", port: port, timeout: .seconds(5))
        connection.close()
        return "accepted"
    } catch {
        return error.errno == ECONNREFUSED ? "refused" : "failed: \(error)"
    }
}

@Suite("Chat server: coordinated shutdown over loopback")
struct ChatServerCoordinatedShutdownTests {
    /// The order a client sees: new connects work until `service-unbind`; after it they are
    /// refused; by the end of `service-requests-done` the connected client has had its
    /// `ERROR` line and then end of file; then the actor system stops.
    @Test func terminate_unbindsThenTellsAndClosesClients_thenStopsTheSystem() async throws {
        var configuration = ChatServerConfiguration()
        configuration.host = "127.0.0.1"
        configuration.port = 0
        configuration.serverName = "test.server"
        // Generous phase time-outs: on a loaded machine the probe tasks below may wait long for a
        // thread; only a broken shutdown takes a minute.
        let system = ActorSystem(name: "chat", configuration: .init(
            poolWorkerCount: 2, logHandler: nil, coordinatedShutdown: .init(defaultPhaseTimeout: .seconds(60))))
        let server = try ChatServer(configuration: configuration, system: system)
        let port = try server.listen().port
        let connected = WaitableList<String>()
        server.events.observeValues { event in
            if case .connected = event { connected.append("\(event)") }
        }
        let client = try TCPConnection.connect(host: "127.0.0.1", port: port)
        #expect(connected.wait(for: 0) != nil, "the server never saw the client")

        let probes = WaitableList<PhaseProbe>()
        try system.coordinatedShutdown.addTask(phase: .beforeServiceUnbind, name: "probe") {
            probes.append(PhaseProbe(phase: "before-service-unbind", newConnect: tryConnect(port: port), client: "open"))
        }
        try system.coordinatedShutdown.addTask(phase: .serviceStop, name: "probe") {
            // Everything the server sent this client, to its end of file: the connection was
            // flushed and closed in service-requests-done.
            let (bytes, end) = readRaw(client.fd, timeout: 10)
            let text = String(decoding: bytes, as: UTF8.self)
            probes.append(PhaseProbe(phase: "service-stop", newConnect: tryConnect(port: port), client: "\(text)|\(end)"))
        }

        let report = await system.terminate()

        #expect(probes.all == [
            PhaseProbe(phase: "before-service-unbind", newConnect: "accepted", client: "open"),
            PhaseProbe(phase: "service-stop", newConnect: "refused", client: "ERROR :Server shutting down\r\n|eof"),
        ])
        #expect(report.isClean, "\(report)")
        #expect(server.openConnections == 0)
        #expect(system.isTerminated)
        client.close()
    }

    @Test func shutdown_ofAServerInAnApplicationSystem_leavesTheSystemRunning_andTerminateFindsItDone() async throws {
        var configuration = ChatServerConfiguration()
        configuration.host = "127.0.0.1"
        configuration.port = 0
        let system = ActorSystem(name: "app", configuration: .init(poolWorkerCount: 2, logHandler: nil))
        let server = try ChatServer(configuration: configuration, system: system)
        let port = try server.listen().port
        let connected = WaitableList<String>()
        server.events.observeValues { event in
            if case .connected = event { connected.append("\(event)") }
        }
        let client = try TCPConnection.connect(host: "127.0.0.1", port: port)
        // Accepted (closing a listener resets the connections still in its backlog).
        #expect(connected.wait(for: 0) != nil, "the server never saw the client")

        await server.shutdown(timeout: .seconds(10))

        #expect(readRaw(client.fd, timeout: 10).end == .eof)
        #expect(tryConnect(port: port) == "refused")
        #expect(!system.isTerminated)
        let report = await system.terminate()                 // the server's phase tasks find their work done
        #expect(report.isClean, "\(report)")
        client.close()
    }
}
