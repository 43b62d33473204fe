import Foundation
import NetTestSupport
import NATSTestSupport
import Testing
@testable import MailboxNATS

/// A frame reduced to something comparable.
private enum Seen: Equatable {
    case info(String)
    case message(subject: String, sid: UInt64, replyTo: String?, headers: NATSHeaders?, payload: [UInt8])
    case ping, pong, ok
    case error(String)

    init(_ frame: NATSServerFrame) {
        switch frame {
        case .info(let json): self = .info(String(decoding: json, as: UTF8.self))
        case .message(let sid, let m): self = .message(subject: m.subject, sid: sid, replyTo: m.replyTo, headers: m.headers, payload: m.payload)
        case .ping: self = .ping
        case .pong: self = .pong
        case .ok: self = .ok
        case .error(let text): self = .error(text)
        }
    }
}

private func parseAll(_ chunks: [[UInt8]], parser: inout NATSProtocolParser) throws(NATSProtocolError) -> [Seen] {
    var seen: [Seen] = []
    for chunk in chunks { try parser.parse(chunk) { seen.append(Seen($0)) } }
    return seen
}

private func parseAll(_ chunks: [[UInt8]]) throws(NATSProtocolError) -> [Seen] {
    var parser = NATSProtocolParser()
    return try parseAll(chunks, parser: &parser)
}

/// Every kind of frame nats-server sends, in one stream.
private let sample = Array((
    "INFO {\"server_id\":\"X\",\"version\":\"2.9.25\",\"max_payload\":1048576,\"headers\":true}\r\n"
        + "PING\r\n+OK\r\nPONG\r\n"
        + "MSG foo.bar 9 5\r\nhello\r\n"
        + "MSG foo.bar 9 _INBOX.abc.1 0\r\n\r\n"
        + "HMSG a.b 2 22 27\r\nNATS/1.0\r\nX-A: 1 2\r\n\r\nhello\r\n"
        + "HMSG _INBOX.x.1 3 16 16\r\nNATS/1.0 503\r\n\r\n\r\n"
        + "msg lower 1 3\r\n\r\n\n\r\n"
        + "-ERR 'Permissions Violation for Publish to \"x\"'\r\n"
).utf8)

private let expected: [Seen] = [
    .info("{\"server_id\":\"X\",\"version\":\"2.9.25\",\"max_payload\":1048576,\"headers\":true}"),
    .ping, .ok, .pong,
    .message(subject: "foo.bar", sid: 9, replyTo: nil, headers: nil, payload: Array("hello".utf8)),
    .message(subject: "foo.bar", sid: 9, replyTo: "_INBOX.abc.1", headers: nil, payload: []),
    .message(subject: "a.b", sid: 2, replyTo: nil, headers: NATSHeaders([("X-A", "1 2")]), payload: Array("hello".utf8)),
    .message(subject: "_INBOX.x.1", sid: 3, replyTo: nil, headers: { var h = NATSHeaders(); h.status = 503; return h }(), payload: []),
    .message(subject: "lower", sid: 1, replyTo: nil, headers: nil, payload: [13, 10, 10]),
    .error("Permissions Violation for Publish to \"x\""),
]

@Suite("NATS protocol parser")
struct NATSProtocolParserTests {
    @Test func wholeStream_yieldsEveryFrameInOrder() throws {
        #expect(try parseAll([sample]) == expected)
    }

    @Test func everySplitIntoTwo_yieldsTheSameFrames() throws {
        for cut in 0...sample.count {
            let frames = try parseAll([Array(sample[..<cut]), Array(sample[cut...])])
            #expect(frames == expected, "split at \(cut)")
        }
    }

    @Test func oneByteAtATime_yieldsTheSameFrames() throws {
        #expect(try parseAll(sample.map { [$0] }) == expected)
    }

    @Test func seededRandomSplits_yieldTheSameFrames() throws {
        var generator = SeededGenerator.fromEnvironment("NATS parser random splits")
        for _ in 0..<2_000 {
            var chunks: [[UInt8]] = []
            var index = 0
            while index < sample.count {
                let length = Int.random(in: 1...max(1, sample.count / 3), using: &generator)
                let end = min(sample.count, index + length)
                chunks.append(Array(sample[index..<end]))
                index = end
            }
            #expect(try parseAll(chunks) == expected)
        }
    }

