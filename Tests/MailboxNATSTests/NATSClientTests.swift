import Foundation
import Mailbox
import MailboxNATS
import NetTestSupport
import NATSTestSupport
import Testing

@Suite("NATS client against a real nats-server", .enabled(if: NATSEnvironment.hasServer, NATSEnvironment.skipReason))
struct NATSClientTests {
    @Test func connect_reportsConnected_andTheServersInfo() async throws {
        let nats = try await connectToTestServer()
        defer { nats.close() }
        #expect(nats.state.value == .connected)
        let info = try #require(nats.serverInfo)
        #expect(info.maxPayload > 0)
        #expect(info.headers == true)
        #expect(nats.connectedServer != nil)
    }

    @Test func publishAndSubscribe_deliversInOrder_withHeadersAndReplySubjects() async throws {
        let nats = try await connectToTestServer()
        defer { nats.close() }
        let subject = uniqueSubject()
        let received = Collector<NATSMessage>()
        try nats.subscribe(to: subject + ".*") { received.append($0) }
        try await nats.flush()
        var headers = NATSHeaders()
        headers.append("one", for: "X-Test")
        headers.append("two", for: "X-Test")
        try nats.publish("plain", to: subject + ".a")
        try nats.publish("with headers", to: subject + ".b", replyTo: "reply.here", headers: headers)
        try nats.publish([], to: subject + ".c")
        #expect(await received.wait(forCount: 3))
        let messages = received.all
        #expect(messages.map(\.string) == ["plain", "with headers", ""])
        #expect(messages.map(\.subject) == [subject + ".a", subject + ".b", subject + ".c"])
        #expect(messages[0].headers == nil)
        #expect(messages[1].headers?.values(for: "x-test") == ["one", "two"])
        #expect(messages[1].replyTo == "reply.here")
    }

    @Test func queueGroup_givesEachMessageToOneMember_andSpreadsTheLoad() async throws {
        let publisher = try await connectToTestServer()
        let first = try await connectToTestServer()
        let second = try await connectToTestServer()
        defer { publisher.close(); first.close(); second.close() }
        let subject = uniqueSubject()
        let received = Collector<(member: Int, text: String)>()
        try first.subscribe(to: subject, queue: "workers") { received.append((1, $0.string)) }
        try second.subscribe(to: subject, queue: "workers") { received.append((2, $0.string)) }
        try await first.flush()
        try await second.flush()
        for index in 0..<1_000 { try publisher.publish("\(index)", to: subject) }
        try await publisher.flush()
        #expect(await received.wait(forCount: 1_000))
        try await first.flush()
        try await second.flush()
        let all = received.all
        #expect(all.count == 1_000)
        #expect(Set(all.map(\.text)).count == 1_000, "a message went to both members")
        let firstShare = all.filter { $0.member == 1 }.count
        #expect(firstShare > 100 && firstShare < 900, "load was not spread: \(firstShare) of 1000 to one member")
    }

    @Test func request_getsTheResponderReply() async throws {
        let server = try await connectToTestServer()
        let client = try await connectToTestServer()
        defer { server.close(); client.close() }
        let subject = uniqueSubject("service")
        try server.subscribe(to: subject) { message in
            try? server.respond(to: message, with: Array("echo: \(message.string)".utf8))
        }
        try await server.flush()
        for index in 0..<50 {
            let reply = try await client.request("hi \(index)", to: subject, timeout: .seconds(10))
            #expect(reply.string == "echo: hi \(index)")
        }
    }

    @Test func requestToNobody_failsAtOnceWithNoResponders() async throws {
        let nats = try await connectToTestServer()
        defer { nats.close() }
        let start = ContinuousClock.now
        do {
            _ = try await nats.request("anyone?", to: uniqueSubject("nobody"), timeout: .seconds(20))
            Issue.record("a request to nobody got a reply")
        } catch {
            #expect(error.code == .noResponders)
        }
        // The 503 comes from the server at once; only a broken client waits for the time-out.
        #expect(ContinuousClock.now - start < .seconds(10))
    }

