import Foundation
import Mailbox
@testable import MailboxCluster
import MailboxNATS
import NATSTestSupport
import NetTestSupport
import Testing

@Suite("Cluster: remote refs, watch and receptionist on a real nats-server", .enabled(if: NATSEnvironment.hasServer, NATSEnvironment.skipReason))
struct ClusterTests {
    @Test("a ref listed by the cluster receptionist on another node is told and asked like a local one")
    func tellAndAsk() async throws {
        let nodes = try await startCluster(2)
        let (a, b) = (nodes[0], nodes[1])
        let key = ServiceKey<Counter>("counters")
        b.cluster.receptionist.register(try b.system.spawn(counter(), name: "c"), with: key)
        #expect(await waitFor(a.cluster.receptionist.listing(for: key)) { $0.count == 1 })
        let remote = try #require(a.cluster.receptionist.find(key).first)
        #expect(remote.address.node == b.node)
        #expect(remote.address.path == "/user/c")
        for amount in 1...10 { #expect(remote.tell(.add(amount)) == .enqueued) }
        let total = try await remote.ask(timeout: .seconds(10)) { .get(replyTo: $0) }
        #expect(total == 55)
        // The same actor resolves to an equal ref (interned), so listings are sets of actors.
        #expect(a.cluster.resolve(remote.address, as: Counter.self) == remote)
        for node in nodes { await node.stop() }
    }

    @Test("a ref inside a message resolves on arrival: the receiver answers the sender's own actor")
    func refInsideMessage() async throws {
        let nodes = try await startCluster(2)
        let (a, b) = (nodes[0], nodes[1])
        let replies = Collector<Int>()
        let inbox = try a.system.spawn(recorder(replies), name: "inbox")
        let remote = b.cluster.resolve(b.cluster.address(of: try b.system.spawn(counter(5), name: "c5")), as: Counter.self)
        #expect(remote.address.node == nil) // b's own actor, resolved locally
        let key = ServiceKey<Counter>("c5")
        b.cluster.receptionist.register(remote, with: key)
        #expect(await waitFor(a.cluster.receptionist.listing(for: key)) { $0.count == 1 })
        let onB = try #require(a.cluster.receptionist.find(key).first)
        onB.tell(.get(replyTo: inbox))
        #expect(await replies.wait(forCount: 1))
        #expect(replies.all == [5])
        for node in nodes { await node.stop() }
    }

    @Test("the reply refs of completed asks are forgotten: the export table does not grow with asks")
    func askExportsRetire() async throws {
        let nodes = try await startCluster(2)
        let (a, b) = (nodes[0], nodes[1])
        let remote = a.cluster.resolve(b.cluster.address(of: try b.system.spawn(counter(), name: "c")), as: Counter.self)
        let silent = a.cluster.resolve(b.cluster.address(of: try b.system.spawn(Behavior<Counter>.ignore, name: "silent")), as: Counter.self)
        for _ in 0..<50 { _ = try await remote.ask(timeout: .seconds(10)) { .get(replyTo: $0) } }
        for _ in 0..<5 {
            await #expect(throws: AskError.self) { _ = try await silent.ask(timeout: .milliseconds(50)) { .get(replyTo: $0) } }
        }
        // Answered asks leave at once, timed-out ones at the next heartbeats.
        let core = a.cluster.core
        #expect(await eventually { core.state.withLockedValue { $0.exports.isEmpty && $0.askExports.isEmpty } })
        for node in nodes { await node.stop() }
    }

    @Test("100,000 numbered tells arrive all and in order (FIFO per sender-receiver pair)")
    func fifo() async throws {
        let nodes = try await startCluster(2)
        let (a, b) = (nodes[0], nodes[1])
        let received = Collector<Int>()
        let sink = try b.system.spawn(recorder(received), name: "sink")
        let remote = a.cluster.resolve(b.cluster.address(of: sink), as: Int.self)
        let count = 100_000
        // `send` waits while the window to b is full (no number dropped, no polling).
        for number in 0..<count { try await remote.send(number) }
        #expect(await received.wait(timeout: 120) { $0.count >= count })
        #expect(received.all == Array(0..<count))
        #expect(b.cluster.statistics.lostFrames == 0)
        for node in nodes { await node.stop() }
    }

    @Test("watching a remote actor: terminated once when it stops, with the remote failure")
    func remoteDeathWatch() async throws {
        let nodes = try await startCluster(2)
        let (a, b) = (nodes[0], nodes[1])
        struct Boom: Error {}
        let doomed = try b.system.spawn(Behavior<String>.receiveMessage { text in
            if text == "fail" { throw Boom() }
            return text == "stop" ? .stopped : .same
        }, name: "doomed")
        let remote = a.cluster.resolve(b.cluster.address(of: doomed), as: String.self)
        let events = Collector<String>()
        let watcher = try a.system.spawn(Behavior<ActorRef<String>>.receive { context, ref in
            context.watch(ref)
            context.watch(ref)  // twice: still one event
            events.append("watching")
            return .same
        }.receiveLifecycle { _, event in
            if case let .terminated(ref) = event { events.append("terminated \(ref.path)") }
            return .same
        }, name: "watcher")
        let failures = Collector<String>()
        remote.onTermination { failure in failures.append(failure.map { "\($0)" } ?? "none") }
        watcher.tell(remote)
        #expect(await events.wait(forCount: 1))
        // The watch frame travels before "fail" on the same link.
        remote.tell("fail")
        #expect(await events.wait { $0.contains("terminated /user/doomed") })
        #expect(await failures.wait(forCount: 1))
        #expect(failures.all.first?.contains("Boom") == true)
        // Watching a ref to an actor that is gone answers at once.
        let late = Collector<Bool>()
        remote.onTermination { _ in late.append(true) }
        #expect(await late.wait(forCount: 1))
        try await Task.sleep(for: .milliseconds(300))  // a second terminated would arrive by now
        #expect(events.all.filter { $0.hasPrefix("terminated") }.count == 1)
        for node in nodes { await node.stop() }
    }

    @Test("a killed node: downed within a second, watches fire once, listings drop it, asks fail at once")
    func killedNode() async throws {
        let nodes = try await startCluster(3)
        let (a, b, c) = (nodes[0], nodes[1], nodes[2])
        let key = ServiceKey<Counter>("killed")
        b.cluster.receptionist.register(try b.system.spawn(counter(), name: "c"), with: key)
        c.cluster.receptionist.register(try c.system.spawn(counter(), name: "c"), with: key)
        #expect(await waitFor(a.cluster.receptionist.listing(for: key)) { $0.count == 2 })
        let onB = try #require(a.cluster.receptionist.find(key).first { $0.address.node == b.node })
        let fired = Collector<String>()
        onB.onTermination { failure in fired.append("\(failure.map { "\($0)" } ?? "none")") }
        let started = ContinuousClock.now
        // A crash, as far as NATS can tell: the connection goes, nobody says goodbye.
        b.cluster.connection.close()
        #expect(await waitFor(a.cluster.members) { members in members.contains { $0.node == b.node } == false })
        let detection = ContinuousClock.now - started
        #expect(await fired.wait(forCount: 1))
        #expect(fired.all.first?.contains("down") == true)
        #expect(await waitFor(a.cluster.receptionist.listing(for: key)) { $0.count == 1 })
        #expect(await waitFor(c.cluster.receptionist.listing(for: key)) { $0.count == 1 })
        // Detection is quick (the no-responders path); the bound is generous for a loaded machine.
        #expect(detection < .seconds(10), "detected after \(detection)")
        let askStarted = ContinuousClock.now
        await #expect(throws: AskError.self) { _ = try await onB.ask(timeout: .seconds(20)) { .get(replyTo: $0) } }
        #expect(ContinuousClock.now - askStarted < .seconds(10))
        try await Task.sleep(for: .milliseconds(300))
        #expect(fired.count == 1)
        await a.stop()
        await c.stop()
        _ = await b.system.shutdown()
    }

    @Test("an ask to a node whose connection is gone fails at once with no responders, before it is downed")
    func askNoResponders() async throws {
        let nodes = try await startCluster(2) { $0.downAfter = .seconds(60); $0.goneAfter = .seconds(60) }
        let (a, b) = (nodes[0], nodes[1])
        let remote = a.cluster.resolve(b.cluster.address(of: try b.system.spawn(counter(), name: "c")), as: Counter.self)
        b.cluster.connection.close()
        await b.cluster.connection.closed()
        // Wait until the server has dropped b's subscriptions (it sees the socket close a moment
        // after the client does): then NATS itself answers "no responders".
        let subject = _Subjects(cluster: a.cluster.configuration.clusterName).node(b.node)
        var gone = false
        for _ in 0..<300 where !gone {
            do {
                _ = try await a.cluster.connection.request([], to: subject, timeout: .seconds(5))
            } catch {
                gone = error.code == .noResponders
            }
        }
        #expect(gone)
        let started = ContinuousClock.now
        do {
            _ = try await remote.ask(timeout: .seconds(30)) { .get(replyTo: $0) }
            Issue.record("the ask was answered")
        } catch let error as AskError {
            #expect(error.code == .notDelivered)
        }
        #expect(ContinuousClock.now - started < .seconds(15))
        await a.stop()
        _ = await b.system.shutdown()
    }

    @Test("watching an actor on a node nobody serves (never a member here) ends at once, not never")
    func watchUnknownNode() async throws {
        let nodes = try await startCluster(1)
        let a = nodes[0]
        let ghost = ClusterNode(name: "ghost", incarnation: 42)
        let remote = a.cluster.resolve(ActorAddress(node: ghost, system: "test", path: "/user/x", incarnation: 1), as: Int.self)
        let fired = Collector<String>()
        remote.onTermination { failure in fired.append("\(failure.map { "\($0)" } ?? "none")") }
        #expect(await fired.wait(forCount: 1))
        #expect(fired.all.first?.contains("nobody serves it") == true)
        #expect(remote.tell(1) == .dropped(.recipientTerminated))
        for node in nodes { await node.stop() }
    }

    @Test("a node that leaves in order: removed at once everywhere, its actors' watches fire")
    func orderlyLeave() async throws {
        let nodes = try await startCluster(2) { $0.downAfter = .seconds(60) }
        let (a, b) = (nodes[0], nodes[1])
        let remote = a.cluster.resolve(b.cluster.address(of: try b.system.spawn(counter(), name: "c")), as: Counter.self)
        let fired = Collector<String>()
        remote.onTermination { failure in fired.append("\(failure.map { "\($0)" } ?? "none")") }
        let events = Collector<MemberEvent>()
        a.cluster.memberEvents.observeValues { events.append($0) }
        await b.stop()
        #expect(await events.wait { $0.contains { $0.member.node == b.node && $0.member.status == .removed } })
        #expect(await fired.wait(forCount: 1))
        #expect(fired.all.first?.contains("left") == true)
        #expect(remote.tell(.add(1)) == .dropped(.recipientTerminated))
        await a.stop()
    }

    @Test("a message type the recipient does not know becomes a dead letter there, with the reason")
    func notUnderstood() async throws {
        let nodes = try await startCluster(2)
        let (a, b) = (nodes[0], nodes[1])
        let sink = try b.system.spawn(Behavior<Int>.ignore, name: "ints")
        let address = b.cluster.address(of: sink)
        let wrong = a.cluster.resolve(address, as: String.self)
        let dead = Collector<DeadLetter>()
        b.system.deadLetters.observeValues { dead.append($0) }
        #expect(wrong.tell("not an Int") == .enqueued)
        #expect(await dead.wait(forCount: 1))
        let letter = try #require(dead.all.first)
        #expect(letter.reason == .notUnderstood)
        let why = try #require((letter.message as? UndeliveredRemoteMessage)?.why)
        #expect(why.contains("Swift.String") && why.contains("Swift.Int"))
        #expect(letter.recipient.path == "/user/ints")
        #expect(b.cluster.statistics.notUnderstood == 1)
        for node in nodes { await node.stop() }
    }
}

/// Versions and renames: an old node and a new node exchange messages.
@Suite("Cluster: codecs and migrations on a real nats-server", .enabled(if: NATSEnvironment.hasServer, NATSEnvironment.skipReason))
struct ClusterCodecTests {
    /// Version 1 of a message, as an old node has it.
    struct GreetingV1: Codable, Sendable, Equatable {
        var name: String
    }