    @Test func seededRandomBytes_neverCrash_andFailWithAProtocolError() {
        var generator = SeededGenerator.fromEnvironment("NATS parser random bytes")
        let alphabet = Array("MSGHPINOKERF+- 0123456789\r\n.abc'".utf8)
        var failures = 0
        for round in 0..<5_000 {
            var parser = NATSProtocolParser(maxControlLine: 256, maxPayload: 4_096)
            let length = Int.random(in: 1...200, using: &generator)
            let bytes = (0..<length).map { _ in
                round % 2 == 0 ? UInt8.random(in: 0...255, using: &generator) : alphabet.randomElement(using: &generator)!
            }
            do {
                var index = 0
                while index < bytes.count {
                    let end = min(bytes.count, index + Int.random(in: 1...16, using: &generator))
                    try parser.parse(Array(bytes[index..<end])) { _ in }
                    index = end
                }
            } catch {
                failures += 1
                #expect(!error.reason.isEmpty)
                // Failed for good: any further input throws again.
                #expect(throws: NATSProtocolError.self) { try parser.parse(Array("PING\r\n".utf8)) { _ in } }
            }
        }
        #expect(failures > 2_000, "random bytes should mostly be rejected, \(failures) were")
    }

    @Test(arguments: [
        ("FOO bar\r\n", "unknown operation"),
        ("MSG a\r\n", "MSG with 1 arguments"),
        ("MSG a 1 x\r\n", "MSG size"),
        ("MSG a b 1\r\nx\r\n", "subscription id"),
        ("HMSG a 1 10 5\r\n", "header size 10 > total 5"),
        ("MSG a 1 3\r\nabcXY", "not followed by CR LF"),
        ("HMSG a 1 12 12\r\nHTTP/1.1\r\n\r\n\r\n", "does not start with NATS/1.0"),
        ("MSG a 1 99999999999\r\n", "exceeds"),
        ("\r\n", "empty control line"),
        ("INFO\r\n", "INFO without a body"),
    ])
    func malformedFrames_areTypedErrorsThatSayWhy(input: String, reason: String) {
        var parser = NATSProtocolParser(maxControlLine: 1024, maxPayload: 1 << 20)
        do {
            try parser.parse(Array(input.utf8)) { _ in }
            Issue.record("no error for \(input.debugDescription)")
        } catch {
            #expect(error.reason.contains(reason), "\(error.reason)")
        }
    }

    @Test func controlLineOverTheLimit_isAnError_evenWhenSplit() {
        var parser = NATSProtocolParser(maxControlLine: 64, maxPayload: 1024)
        let line = Array(("INFO {" + String(repeating: "x", count: 100) + "}").utf8)
        #expect(throws: NATSProtocolError.self) {
            for byte in line { try parser.parse([byte]) { _ in } }
        }
    }

    @Test func largePayload_arrivesWhole_andIsNotReallocatedWhileFilled() throws {
        let payload = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        var stream = Array("MSG big 1 \(payload.count)\r\n".utf8) + payload + Array("\r\n".utf8)
        stream += Array("PING\r\n".utf8)
        var chunks: [[UInt8]] = []
        var index = 0
        while index < stream.count {
            chunks.append(Array(stream[index..<min(stream.count, index + 16_384)]))
            index += 16_384
        }
        let frames = try parseAll(chunks)
        #expect(frames == [.message(subject: "big", sid: 1, replyTo: nil, headers: nil, payload: payload), .ping])
    }
}

