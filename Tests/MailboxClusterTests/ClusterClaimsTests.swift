import Foundation
import Mailbox
@testable import MailboxCluster
import MailboxNATS
import NATSTestSupport
import Testing

@Suite("Cluster claims: one owner per key, by compare-and-set in NATS KV", .enabled(if: NATSEnvironment.hasServer, NATSEnvironment.skipReason))
struct ClusterClaimsTests {
    @Test("of nodes claiming one key at once exactly one wins; the others see it as the owner; a release frees it")
    func oneWinner() async throws {
        let nodes = try await startCluster(3)
        let claims = try await withThrowingTaskGroup(of: ClusterClaims.self) { group in
            for node in nodes { group.addTask { try await node.cluster.claims("nicks") } }
            var all: [ClusterClaims] = []
            for try await claims in group { all.append(claims) }
            return all.sorted { $0.bucket < $1.bucket }
        }
        #expect(try await nodes[0].cluster.claims("nicks") === nodes[0].cluster.claims("nicks"))
        for round in 0..<5 {
            let key = "nick[\(round)]|é"
            let won = try await withThrowingTaskGroup(of: (ClusterNode, Bool).self) { group in
                for node in nodes {
                    group.addTask { (node.node, try await node.cluster.claims("nicks").claim(key)) }
                }
                var won: [ClusterNode] = []
                for try await (node, claimed) in group where claimed { won.append(node) }
                return won
            }
            #expect(won.count == 1, "round \(round): \(won)")
            let winner = try #require(won.first)
            for node in nodes {
                let mine = try await node.cluster.claims("nicks")
                #expect(try await mine.owner(of: key) == winner)
                // Claiming again answers the same: the winner keeps it, the others do not get it.
                #expect(try await mine.claim(key) == (node.node == winner))
                #expect(mine.owned.contains(key) == (node.node == winner))
            }
            let loser = try #require(nodes.first { $0.node != winner })
            // A release by a node that does not own the key changes nothing.
            try await loser.cluster.claims("nicks").release(key)
            #expect(try await loser.cluster.claims("nicks").owner(of: key) == winner)
            try await nodes.first { $0.node == winner }!.cluster.claims("nicks").release(key)
            #expect(try await loser.cluster.claims("nicks").owner(of: key) == nil)
            #expect(try await loser.cluster.claims("nicks").claim(key))
        }
        #expect(claims.count == 3)
        for node in nodes { await node.stop() }
    }

    @Test("keys are stored escaped and come back as they were")
    func escaping() throws {
        for key in ["alice", "[w]\\`^{}|", "café", "a.b>c*", "=41", "-_"] {
            let escaped = try ClusterClaims.escape(key)
            #expect(escaped.utf8.allSatisfy { $0 == UInt8(ascii: "=") || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") || ($0 >= 48 && $0 <= 57) || ($0 | 0x20 >= 97 && $0 | 0x20 <= 122) }, "\(escaped)")
            #expect(ClusterClaims.unescape(escaped) == key)
        }
        #expect(throws: ClusterError.self) { try ClusterClaims.escape("") }
    }

    @Test("a bad bucket name and an empty key are clear errors")
    func badNames() async throws {
        let nodes = try await startCluster(1)
        await #expect(throws: ClusterError.self) { try await nodes[0].cluster.claims("no.dots") }
        let claims = try await nodes[0].cluster.claims("keys")
        do {
            _ = try await claims.claim("")
            Issue.record("an empty key was claimed")
        } catch {
            #expect(error.code == .invalidName)
        }
        for node in nodes { await node.stop() }
    }

    @Test("the claims of a node that leaves are released by the survivors, and another node gets them")
    func releasedWhenOwnerLeaves() async throws {
        let nodes = try await startCluster(3)
        let owner = nodes.max { $0.node.description < $1.node.description }!  // not the one that releases
        let mine = try await owner.cluster.claims("singletons")
        for node in nodes where node.node != owner.node { _ = try await node.cluster.claims("singletons") }
        #expect(try await mine.claim("scheduler"))
        #expect(try await mine.claim("mailer"))
        // Watch the bucket itself: the released keys get delete markers.
        let kv = try await nodes[0].cluster.connection.keyValue(mine.bucket)
        let deleted = Collector<String>()
        let watch = kv.watch().startWithValues { event in
            if case let .entry(entry) = event, entry.operation == .delete { deleted.append(entry.key) }
        }
        defer { watch.dispose() }
        await owner.stop()
        #expect(await deleted.wait(until: { Set($0) == ["scheduler", "mailer"] }))
        let survivor = try #require(nodes.first { $0.node != owner.node })
        #expect(try await survivor.cluster.claims("singletons").claim("scheduler"))
        for node in nodes where node.node != owner.node { await node.stop() }
    }

    @Test("a claim whose owner nobody serves is taken over; one whose owner is a live member is not")
    func takeOverGoneOwner() async throws {
        let nodes = try await startCluster(2)
        let claims = try await nodes[0].cluster.claims("owned")
        let kv = try await nodes[0].cluster.connection.keyValue(claims.bucket)
        // A claim left by a start of some node that is no longer served by anybody.
        try await kv.put("ghostly", Array(ClusterNode(name: "ghost", incarnation: 42).description.utf8))
        #expect(try await claims.owner(of: "ghostly") == nil)
        #expect(try await claims.claim("ghostly"))
        #expect(try await claims.owner(of: "ghostly") == nodes[0].node)
        // A claim of an earlier start of this very node is this node's to take.
        try await kv.put("restarted", Array(ClusterNode(name: nodes[1].node.name, incarnation: nodes[1].node.incarnation &+ 1).description.utf8))
        #expect(try await nodes[1].cluster.claims("owned").claim("restarted"))
        // A live member's claim stays its own.
        try await kv.put("alive", Array(nodes[1].node.description.utf8))
        #expect(try await !claims.claim("alive"))
        #expect(try await claims.owner(of: "alive") == nodes[1].node)
        for node in nodes { await node.stop() }
    }

    @Test("a key taken by another node is told on lost; a release of one's own is not")
    func lostClaims() async throws {
        let nodes = try await startCluster(1)
        let claims = try await nodes[0].cluster.claims("leases")
        let lost = Collector<String>()
        claims.lost.observeValues { lost.append($0) }
        #expect(try await claims.claim("quiet"))
        try await claims.release("quiet")
        #expect(try await claims.claim("leader"))
        let kv = try await nodes[0].cluster.connection.keyValue(claims.bucket)
        try await kv.put("leader", Array(ClusterNode(name: "usurper", incarnation: 7).description.utf8))
        #expect(await lost.wait(until: { $0 == ["leader"] }))
        #expect(!claims.owned.contains("leader"))
        #expect(lost.all == ["leader"])
        for node in nodes { await node.stop() }
    }
}