    /// Version 2, renamed, with a field added (optional: old senders leave it out).
    struct Salutation: Codable, Sendable, Equatable {
        var name: String
        var language: String?
    }

    /// A binary codec for `Salutation`: reads versions 1 and 2.
    struct SalutationCodec: ClusterMessageCodec {
        func encode(_ message: Salutation, context: ClusterCodingContext) throws -> [UInt8] {
            Array("\(message.name)|\(message.language ?? "")".utf8)
        }

        func decode(_ bytes: ArraySlice<UInt8>, version: Int, context: ClusterCodingContext) throws -> Salutation {
            let text = String(decoding: bytes, as: UTF8.self)
            if version == 1 { return Salutation(name: text, language: nil) }
            let parts = text.split(separator: "|", omittingEmptySubsequences: false)
            guard parts.count == 2 else { throw ClusterWireError("bad salutation \(text.debugDescription)") }
            return Salutation(name: String(parts[0]), language: parts[1].isEmpty ? nil : String(parts[1]))
        }
    }

    /// The old node's codec for version 1: the name's bytes.
    struct GreetingV1Codec: ClusterMessageCodec {
        func encode(_ message: GreetingV1, context: ClusterCodingContext) throws -> [UInt8] { Array(message.name.utf8) }
        func decode(_ bytes: ArraySlice<UInt8>, version: Int, context: ClusterCodingContext) throws -> GreetingV1 {
            GreetingV1(name: String(decoding: bytes, as: UTF8.self))
        }
    }

