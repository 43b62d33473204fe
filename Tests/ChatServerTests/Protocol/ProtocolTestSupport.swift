import ChatServerCore
import Foundation

/// Small helpers shared by the protocol tests (namespaced so that other test folders of this
/// target cannot collide with them).
enum ProtocolTestSupport {
    /// Parses `line` (a String, given as its UTF-8 bytes).
    static func parse(_ line: String) throws(IRCParseError) -> IRCMessage {
        try IRCMessage(parsing: Array(line.utf8))
    }

    /// The wire form of `message` as text (CRLF included).
    static func wire(_ message: IRCMessage) -> String {
        String(decoding: message.serialized(), as: UTF8.self)
    }

    /// Feeds `chunks` to a fresh framer and returns everything it emitted.
    static func frame(_ chunks: [[UInt8]], maxLineBytes: Int = 512, maxDiscardBytes: Int = 64 * 1024) -> [LineFramer.Output] {
        var framer = LineFramer(maxLineBytes: maxLineBytes, maxDiscardBytes: maxDiscardBytes)
        var outputs: [LineFramer.Output] = []
        for chunk in chunks {
            framer.append(chunk) { outputs.append($0) }
        }
        return outputs
    }

    /// Whether `bytes` contain CR, LF or NUL.
    static func hasControl(_ bytes: ArraySlice<UInt8>) -> Bool {
        bytes.contains { $0 == 13 || $0 == 10 || $0 == 0 }
    }

    /// The seed for a randomised test: `MAILBOX_SEED` if set (to replay a failure), else a fresh
    /// random one; printed either way with the command that replays it.
    static func seed(for test: String) -> UInt64 {
        let seed = ProcessInfo.processInfo.environment["MAILBOX_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 0 ... .max)
        print("\(test) seed: \(seed) (replay: MAILBOX_SEED=\(seed) swift test --filter ChatServerTests)")
        return seed
    }
}
