import Foundation
import MailboxNATS
import NetTestSupport
import NATSTestSupport
import Testing

/// Our client beside an independent one (nats-py, from PyPI): each side publishes, subscribes
/// and answers requests for the other, through the same real server.
@Suite("NATS interop with nats-py", .enabled(if: NATSEnvironment.hasServer && NATSEnvironment.python != nil && NATSEnvironment.peerScript != nil,
                                             "MAILBOX_NATS_PY/MAILBOX_NATS_PEER are not set: run `bash Tests/Integration/nats.sh` (it makes the nats-py venv)"))
struct NATSInteropTests {
    private func peer(_ arguments: [String]) throws -> PeerProcess {
        try PeerProcess(NATSEnvironment.python!, [NATSEnvironment.peerScript!] + arguments + ["--url", NATSEnvironment.url!])
    }

    @Test func pythonPublishes_weReceiveEveryMessageWithItsHeaders() async throws {
        let nats = try await connectToTestServer()
        defer { nats.close() }
        let subject = uniqueSubject("interop")
        let received = Collector<NATSMessage>()
        try nats.subscribe(to: subject) { received.append($0) }
        try await nats.flush()
        let python = try peer(["publish", subject, "200"])
        #expect(await python.waitFor("done"))
        #expect(python.finish() == 0)
        #expect(await received.wait(forCount: 200))
        #expect(received.all.map(\.string) == (0..<200).map { "msg-\($0)" })
        #expect(received.all.allSatisfy { $0.headers?["X-From"] == "py" })
    }

    @Test func wePublish_pythonReceivesEveryMessage() async throws {
        let nats = try await connectToTestServer()
        defer { nats.close() }
        let subject = uniqueSubject("interop")
        let python = try peer(["subscribe", subject, "100"])
        #expect(await python.waitFor("ready"))
        for index in 0..<100 { try nats.publish("swift-\(index)", to: subject) }
        try await nats.flush()
        #expect(await python.waitFor("done"))
        #expect(python.finish() == 0)
        #expect(Array(python.lines.all.filter { $0.hasPrefix("swift-") }) == (0..<100).map { "swift-\($0)" })
    }

    @Test func weRequest_pythonAnswers_withOurHeadersEchoed() async throws {
        let nats = try await connectToTestServer()
        defer { nats.close() }
        let subject = uniqueSubject("interop.service")
        let python = try peer(["echo", subject, "--count", "20"])
        #expect(await python.waitFor("ready"))
        var headers = NATSHeaders()
        headers.append("42", for: "X-Request")
        for index in 0..<20 {
            let reply = try await nats.request("q\(index)", to: subject, headers: headers, timeout: .seconds(10))
            #expect(reply.string == "py:q\(index)")
            #expect(reply.headers?["X-Request"] == "42")
        }
        #expect(python.finish() == 0)
    }

    @Test func pythonRequests_weAnswer() async throws {
        let nats = try await connectToTestServer()
        defer { nats.close() }
        let subject = uniqueSubject("interop.swift")
        try nats.subscribe(to: subject) { message in
            try? nats.respond(to: message, with: Array("swift:\(message.string)".utf8))
        }
        try await nats.flush()
        let python = try peer(["request", subject, "hello", "--timeout", "30"])
        #expect(python.finish() == 0)
        #expect(python.lines.all.contains("swift:hello"), "\(python.lines.all)")
    }
}
