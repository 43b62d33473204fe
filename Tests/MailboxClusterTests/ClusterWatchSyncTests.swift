import Foundation
import Mailbox
@testable import MailboxCluster
import MailboxNATS
import NATSTestSupport
import Testing

/// Lost watch and terminated frames are made good: after a gap, watches are reconciled.
@Suite("Cluster: watch reconciliation after lost frames", .enabled(if: NATSEnvironment.hasServer, NATSEnvironment.skipReason))
struct ClusterWatchSyncTests {
    /// A peer played by hand on a raw connection: it receives the frames sent to its subject.
    struct RawPeer {
        let node: ClusterNode
        let subjects: _Subjects
        let connection: NATSConnection
        let frames: Collector<_Frame>

        static func start(_ name: String, cluster: String) async throws -> RawPeer {
            let node = ClusterNode(name: name, incarnation: UInt64.random(in: 1...UInt64.max))
            let subjects = _Subjects(cluster: cluster)
            let connection = try await connectToTestServer()
            let frames = Collector<_Frame>()
            try connection.subscribe(to: subjects.node(node)) { message in
                if let envelope = try? _Envelope.decode(message.payload) { frames.append(envelope.frame) }
            }
            try await connection.flush()
            return RawPeer(node: node, subjects: subjects, connection: connection, frames: frames)
        }

        func send(_ frame: _Frame, sequence: UInt64 = 0, to other: ClusterNode) throws {
            try connection.publish(_Envelope(from: node, sequence: sequence, frame: frame).encoded(), to: subjects.node(other))
        }
    }

    @Test("a watch sync adds the watches a node lacks and answers terminated for actors gone; a request is answered with the node's own watches")
    func receiverReconciles() async throws {
        let name = uniqueCluster()
        let b = try await TestNode.start("b", cluster: name)
        let peer = try await RawPeer.start("p", cluster: name)
        let alive = try b.system.spawn(Behavior<String>.receiveMessage { $0 == "stop" ? .stopped : .same }, name: "alive")
        let aliveAddress = b.cluster.address(of: alive)
        let aliveWire = _WireActor(path: aliveAddress.path, incarnation: aliveAddress.incarnation)
        let ghost = _WireActor(path: "/user/ghost", incarnation: 99)
        try peer.send(.watchSync(actors: [aliveWire, ghost]), to: b.node)
        #expect(await peer.frames.wait(until: { $0.contains(.terminated(actor: ghost, failure: nil)) }))
        #expect(!peer.frames.all.contains { if case .terminated(aliveWire, _) = $0 { true } else { false } })
        // The watch the sync added fires when the actor stops.
        alive.tell("stop")
        #expect(await peer.frames.wait(until: { $0.contains { if case .terminated(aliveWire, _) = $0 { true } else { false } } }))
        // b watches an actor of the peer's; asked, it lists it.
        let far = b.cluster.resolve(ActorAddress(node: peer.node, system: "test", path: "/user/far", incarnation: 3), as: Int.self)
        far.onTermination { _ in }
        let farWire = _WireActor(path: "/user/far", incarnation: 3)
        #expect(await peer.frames.wait(until: { $0.contains { if case .watch(farWire, _) = $0 { true } else { false } } }))
        try peer.send(.watchSyncRequest, to: b.node)
        #expect(await peer.frames.wait(until: { $0.contains(.watchSync(actors: [farWire])) }))
        await b.stop()
        peer.connection.close()
    }

    @Test("frames lost from a node make this node send its watches and ask for the other's; a terminated sent again reaches the watcher once")
    func gapTriggersSync() async throws {
        let name = uniqueCluster()
        let a = try await TestNode.start("a", cluster: name)
        let peer = try await RawPeer.start("p", cluster: name)
        let farWire = _WireActor(path: "/user/far", incarnation: 3)
        let far = a.cluster.resolve(ActorAddress(node: peer.node, system: "test", path: farWire.path, incarnation: farWire.incarnation), as: Int.self)
        let ends = Collector<String>()
        far.onTermination { _ in ends.append("far") }
        #expect(await peer.frames.wait(until: { $0.contains { if case .watch(farWire, _) = $0 { true } else { false } } }))
        // The peer says it sent five frames; a got none of them (a lost terminated among them).
        try peer.send(.probe(sequence: 5), to: a.node)
        #expect(await peer.frames.wait(until: { $0.contains(.watchSync(actors: [farWire])) && $0.contains(.watchSyncRequest) }))
        #expect(a.cluster.statistics.lostFrames == 5)
        // The peer answers the sync as a node would: that actor is gone (twice, as a retry might).
        try peer.send(.terminated(actor: farWire, failure: nil), sequence: 6, to: a.node)
        try peer.send(.terminated(actor: farWire, failure: nil), sequence: 7, to: a.node)
        #expect(await ends.wait(forCount: 1))
        try await peer.connection.flush()
        #expect(ends.all == ["far"])
        await a.stop()
        peer.connection.close()
    }
}
