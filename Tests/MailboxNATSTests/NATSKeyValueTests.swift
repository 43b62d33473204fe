import Foundation
import Mailbox
import MailboxNATS
import NetTestSupport
import NATSTestSupport
import Testing

/// A bucket name no other test uses.
private func uniqueBucket() -> String { "test_\(UInt32.random(in: 0...UInt32.max))" }

@Suite("NATS JetStream key/value against a real nats-server", .enabled(if: NATSEnvironment.hasServer, NATSEnvironment.skipReason))
struct NATSKeyValueTests {
    @Test func putGetCreateUpdateDeletePurge_behaveAsKeyValueClientsExpect() async throws {
        let nats = try await connectToTestServer()
        defer { nats.close() }
        let kv = try await nats.createKeyValue(NATSKeyValueConfiguration(bucket: uniqueBucket()))
        #expect(try await kv.get("missing") == nil)

        let first = try await kv.create("owner.node", Array("a".utf8))
        let entry = try #require(try await kv.get("owner.node"))
        #expect(entry.string == "a")
        #expect(entry.revision == first)
        #expect(entry.operation == .put)
        do {
            try await kv.create("owner.node", Array("b".utf8))
            Issue.record("create over an existing value succeeded")
        } catch {
            #expect(error.code == .keyExists)
        }

        let second = try await kv.update("owner.node", Array("b".utf8), expectedRevision: first)
        #expect(second > first)
        do {
            try await kv.update("owner.node", Array("c".utf8), expectedRevision: first)
            Issue.record("update from a stale revision succeeded")
        } catch {
            #expect(error.code == .wrongLastRevision)
            #expect(error.jetStreamCode == 10071)
        }
        #expect(try await kv.get("owner.node")?.string == "b")

        try await kv.delete("owner.node")
        #expect(try await kv.get("owner.node") == nil)
        // A deleted key can be created again.
        let recreated = try await kv.create("owner.node", Array("d".utf8))
        #expect(try await kv.get("owner.node")?.revision == recreated)

        try await kv.purge("owner.node")
        #expect(try await kv.get("owner.node") == nil)
        try await kv.put("owner.node", Array("e".utf8))
        #expect(try await kv.get("owner.node")?.string == "e")

        // The same bucket is found again by name.
        let again = try await nats.keyValue(kv.bucket)
        #expect(try await again.get("owner.node")?.string == "e")
        try await nats.deleteKeyValue(kv.bucket)
    }

    @Test func compareAndSetRaces_betweenTwoConnections_haveExactlyOneWinner() async throws {
        let a = try await connectToTestServer()
        let b = try await connectToTestServer()
        defer { a.close(); b.close() }
        let bucket = uniqueBucket()
        let kvA = try await a.createKeyValue(NATSKeyValueConfiguration(bucket: bucket))
        let kvB = try await b.keyValue(bucket)
        for round in 0..<25 {
            // Both create the same key at once: one wins.
            async let createA = outcome { try await kvA.create("claim.\(round)", Array("A".utf8)) }
            async let createB = outcome { try await kvB.create("claim.\(round)", Array("B".utf8)) }
            let creates = await [createA, createB]
            #expect(creates.filter { $0 == nil }.count == 1, "round \(round): \(creates)")
            #expect(creates.compactMap { $0 }.allSatisfy { $0 == .keyExists }, "\(creates)")

            // Both update from the same revision: one wins.
            let revision = try #require(try await kvA.get("claim.\(round)")).revision
            async let updateA = outcome { try await kvA.update("claim.\(round)", Array("A2".utf8), expectedRevision: revision) }
            async let updateB = outcome { try await kvB.update("claim.\(round)", Array("B2".utf8), expectedRevision: revision) }
            let updates = await [updateA, updateB]
            #expect(updates.filter { $0 == nil }.count == 1, "round \(round): \(updates)")
            #expect(updates.compactMap { $0 }.allSatisfy { $0 == .wrongLastRevision }, "\(updates)")
        }
        try await a.deleteKeyValue(bucket)
    }