    @Test func requestWithNoReply_timesOut_andNamesTheSubject() async throws {
        let nats = try await connectToTestServer()
        defer { nats.close() }
        let subject = uniqueSubject("silent")
        try nats.subscribe(to: subject) { _ in }  // receives, never answers
        try await nats.flush()
        do {
            _ = try await nats.request("hello", to: subject, timeout: .milliseconds(200))
            Issue.record("no time-out")
        } catch {
            #expect(error.code == .timedOut)
            #expect(error.text.contains(subject))
        }
    }

    @Test func unsubscribeAfterMax_deliversExactlyMax_thenCompletes() async throws {
        let nats = try await connectToTestServer()
        defer { nats.close() }
        let subject = uniqueSubject()
        let received = Collector<String>()
        let completed = Collector<Bool>()
        let subscription = try nats.subscribe(to: subject)
        subscription.messages.observe { event in
            switch event {
            case .value(let message): received.append(message.string)
            case .completed: completed.append(true)
            case .interrupted: break
            }
        }
        subscription.unsubscribe(after: 3)
        try await nats.flush()
        for index in 0..<10 { try nats.publish("\(index)", to: subject) }
        try await nats.flush()
        #expect(await completed.wait(forCount: 1))
        try await nats.flush()
        #expect(received.all == ["0", "1", "2"])
    }

    @Test func unsubscribe_stopsDelivery_andCompletesTheSignal() async throws {
        let nats = try await connectToTestServer()
        defer { nats.close() }
        let subject = uniqueSubject()
        let received = Collector<String>()
        let subscription = try nats.subscribe(to: subject) { received.append($0.string) }
        try await nats.flush()
        try nats.publish("before", to: subject)
        #expect(await received.wait(forCount: 1))
        subscription.unsubscribe()
        try nats.publish("after", to: subject)
        try await nats.flush()
        try await nats.flush()
        #expect(received.all == ["before"])
    }

    @Test func observerThatPublishesAndUnsubscribesOnTheReadThread_doesNotDeadlock() async throws {
        let nats = try await connectToTestServer()
        defer { nats.close() }
        let subject = uniqueSubject()
        let echoes = Collector<String>()
        try nats.subscribe(to: subject + ".echo") { echoes.append($0.string) }
        let box = Collector<NATSSubscription>()
        let subscription = try nats.subscribe(to: subject) { message in
            // Re-entrance: publish, subscribe and unsubscribe from inside delivery.
            try? nats.publish("re: \(message.string)", to: subject + ".echo")
            _ = try? nats.subscribe(to: subject + ".other")
            box.all.first?.unsubscribe()
        }
        box.append(subscription)
        try await nats.flush()
        try nats.publish("one", to: subject)
        try nats.publish("two", to: subject)
        #expect(await echoes.wait(forCount: 1))
        try await nats.flush()
        #expect(echoes.all == ["re: one"])
    }

    @Test func flush_provesTheServerHasEverything() async throws {
        let publisher = try await connectToTestServer()
        let subscriber = try await connectToTestServer()
        defer { publisher.close(); subscriber.close() }
        let subject = uniqueSubject()
        let received = Collector<Int>()
        try subscriber.subscribe(to: subject) { _ in received.append(1) }
        try await subscriber.flush()
        for _ in 0..<10_000 { try publisher.publish([1, 2, 3], to: subject) }
        try await publisher.flush()
        #expect(await received.wait(forCount: 10_000))
        #expect(publisher.statistics.outMessages >= 10_000)
    }

