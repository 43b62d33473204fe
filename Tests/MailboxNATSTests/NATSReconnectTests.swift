import Foundation
import Mailbox
import MailboxNATS
import NetTestSupport
import NATSTestSupport
import Testing

@Suite("NATS reconnect: a server restart and a cluster failover", .enabled(if: NATSEnvironment.hasServer, NATSEnvironment.skipReason))
struct NATSReconnectTests {
    @Test func serverRestart_reconnects_resubscribes_andSendsWhatWasPublishedMeanwhile() async throws {
        let server = try OwnServer()
        var configuration = NATSConfiguration(url: server.url)
        configuration.reconnectWait = .milliseconds(50)
        configuration.maxReconnectAttempts = -1
        let nats = try await NATSConnection.connect(configuration)
        defer { nats.close() }
        let states = Collector<NATSConnectionState>()
        nats.state.producer.startWithValues { states.append($0) }
        let events = Collector<String>()
        nats.events.observeValues { events.append("\($0)") }
        let subject = uniqueSubject()
        let received = Collector<String>()
        try nats.subscribe(to: subject) { received.append($0.string) }
        let max = try nats.subscribe(to: subject + ".max")
        let maxReceived = Collector<String>()
        max.messages.observeValues { maxReceived.append($0.string) }
        max.unsubscribe(after: 3)
        try await nats.flush()
        try nats.publish("before", to: subject)
        try nats.publish("m0", to: subject + ".max")
        #expect(await received.wait(forCount: 1))
        #expect(await maxReceived.wait(forCount: 1))

        server.stop()
        #expect(await states.wait { $0.last == .reconnecting }, "states: \(states.all)")
        for index in 0..<100 { try nats.publish("during \(index)", to: subject) }
        for index in 1...5 { try nats.publish("m\(index)", to: subject + ".max") }
        do {
            try await nats.flush()
            Issue.record("flush while disconnected succeeded")
        } catch {
            #expect(error.code == .disconnected)
        }

        try server.start()
        #expect(await states.wait { $0.last == .connected && $0.count >= 3 }, "states: \(states.all)")
        #expect(await received.wait(forCount: 101), "received \(received.count) of 101")
        #expect(received.all == ["before"] + (0..<100).map { "during \($0)" })
        // The maximum survives the reconnect: two more, then it ends.
        #expect(await maxReceived.wait(forCount: 3))
        try await nats.flush()
        #expect(maxReceived.all == ["m0", "m1", "m2"])
        #expect(nats.statistics.reconnects == 1)
        #expect(events.all.contains { $0.hasPrefix("disconnected") })
        #expect(events.all.filter { $0.hasPrefix("connected") }.count == 1, "\(events.all)")  // the first came before we observed
    }

    @Test func publishingWhileDisconnected_beyondTheBuffer_failsClearly_andIsCounted() async throws {
        let server = try OwnServer()
        var configuration = NATSConfiguration(url: server.url)
        configuration.reconnectWait = .milliseconds(50)
        configuration.maxReconnectAttempts = -1
        configuration.reconnectBufferSize = 4_096
        let nats = try await NATSConnection.connect(configuration)
        defer { nats.close() }
        server.stop()
        #expect(await waitForState(nats, .reconnecting))
        var accepted = 0
        var refused: NATSError?
        for _ in 0..<1_000 {
            do {
                try nats.publish([UInt8](repeating: 1, count: 100), to: "buffered")
                accepted += 1
            } catch {
                refused = error
                break
            }
        }
        #expect(refused?.code == .reconnectBufferExceeded)
        #expect(accepted > 10 && accepted < 41, "accepted \(accepted) publications of 100 bytes into 4 KiB")
        #expect(nats.statistics.reconnectBufferDrops == 1)
    }

    @Test func withoutReconnect_aLostServerClosesTheConnection() async throws {
        let server = try OwnServer()
        var configuration = NATSConfiguration(url: server.url)
        configuration.allowReconnect = false
        let nats = try await NATSConnection.connect(configuration)
        let subject = uniqueSubject()
        let completed = Collector<Bool>()
        try nats.subscribe(to: subject).messages.observeCompleted { completed.append(true) }
        server.stop()
        await nats.closed()
        #expect(nats.state.value == .closed)
        #expect(await completed.wait(forCount: 1))
    }

    @Test func aRequestInFlightWhenTheLinkIsLost_failsWithDisconnected_notATimeOut() async throws {
        let server = try OwnServer()
        var configuration = NATSConfiguration(url: server.url)
        configuration.reconnectWait = .milliseconds(50)
        let nats = try await NATSConnection.connect(configuration)
        defer { nats.close() }
        let subject = uniqueSubject()
        let asked = Collector<Bool>()
        try nats.subscribe(to: subject) { _ in asked.append(true) }  // never answers
        try await nats.flush()
        async let reply = nats.request("hello", to: subject, timeout: .seconds(60))
        #expect(await asked.wait(forCount: 1))
        server.stop()
        do {
            _ = try await reply
            Issue.record("a reply came from a dead server")
        } catch {
            #expect((error as? NATSError)?.code == .disconnected, "\(error)")
        }
    }

    @Test(.enabled(if: NATSEnvironment.clusterURLs.count == 3, "MAILBOX_NATS_CLUSTER_URLS is not set: run `bash Tests/Integration/nats.sh --cluster`"))
    func clusterFailover_killingTheServerAClientUses_movesItToAnother() async throws {
        let urls = NATSEnvironment.clusterURLs
        var configuration = NATSConfiguration(servers: [urls[0]])  // the others come from INFO
        configuration.randomizeServers = false
        configuration.reconnectWait = .milliseconds(50)
        configuration.maxReconnectAttempts = -1
        let subscriber = try await NATSConnection.connect(configuration)
        let publisher = try await NATSConnection.connect(NATSConfiguration(url: urls[2]))
        defer { subscriber.close(); publisher.close() }
        let discovered = Collector<String>()
        subscriber.events.observeValues { if case .discoveredServers(let added) = $0 { for url in added { discovered.append(url) } } }
        #expect(subscriber.connectedServer?.hasSuffix(urls[0].split(separator: ":").last.map(String.init) ?? "?") == true)
        let subject = uniqueSubject("failover")
        let received = Collector<String>()
        try subscriber.subscribe(to: subject) { received.append($0.string) }
        try await subscriber.flush()
        // Interest crosses the routes asynchronously: publish until one arrives.
        for attempt in 0..<300 where received.count == 0 {
            try publisher.publish("before \(attempt)", to: subject)
            try await publisher.flush()
            _ = await received.wait(timeout: 0.1) { !$0.isEmpty }
        }
        #expect(received.count > 0, "nothing crossed the cluster")

        let pids = NATSEnvironment.clusterPIDFiles
        try #require(pids.count == 3)
        let pid = try signalServer(pidFile: pids[0])
        #expect(waitForExit(pid: pid))
        #expect(await waitForState(subscriber, .reconnecting))
        #expect(await waitForState(subscriber, .connected))
        let now = try #require(subscriber.connectedServer)
        #expect(!now.hasSuffix(":" + (urls[0].split(separator: ":").last.map(String.init) ?? "?")), "still on \(now)")
        let before = received.count
        for attempt in 0..<300 where received.count == before {
            try publisher.publish("after \(attempt)", to: subject)
            try await publisher.flush()
            _ = await received.wait(timeout: 0.1) { $0.count > before }
        }
        #expect(received.all.last?.hasPrefix("after") == true, "the resubscribed client got nothing after the failover")
    }
}