    @Test("JSON: a renamed type answers to its old manifest, and an added optional field is nil from old senders")
    func jsonRename() async throws {
        let cluster = uniqueCluster()
        let old = try await TestNode.start("old", cluster: cluster) { $0.codecs.register(GreetingV1.self, manifest: "Greeting") }
        let new = try await TestNode.start("new", cluster: cluster) {
            $0.codecs.register(Salutation.self, manifest: "Salutation", version: 2, aliases: ["Greeting"])
        }
        #expect(await old.waitToSee([new]))
        let received = Collector<Salutation>()
        let inbox = try new.system.spawn(recorder(received), name: "inbox")
        let fromOld = old.cluster.resolve(new.cluster.address(of: inbox), as: GreetingV1.self)
        fromOld.tell(GreetingV1(name: "Ada"))
        #expect(await received.wait(forCount: 1))
        #expect(received.all == [Salutation(name: "Ada", language: nil)])
        await old.stop()
        await new.stop()
    }

    @Test("binary codec: the new node reads version 1 bytes; an unknown manifest is a dead letter that says so")
    func binaryVersions() async throws {
        let cluster = uniqueCluster()
        let old = try await TestNode.start("old", cluster: cluster) {
            $0.codecs.register(GreetingV1.self, manifest: "Greeting", version: 1, codec: GreetingV1Codec())
        }
        let new = try await TestNode.start("new", cluster: cluster) {
            $0.codecs.register(Salutation.self, manifest: "Salutation", version: 2, aliases: ["Greeting"], codec: SalutationCodec())
        }
        #expect(await old.waitToSee([new]))
        let received = Collector<Salutation>()
        let inbox = try new.system.spawn(recorder(received), name: "inbox")
        let address = new.cluster.address(of: inbox)
        old.cluster.resolve(address, as: GreetingV1.self).tell(GreetingV1(name: "Grace"))
        new.cluster.resolve(address, as: Salutation.self).tell(Salutation(name: "Alan", language: "en"))
        #expect(await received.wait(forCount: 2))
        // Two senders (the old node, and the new node's own direct tell): no order between them.
        #expect(Set(received.all.map(\.name)) == ["Grace", "Alan"])
        #expect(received.all.contains(Salutation(name: "Grace", language: nil)))
        #expect(received.all.contains(Salutation(name: "Alan", language: "en")))
        // A type registered under another manifest is not understood.
        let dead = Collector<DeadLetter>()
        new.system.deadLetters.observeValues { dead.append($0) }
        old.cluster.resolve(address, as: Int.self).tell(7)
        #expect(await dead.wait(forCount: 1))
        let why = dead.all.first.map { "\($0.message)" } ?? ""
        #expect(dead.all.first?.reason == .notUnderstood)
        #expect(why.contains("Swift.Int"), "\(why)")
        await old.stop()
        await new.stop()
    }
}

/// The window to a node: `tell` drops and counts past it, `send` waits for acknowledgements.
@Suite("Cluster: back-pressure on a real nats-server", .enabled(if: NATSEnvironment.hasServer, NATSEnvironment.skipReason))
struct ClusterBackPressureTests {
    @Test("a node that does not acknowledge: tell drops past the window (counted), send suspends until an ack comes")
    func window() async throws {
        let clusterName = uniqueCluster()
        let a = try await TestNode.start("a", cluster: clusterName) { $0.outboundWindow = 8 }
        // A silent peer: it subscribes to a node subject (so NATS delivers) and never acknowledges.
        let silent = ClusterNode(name: "silent", incarnation: 77)
        let subjects = _Subjects(cluster: clusterName)
        let raw = try await connectToTestServer()
        let frames = Collector<_Envelope>()
        try raw.subscribe(to: subjects.node(silent)) { message in
            if let envelope = try? _Envelope.decode(message.payload) { frames.append(envelope) }
        }
        try await raw.flush()
        let remote = a.cluster.resolve(ActorAddress(node: silent, system: "test", path: "/user/x", incarnation: 1), as: Int.self)
        for number in 0..<8 { #expect(remote.tell(number) == .enqueued) }
        let dropped = Collector<Dropped>()
        a.system.events.observeValues { event in if case let .dropped(drop) = event { dropped.append(drop) } }
        #expect(remote.tell(8) == .dropped(.outboundQueueFull))
        #expect(a.cluster.statistics.outboundDrops == 1)
        #expect(await dropped.wait(forCount: 1))
        let sent = Collector<Int>()
        let sender = Task {
            try await remote.send(9)
            sent.append(9)
        }
        #expect(await frames.wait { $0.filter(\.frame.isSequenced).count >= 8 })
        try await Task.sleep(for: .milliseconds(200))
        #expect(sent.count == 0)  // still waiting for room
        // The peer acknowledges the first four: room for the send.
        try raw.publish(_Envelope(from: silent, sequence: 0, frame: .ack(sequence: 4)).encoded(), to: subjects.node(a.node))
        try await sender.value
        #expect(await frames.wait { $0.filter(\.frame.isSequenced).count >= 9 })
        #expect(frames.all.filter(\.frame.isSequenced).map(\.sequence) == Array(1...9))
        raw.close()
        await a.stop()
    }
}

@Suite("Cluster: partitions on a real nats-server", .enabled(if: NATSEnvironment.hasServer, NATSEnvironment.skipReason))
struct ClusterPartitionTests {
    @Test("after a partition in which both sides downed each other, both learn they were downed")
    func bothSidesLearn() async throws {
        let nodes = try await startCluster(2)
        let (a, b) = (nodes[0], nodes[1])
        // What a partition leaves behind: each side has downed the other (a tombstone each).
        a.cluster.core.state.withLockedValue { _ = $0.membership.left(b.node) }
        b.cluster.core.state.withLockedValue { _ = $0.membership.left(a.node) }
        // The heartbeats cross again: each is told by the other, and must listen.
        #expect(await waitFor(a.cluster.members) { $0.first == Member(node: a.node, status: .down) })
        #expect(await waitFor(b.cluster.members) { $0.first == Member(node: b.node, status: .down) })
        for node in nodes { await node.stop() }
    }
}

@Suite("Cluster: routing across nodes on a real nats-server", .enabled(if: NATSEnvironment.hasServer, NATSEnvironment.skipReason))
struct ClusterRoutingTests {
    struct Job: Codable, Sendable, Hashable {
        var number: Int
    }

