import Foundation
import Mailbox
import NATSTestSupport
import NetTestSupport
import Testing

/// Where `Tests/Integration/nats.sh` built the `cluster-node` sample.
enum ClusterNodeBinary {
    static let path = ProcessInfo.processInfo.environment["MAILBOX_CLUSTER_NODE"]
    static let isAvailable = NATSEnvironment.hasServer && path != nil
    static let skipReason: Comment = "MAILBOX_CLUSTER_NODE is not set: run `bash Tests/Integration/nats.sh` (it builds cluster-node)"
}

/// A `cluster-node` process of a test.
struct NodeProcess {
    let name: String
    let process: PeerProcess

    static func start(_ name: String, cluster: String, server: String? = nil, downAfter: Double = 5, window: Int = 65_536) async throws -> NodeProcess {
        let process = try PeerProcess(ClusterNodeBinary.path!, [
            "--name", name, "--nats", server ?? NATSEnvironment.url!, "--cluster", cluster, "--down-after", "\(downAfter)",
            "--window", "\(window)",
        ])
        guard await process.waitForLine(startingWith: "ready ") != nil else { throw TestFailure("\(name) did not start: \(process.lines.all)") }
        return NodeProcess(name: name, process: process)
    }

    /// Sends a command and waits for the reply line starting with `prefix`.
    func command(_ line: String, expect prefix: String, timeout: TimeInterval = 60) async -> String? {
        let before = process.lines.count
        process.send(line)
        return await process.waitForLine(startingWith: prefix, after: before, timeout: timeout)
    }

    func stop() {
        process.send("leave")
        _ = process.finish()
    }
}