    @Test func oneMillionMessages_arriveInOrder_noneLost() async throws {
        let publisher = try await connectToTestServer { $0.outboundBufferLimit = 256 * 1024 * 1024 }
        let subscriber = try await connectToTestServer()
        defer { publisher.close(); subscriber.close() }
        let subject = uniqueSubject("million")
        let total = 1_000_000
        let state = LockedCounter()
        let progress = Collector<UInt64>()  // every 50,000th message
        try subscriber.subscribe(to: subject) { message in
            let value = message.payload.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
            if state.next(value) % 50_000 == 0 { progress.append(value) }
        }
        try await subscriber.flush()
        var payload = [UInt8](repeating: 0, count: 16)
        for index in 1...UInt64(total) {
            payload.withUnsafeMutableBytes { $0.storeBytes(of: index, as: UInt64.self) }
            while !(try publishUnlessFull(publisher, payload, subject)) {
                try await publisher.flush(timeout: .seconds(30))  // let the socket catch up
            }
            if index % 50_000 == 0 {
                // At most 100,000 in flight: a subscriber on a loaded machine (a debug build
                // beside a compiler) must not fall 10 s behind, or the server cuts it off as a
                // slow consumer, as NATS should.
                let published = index
                guard await progress.wait(timeout: 60, until: { ($0.last ?? 0) + 100_000 >= published }) else {
                    Issue.record("stalled: received \(state.count) of \(published) published")
                    return
                }
            }
        }
        try await publisher.flush(timeout: .seconds(60))
        // Waits as long as messages keep coming (a loaded machine is slow, not wrong); fails
        // when a minute passes without progress.
        while progress.all.last != UInt64(total) {
            let seen = progress.count
            guard await progress.wait(timeout: 60, until: { $0.count > seen }) else {
                Issue.record("stalled: received \(state.count) of \(total)")
                break
            }
        }
        #expect(state.outOfOrder == 0)
        #expect(state.count == UInt64(total))
    }

    @Test func badCredentials_failWithAuthorizationViolation_andDoNotRetry() async throws {
        // The test server accepts anonymous clients as the app user; a wrong password is refused.
        var url = NATSEnvironment.url!
        url = url.replacingOccurrences(of: "nats://", with: "nats://app:wrong-password@")
        var configuration = NATSConfiguration(url: url)
        configuration.reconnectWait = .milliseconds(50)
        do {
            _ = try await NATSConnection.connect(configuration)
            Issue.record("connected with a wrong password")
        } catch {
            #expect(error.code == .authorizationViolation, "\(error)")
            #expect(error.isFinal)
        }
    }

    @Test func connectToAClosedPort_failsWithTheSocketError() async throws {
        // A listener that is closed at once leaves a port nobody listens on.
        let port = try LoopbackServer().port
        var configuration = NATSConfiguration(url: "nats://127.0.0.1:\(port)")
        configuration.connectTimeout = .seconds(5)
        do {
            _ = try await NATSConnection.connect(configuration)
            Issue.record("connected to a closed port")
        } catch {
            #expect(error.code == .noServers, "\(error)")
            #expect(error.text.contains("refused") || error.text.contains("ECONNREFUSED") || error.text.contains("errno 111"), "\(error)")
        }
    }

    @Test func closing_completesSubscriptions_failsPublish_andAnnouncesClosed() async throws {
        let nats = try await connectToTestServer()
        let subject = uniqueSubject()
        let completed = Collector<Bool>()
        let events = Collector<String>()
        nats.events.observeValues { events.append("\($0)") }
        try nats.subscribe(to: subject).messages.observeCompleted { completed.append(true) }
        nats.close()
        nats.close()
        #expect(await completed.wait(forCount: 1))
        await nats.closed()
        #expect(nats.state.value == .closed)
        #expect(throws: NATSError.self) { try nats.publish("late", to: subject) }
        do {
            try await nats.flush()
            Issue.record("flush after close succeeded")
        } catch {
            #expect(error.code == .connectionClosed)
        }
        #expect(await events.wait(forCount: 1))
        #expect(events.all.last?.hasPrefix("closed") == true)
    }