    @Test("a group router over a cluster key routes round-robin to the workers of every node")
    func groupRouterAcrossNodes() async throws {
        let nodes = try await startCluster(2)
        let (a, b) = (nodes[0], nodes[1])
        let key = ServiceKey<Job>("jobs")
        let done = Collector<String>()
        func worker(_ name: String) -> Behavior<Job> {
            .receiveMessage { _ in
                done.append(name)
                return .same
            }
        }
        a.cluster.receptionist.register(try a.system.spawn(worker("a1"), name: "a1"), with: key)
        b.cluster.receptionist.register(try b.system.spawn(worker("b1"), name: "b1"), with: key)
        b.cluster.receptionist.register(try b.system.spawn(worker("b2"), name: "b2"), with: key)
        let router = try a.system.spawn(a.cluster.receptionist.group(key).withRoundRobinRouting().behavior, name: "router")
        #expect(await waitFor(a.cluster.receptionist.listing(for: key)) { $0.count == 3 })
        for number in 0..<30 { router.tell(Job(number: number)) }
        #expect(await done.wait(forCount: 30))
        let counts = Dictionary(grouping: done.all, by: { $0 }).mapValues(\.count)
        #expect(counts == ["a1": 10, "b1": 10, "b2": 10])
        for node in nodes { await node.stop() }
    }
}