@Suite("Cluster: several processes on a real nats-server", .serialized, .enabled(if: ClusterNodeBinary.isAvailable, ClusterNodeBinary.skipReason))
struct ClusterProcessTests {
    @Test("three processes: a shared listing, tells and asks across, a distributed actor called from another process")
    func threeNodes() async throws {
        let cluster = uniqueCluster()
        var nodes: [NodeProcess] = []
        for name in ["a", "b", "c"] { nodes.append(try await NodeProcess.start(name, cluster: cluster)) }
        for node in nodes { #expect(await node.command("wait-listing 3", expect: "listing 3") != nil) }
        let greeter = try #require(await nodes[2].command("greeter", expect: "greeter ")).split(separator: " ")[1]
        #expect(await nodes[0].command("greet \(greeter) Ada", expect: "greeting") == "greeting Hello, Ada, from c!")
        #expect(await nodes[0].command("tell 1000", expect: "told") != nil)
        let before = nodes[0].process.lines.count
        nodes[0].process.send("stats")
        #expect(await nodes[0].process.waitForLine(startingWith: "stats done", after: before) != nil)
        let stats = nodes[0].process.lines.all.dropFirst(before).filter { $0.hasPrefix("stats ") && $0 != "stats done" }
        #expect(Set(stats) == ["stats a 0 0", "stats b 1000 0", "stats c 1000 0"])
        for node in nodes { node.stop() }
    }

    @Test("1,000,000 numbered tells from one process to another: none lost, none out of order")
    func million() async throws {
        let cluster = uniqueCluster()
        let a = try await NodeProcess.start("a", cluster: cluster)
        let b = try await NodeProcess.start("b", cluster: cluster)
        #expect(await a.command("wait-listing 2", expect: "listing 2") != nil)
        #expect(await a.command("tell 1000000", expect: "told", timeout: 600) != nil)
        let before = a.process.lines.count
        a.process.send("stats")
        #expect(await a.process.waitFor("stats b 1000000 0", timeout: 300), "\(a.process.lines.all.dropFirst(before))")
        a.stop()
        b.stop()
    }

    @Test("SIGKILL a process: every watch fires once, listings drop it, the survivors keep working")
    func sigkill() async throws {
        let cluster = uniqueCluster()
        let a = try await NodeProcess.start("a", cluster: cluster)
        let b = try await NodeProcess.start("b", cluster: cluster)
        let c = try await NodeProcess.start("c", cluster: cluster)
        for node in [a, b, c] { #expect(await node.command("wait-listing 3", expect: "listing 3") != nil) }
        #expect(await a.command("watch", expect: "watching") == "watching 2")
        #expect(await b.command("watch", expect: "watching") == "watching 2")
        c.process.signal(SIGKILL)
        _ = c.process.finish()
        #expect(await a.process.waitForLine(startingWith: "terminated c", timeout: 60) != nil)
        #expect(await b.process.waitForLine(startingWith: "terminated c", timeout: 60) != nil)
        #expect(await a.command("wait-listing 2", expect: "listing 2") != nil)
        #expect(await a.command("tell 10", expect: "told") != nil)
        #expect(await a.command("stats", expect: "stats b") == "stats b 10 0")
        try await Task.sleep(for: .milliseconds(500))
        #expect(a.process.lines.all.filter { $0.hasPrefix("terminated") }.count == 1)
        a.stop()
        b.stop()
    }

    @Test("SIGSTOP past down-after: the node is downed; after SIGCONT it rejoins under a new incarnation, old refs stay dead")
    func sigstop() async throws {
        let cluster = uniqueCluster()
        let a = try await NodeProcess.start("a", cluster: cluster, downAfter: 2)
        let b = try await NodeProcess.start("b", cluster: cluster, downAfter: 2)
        let firstReady = try #require(b.process.lines.all.first { $0.hasPrefix("ready ") })
        #expect(await a.command("wait-listing 2", expect: "listing 2") != nil)
        #expect(await a.command("watch", expect: "watching") == "watching 1")
        b.process.signal(SIGSTOP)
        #expect(await a.process.waitForLine(startingWith: "member b unreachable") != nil)
        #expect(await a.process.waitForLine(startingWith: "terminated b") != nil)
        #expect(await a.process.waitForLine(startingWith: "member b down") != nil)
        b.process.signal(SIGCONT)
        #expect(await b.process.waitForLine(startingWith: "downed ") != nil)
        let count = b.process.lines.count
        let secondReady = try #require(await b.process.waitForLine(startingWith: "ready ", after: count - 1))
        #expect(secondReady != firstReady)
        #expect(secondReady.hasPrefix("ready b:"))
        #expect(await a.command("wait-listing 2", expect: "listing 2") != nil)
        #expect(await a.command("tell 5", expect: "told") != nil)
        #expect(await a.command("stats", expect: "stats b") == "stats b 5 0")
        #expect(a.process.lines.all.filter { $0.hasPrefix("terminated") }.count == 1)
        a.stop()
        b.stop()
    }

    @Test("a receiver that stops reading: tell drops past the window and counts them, send waits for room and loses nothing")
    func slowReceiver() async throws {
        let cluster = uniqueCluster()
        let a = try await NodeProcess.start("a", cluster: cluster, downAfter: 60, window: 1_000)
        let b = try await NodeProcess.start("b", cluster: cluster, downAfter: 60)
        #expect(await a.command("wait-listing 2", expect: "listing 2") != nil)
        b.process.signal(SIGSTOP)  // reads nothing, acknowledges nothing
        // The window holds 1,000 sequenced frames, the watch of b's echo (the listing's) among them.
        let flooded = try #require(await a.command("flood 5000", expect: "flooded")).split(separator: " ").compactMap { Int($0) }
        #expect(flooded.count == 2 && flooded[0] + flooded[1] == 5_000 && (990...1_000).contains(flooded[0]), "\(a.process.lines.all)")
        let enqueued = flooded.first ?? 0
        let drops = await a.command("drops", expect: "drops")
        #expect(drops == "drops \(5_000 - enqueued)")
        a.process.send("tell 100")  // suspends: the window is full
        let before = a.process.lines.count
        b.process.signal(SIGCONT)
        #expect(await a.process.waitForLine(startingWith: "told 100", after: before - 1) != nil)
        // The flooded numbers that fitted and the 100 sent ones, each sender's in order.
        let stats = await a.command("stats", expect: "stats b")
        #expect(stats == "stats b \(enqueued + 100) 0")
        a.stop()
        b.stop()
    }

    @Test("nats-server restarts: the nodes reconnect and nobody is downed within the threshold")
    func serverRestart() async throws {
        let server = try OwnServer()
        let cluster = uniqueCluster()
        let a = try await NodeProcess.start("a", cluster: cluster, server: server.url, downAfter: 15)
        let b = try await NodeProcess.start("b", cluster: cluster, server: server.url, downAfter: 15)
        #expect(await a.command("wait-listing 2", expect: "listing 2") != nil)
        #expect(await a.command("watch", expect: "watching") == "watching 1")
        let (aLines, bLines) = (a.process.lines.count, b.process.lines.count)
        server.stop()
        try server.start()
        // Both reconnect; messages flow again.
        #expect(await a.process.waitForLine(startingWith: "nats connected", after: aLines, timeout: 60) != nil)
        #expect(await b.process.waitForLine(startingWith: "nats connected", after: bLines, timeout: 60) != nil)
        #expect(await a.command("tell 3", expect: "told") != nil)
        #expect(await a.command("stats", expect: "stats b") == "stats b 3 0")
        #expect(await a.command("members", expect: "members")?.contains("b=up") == true)
        #expect(!a.process.lines.all.contains { $0.hasPrefix("terminated") || $0 == "member b down" })
        a.stop()
        b.stop()
    }
}