    @Test func publishedBeforeClose_isDeliveredAfterwards() async throws {
        let publisher = try await connectToTestServer()
        let subscriber = try await connectToTestServer()
        defer { subscriber.close() }
        let subject = uniqueSubject()
        let received = Collector<Int>()
        try subscriber.subscribe(to: subject) { _ in received.append(1) }
        try await subscriber.flush()
        for _ in 0..<1_000 { try publisher.publish([0], to: subject) }
        publisher.close()  // flushes what was published, then closes
        #expect(await received.wait(forCount: 1_000))
    }

    @Test func invalidSubjects_andOversizedPayloads_areRefusedWithClearErrors() async throws {
        let nats = try await connectToTestServer()
        defer { nats.close() }
        #expect(throws: NATSError(.invalidSubject, "\"a b\"")) { try nats.publish("x", to: "a b") }
        #expect(throws: NATSError.self) { _ = try nats.subscribe(to: "") }
        #expect(throws: NATSError.self) { _ = try nats.subscribe(to: "ok", queue: "bad queue") }
        let maxPayload = try #require(nats.serverInfo).maxPayload
        do {
            try nats.publish([UInt8](repeating: 0, count: maxPayload + 1), to: "big")
            Issue.record("an oversized payload was accepted")
        } catch {
            #expect(error.code == .maxPayloadExceeded)
        }
        try await nats.flush()  // the connection is still fine
    }

    @Test func subscriptionDeliveredToAnActor_tellsEachMessage_andDropsWhatABoundedMailboxRefuses() async throws {
        let nats = try await connectToTestServer()
        defer { nats.close() }
        let system = ActorSystem(name: "nats-actor")
        let received = Collector<String>()
        let gate = DispatchSemaphore(value: 0)
        let actor = try system.spawn(Behavior<String>.receiveMessage { text in
            if text == "block" { gate.wait() }
            received.append(text)
            return .same
        }, name: "sink", props: Props(mailbox: .bounded(capacity: 10, overflow: .dropNewest)))
        let subject = uniqueSubject()
        let subscription = try nats.subscribe(to: subject)
        subscription.deliver(to: actor) { $0.string }
        try await nats.flush()
        try nats.publish("first", to: subject)
        #expect(await received.wait(forCount: 1))
        // Block the actor, then send more than its mailbox holds.
        try nats.publish("block", to: subject)
        for index in 0..<100 { try nats.publish("\(index)", to: subject) }
        // The server sends our own messages back before the PONG, and the connection tells
        // the actor before it completes the flush: every message has been told or dropped now.
        try await nats.flush()
        let drops = Int(nats.statistics.slowConsumerDrops)
        gate.signal()
        #expect(drops >= 100 - 10, "a mailbox of 10 took \(101 - drops) of 101")
        #expect(await received.wait(forCount: 1 + 101 - drops))
        try await nats.flush()
        #expect(received.count == 1 + 101 - drops)
        #expect(received.all.first == "first")
        #expect(received.all.dropFirst().first == "block")
        _ = await system.terminate()
    }
}

/// Publishes; false when the outbound buffer is full (the caller waits and tries again).
private func publishUnlessFull(_ connection: NATSConnection, _ payload: [UInt8], _ subject: String) throws -> Bool {
    let result = Result { () throws(NATSError) in try connection.publish(payload, to: subject) }
    switch result {
    case .success: return true
    case .failure(let error) where error.code == .outboundBufferExceeded: return false
    case .failure(let error): throw error
    }
}

/// Counts in-order sequence numbers from one thread at a time (the read thread).
// Safe: every field is read and written only with `lock` held.
final class LockedCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var expected: UInt64 = 1
    private var _outOfOrder = 0

    /// Records `value`; returns the count so far.
    func next(_ value: UInt64) -> UInt64 {
        lock.lock()
        defer { lock.unlock() }
        if value != expected { _outOfOrder += 1 }
        expected = value + 1
        return value
    }

    var count: UInt64 {
        lock.lock()
        defer { lock.unlock() }
        return expected - 1
    }

    var outOfOrder: Int {
        lock.lock()
        defer { lock.unlock() }
        return _outOfOrder
    }
}
