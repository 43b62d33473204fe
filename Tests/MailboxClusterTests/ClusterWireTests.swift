@testable import MailboxCluster
import Mailbox
import NetTestSupport
import Testing

@Suite("Cluster: wire frames")
struct ClusterWireTests {
    static let from = ClusterNode(name: "node-a", incarnation: 0xDEAD_BEEF_0123_4567)
    static let actor = _WireActor(path: "/user/worker", incarnation: 42)

    static let frames: [_Frame] = [
        .message(recipient: actor, manifest: "Job@2", payload: [1, 2, 3, 0, 255][...]),
        .message(recipient: actor, manifest: "", payload: [][...]),
        .watch(watched: actor, watcher: _WireActor(path: "/", incarnation: 0)),
        .unwatch(watched: actor, watcher: _WireActor(path: "/user/w", incarnation: 7)),
        .terminated(actor: actor, failure: nil),
        .terminated(actor: actor, failure: "boom: ünïcode"),
        .ack(sequence: 1 << 40), .probe(sequence: 12), .ping, .downed, .leaving, .registryRequest,
        .heartbeat(status: .up, system: "shop", registryVersion: 9),
        .heartbeat(status: .leaving, system: "", registryVersion: 0),
        .registry(version: 3, system: "shop", entries: [_RegistryEntry(key: "workers", actor: actor), _RegistryEntry(key: "", actor: actor)]),
        .registry(version: 0, system: "shop", entries: []),
        .call(actor: actor, target: "$s4main7GreeterC5greetyS2SYaKFTE", generics: ["Si", "SS"], arguments: [[1, 2][...], [][...]]),
        .call(actor: actor, target: "", generics: [], arguments: []),
        .queued(key: "workers", manifest: "Job@1", payload: [9, 8, 7][...]),
        .watchSync(actors: [actor, _WireActor(path: "/user/w", incarnation: 7)]), .watchSync(actors: []), .watchSyncRequest,
    ]

    @Test("every frame kind survives encoding, with its sender and sequence number")
    func roundTrip() throws {
        for (index, frame) in Self.frames.enumerated() {
            let envelope = _Envelope(from: Self.from, sequence: UInt64(index) * 1_000_003, frame: frame)
            #expect(try _Envelope.decode(envelope.encoded()) == envelope)
        }
    }

    @Test("a message framed from its cached header is the envelope the encoder writes")
    func messageHeader() throws {
        let header = _MessageHeader(from: Self.from, recipient: Self.actor, manifest: "Job@2")
        for payload in [[], [1, 2, 3], [UInt8](repeating: 7, count: 300)] as [[UInt8]] {
            let full = _Envelope(from: Self.from, sequence: 0, frame: .message(recipient: Self.actor, manifest: "Job@2", payload: payload[...]))
            #expect(header.frame(payload) == full.encoded())
        }
    }

    @Test("the sequence number is patched in place where the link expects it")
    func sequencePatch() throws {
        var bytes = _Envelope(from: Self.from, sequence: 0, frame: Self.frames[0]).encoded()
        _Envelope.patchSequence(0x0102_0304_0506_0708, into: &bytes, at: _Envelope.sequenceOffset(from: Self.from))
        #expect(try _Envelope.decode(bytes).sequence == 0x0102_0304_0506_0708)
    }

    @Test("every truncation of every frame is an error, never a crash")
    func truncations() {
        for frame in Self.frames {
            let bytes = _Envelope(from: Self.from, sequence: 5, frame: frame).encoded()
            for length in 0..<bytes.count {
                #expect(throws: ClusterWireError.self) { try _Envelope.decode(Array(bytes[..<length])) }
            }
            #expect(throws: ClusterWireError.self) { try _Envelope.decode(bytes + [0]) }
        }
    }

    @Test("random bytes and random corruptions are errors or valid frames, never a crash")
    func fuzz() {
        var generator = SeededGenerator(seed: 0xC1A5_7E12)
        for round in 0..<20_000 {
            var bytes: [UInt8]
            if round % 2 == 0 {
                bytes = _Envelope(from: Self.from, sequence: 1, frame: Self.frames[round / 2 % Self.frames.count]).encoded()
                for _ in 0..<Int.random(in: 1...4, using: &generator) {
                    bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
                }
            } else {
                bytes = (0..<Int.random(in: 0...64, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
                if bytes.count > 2 {
                    bytes[0] = _Envelope.magic
                    bytes[1] = _Envelope.version
                }
            }
            if let envelope = try? _Envelope.decode(bytes) {
                // Whatever parses encodes back to the same bytes.
                #expect(envelope.encoded() == bytes)
            }
        }
    }

    @Test("a registry that claims more entries than its bytes could hold is refused before allocating")
    func lyingCount() {
        var writer = _ByteWriter()
        writer.u8(_Envelope.magic)
        writer.u8(_Envelope.version)
        writer.u8(11)
        writer.string("n")
        writer.u64(1)
        writer.u64(0)
        writer.u64(1)
        writer.string("s")
        writer.u32(UInt32.max)
        #expect(throws: ClusterWireError.self) { try _Envelope.decode(writer.bytes) }
    }

    @Test("addresses print and parse back, node included")
    func addressText() throws {
        let address = ActorAddress(node: Self.from, system: "shop", path: "/user/a/b", incarnation: 99)
        #expect(address.description == "mailbox://shop@node-a:deadbeef01234567/user/a/b#99")
        #expect(_RefCoding.parse(address.description) == address)
        #expect(_RefCoding.parse("mailbox://shop/user/a#1") == nil)
        #expect(_RefCoding.parse("nonsense") == nil)
        #expect(_RefCoding.parse("mailbox://shop@n:zz/user#1") == nil)
    }
}