    @Test func watch_sendsTheLatestValues_thenUpToDate_thenEveryChangeInOrder() async throws {
        let nats = try await connectToTestServer()
        defer { nats.close() }
        let kv = try await nats.createKeyValue(NATSKeyValueConfiguration(bucket: uniqueBucket()))
        try await kv.put("nodes.a", Array("1".utf8))
        try await kv.put("nodes.a", Array("2".utf8))  // only the latest is sent at the start
        try await kv.put("nodes.b", Array("1".utf8))
        try await kv.put("other.x", Array("1".utf8))  // outside the pattern

        let events = Collector<String>()
        let run = kv.watch("nodes.>").start { event in
            switch event {
            case .value(.entry(let entry)): events.append("\(entry.operation.rawValue) \(entry.key)=\(entry.string)")
            case .value(.upToDate): events.append("up to date")
            case .failed(let error): events.append("failed \(error)")
            case .completed, .interrupted: events.append("ended")
            }
        }
        #expect(await events.wait { $0.contains("up to date") }, "\(events.all)")
        #expect(events.all == ["put nodes.a=2", "put nodes.b=1", "up to date"])

        try await kv.put("nodes.c", Array("1".utf8))
        try await kv.delete("nodes.a")
        try await kv.put("other.y", Array("1".utf8))
        try await kv.purge("nodes.b")
        #expect(await events.wait(forCount: 6), "\(events.all)")
        #expect(events.all.dropFirst(3) == ["put nodes.c=1", "delete nodes.a=", "purge nodes.b="])
        run.dispose()  // interrupts the run
        try await kv.put("nodes.d", Array("1".utf8))
        try await nats.flush()
        #expect(events.all.dropFirst(6) == ["ended"])
        try await nats.deleteKeyValue(kv.bucket)
    }

    @Test func watchOfAnEmptyBucket_isUpToDateAtOnce() async throws {
        let nats = try await connectToTestServer()
        defer { nats.close() }
        let kv = try await nats.createKeyValue(NATSKeyValueConfiguration(bucket: uniqueBucket()))
        let events = Collector<NATSKeyValueWatchEvent>()
        let run = kv.watch().startWithValues { events.append($0) }
        #expect(await events.wait(forCount: 1))
        #expect(events.all == [.upToDate])
        try await kv.put("k", Array("v".utf8))
        #expect(await events.wait(forCount: 2))
        run.dispose()
        try await nats.deleteKeyValue(kv.bucket)
    }

    @Test func aMissingBucket_andBadKeys_failClearly() async throws {
        let nats = try await connectToTestServer()
        defer { nats.close() }
        do {
            _ = try await nats.keyValue("no_such_bucket_\(UInt32.random(in: 0...UInt32.max))")
            Issue.record("found a bucket that does not exist")
        } catch {
            #expect(error.code == .jetStream)
            #expect(error.jetStreamCode == 10059, "\(error)")
        }
        let kv = try await nats.createKeyValue(NATSKeyValueConfiguration(bucket: uniqueBucket()))
        for bad in ["", "a b", "a.*", "a.>", "a..b"] {
            do {
                try await kv.put(bad, [1])
                Issue.record("put to \(bad.debugDescription) succeeded")
            } catch {
                #expect(error.code == .invalidSubject)
            }
        }
        try await nats.deleteKeyValue(kv.bucket)
    }

    @Test func keyValueWithoutJetStream_failsWithAClearError() async throws {
        let server = try OwnServer(jetStream: false)
        let nats = try await NATSConnection.connect(NATSConfiguration(url: server.url))
        defer { nats.close() }
        do {
            _ = try await nats.createKeyValue(NATSKeyValueConfiguration(bucket: "b"))
            Issue.record("a bucket without JetStream")
        } catch {
            #expect(error.code == .jetStream)
            #expect(error.text.contains("JetStream is not enabled"), "\(error)")
        }
    }
}

/// Runs `body`; nil when it succeeds, its error code when it fails.
private func outcome(_ body: () async throws -> UInt64) async -> NATSError.Code? {
    do {
        _ = try await body()
        return nil
    } catch {
        return (error as? NATSError)?.code ?? .serverError
    }
}