@Suite("NATS frames, headers and server URLs")
struct NATSFramesTests {
    @Test func publishFrames_matchTheProtocol() {
        var buffer: [UInt8] = []
        NATSFrames.appendPublish(to: &buffer, subject: "a.b", replyTo: nil, headers: nil, payload: Array("hi".utf8))
        NATSFrames.appendPublish(to: &buffer, subject: "a.b", replyTo: "r.1", headers: nil, payload: [])
        var headers = NATSHeaders()
        headers.append("v", for: "Key")
        NATSFrames.appendPublish(to: &buffer, subject: "s", replyTo: "r", headers: headers, payload: Array("xyz".utf8))
        NATSFrames.appendSubscribe(to: &buffer, subject: "a.*", queue: "workers", sid: 12)
        NATSFrames.appendUnsubscribe(to: &buffer, sid: 12, max: 1_000_000)
        #expect(String(decoding: buffer, as: UTF8.self) ==
            "PUB a.b 2\r\nhi\r\nPUB a.b r.1 0\r\n\r\nHPUB s r 20 23\r\nNATS/1.0\r\nKey: v\r\n\r\nxyz\r\n"
            + "SUB a.* workers 12\r\nUNSUB 12 1000000\r\n")
        #expect(headers.encodedCount == 20)
    }

    @Test func headers_roundTrip_andLookUpNamesCaseInsensitively() throws {
        var headers = NATSHeaders()
        headers.append("1", for: "Nats-Expected-Last-Subject-Sequence")
        headers.append("a", for: "X-Multi")
        headers.append("b", for: "x-multi")
        var wire: [UInt8] = []
        headers.encode(into: &wire)
        let parsed = try NATSHeaders(parsing: wire[...])
        #expect(parsed == headers)
        #expect(parsed["nats-expected-last-subject-sequence"] == "1")
        #expect(parsed.values(for: "X-MULTI") == ["a", "b"])
        var status = try NATSHeaders(parsing: Array("NATS/1.0 100 Idle Heartbeat\r\nNats-Last-Consumer: 5\r\n\r\n".utf8)[...])
        #expect(status.status == 100)
        #expect(status.statusDescription == "Idle Heartbeat")
        #expect(status["Nats-Last-Consumer"] == "5")
        status["Nats-Last-Consumer"] = nil
        #expect(status.fields.isEmpty)
    }

    @Test func subjects_areValidated() {
        for good in ["a", "a.b", "a.*", "a.>", "_INBOX.x.1", "$KV.b.k"] { #expect(NATSFrames.isValidSubject(good), "\(good)") }
        for bad in ["", "a b", "a\tb", "a..b", ".a", "a.", "a\r\n"] { #expect(!NATSFrames.isValidSubject(bad), "\(bad.debugDescription)") }
    }

    @Test func serverURLs_areRead() {
        let full = NATSServerAddress("nats://user:p%40ss@127.0.0.1:4333")
        #expect(full?.host == "127.0.0.1")
        #expect(full?.port == 4333)
        #expect(full?.user == "user")
        #expect(full?.password == "p@ss")
        #expect(NATSServerAddress("localhost")?.port == 4222)
        #expect(NATSServerAddress("nats://[::1]:5000")?.host == "::1")
        #expect(NATSServerAddress("nats://[::1]:5000")?.port == 5000)
        #expect(NATSServerAddress("nats://s3cr3t@h:1")?.token == "s3cr3t")
        #expect(NATSServerAddress("http://h:1") == nil)
        #expect(NATSServerAddress("nats://h:notaport") == nil)
        #expect(NATSServerAddress("nats://:4222") == nil)
    }

    @Test func serverErrors_becomeTypedErrors() {
        #expect(NATSError.fromServer("Authorization Violation").code == .authorizationViolation)
        #expect(NATSError.fromServer("Authorization Violation").isFinal)
        #expect(NATSError.fromServer("Permissions Violation for Subscription to \"x\"").code == .permissionsViolation)
        #expect(NATSError.fromServer("Slow Consumer").code == .slowConsumer)
        #expect(NATSError.fromServer("Maximum Payload Violation").code == .maxPayloadExceeded)
        #expect(NATSError.fromServer("Authentication Timeout").code == .timedOut)
        #expect(!NATSError.fromServer("Authentication Timeout").isFinal)
        #expect(NATSError.fromServer("Stale Connection").code == .serverError)
        #expect(!NATSError.fromServer("Stale Connection").isFinal)
    }
}
