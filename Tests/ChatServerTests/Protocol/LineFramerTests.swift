import ChatServerCore
import Testing

@Suite("LineFramer")
struct LineFramerTests {
    typealias Support = ProtocolTestSupport

    static func line(_ text: String) -> LineFramer.Output { .line(Array(text.utf8)) }

    /// A stream with every terminator, empty lines, a too-long line and multi-byte text.
    static let mixedStream: [UInt8] = Array("PING a\r\nNICK b\nUSER c\rJOIN #d\r\n\r\n\n\r\n\rPRIVMSG #d :héllo 😀\r\n".utf8)
        + Array(repeating: UInt8(ascii: "x"), count: 530) + Array("\r\nQUIT :bye\n".utf8)

    static let mixedExpected: [LineFramer.Output] = [
        line("PING a"), line("NICK b"), line("USER c"), line("JOIN #d"), line("PRIVMSG #d :héllo 😀"),
        .tooLong, line("QUIT :bye"),
    ]

    @Test func crlfLfAndBareCr_eachEndALine() {
        #expect(Support.frame([Array("A\r\nB\nC\rD\r\n".utf8)]) == [Self.line("A"), Self.line("B"), Self.line("C"), Self.line("D")])
    }

    @Test func emptyLines_areNeverReported() {
        #expect(Support.frame([Array("\r\n\r\n\n\n\r\r\n\r".utf8)]).isEmpty)
        #expect(Support.frame([Array("\n\rX\n\r".utf8)]) == [Self.line("X")])
    }

    @Test func unterminatedLine_staysBufferedUntilItsTerminator() {
        var framer = LineFramer()
        var outputs: [LineFramer.Output] = []
        framer.append(Array("PRIVMSG #a :hel".utf8)) { outputs.append($0) }
        #expect(outputs.isEmpty)
        #expect(framer.bufferedByteCount == 15)
        framer.append(Array("lo".utf8)) { outputs.append($0) }
        framer.append(Array("\r".utf8)) { outputs.append($0) }
        #expect(outputs == [Self.line("PRIVMSG #a :hello")])
        #expect(framer.bufferedByteCount == 0)
        framer.append(Array("\n".utf8)) { outputs.append($0) }
        #expect(outputs.count == 1)
    }

    @Test func mixedStream_givesTheExpectedOutputsWhole() {
        #expect(Support.frame([Self.mixedStream]) == Self.mixedExpected)
    }

    @Test func splittingAtEveryByteBoundary_givesTheSameOutputs() {
        let stream = Self.mixedStream
        for cut in 0 ... stream.count {
            let outputs = Support.frame([Array(stream[..<cut]), Array(stream[cut...])])
            if outputs != Self.mixedExpected {
                Issue.record("split at \(cut) gave \(outputs)")
                return
            }
        }
        #expect(Support.frame(stream.map { [$0] }) == Self.mixedExpected)
    }

    @Test func splittingIntoThreeAtManyBoundaries_givesTheSameOutputs() {
        let stream = Self.mixedStream
        for first in stride(from: 0, through: stream.count, by: 11) {
            for second in stride(from: first, through: stream.count, by: 23) {
                let chunks = [Array(stream[..<first]), Array(stream[first ..< second]), Array(stream[second...])]
                if Support.frame(chunks) != Self.mixedExpected {
                    Issue.record("split at \(first), \(second) differs")
                    return
                }
            }
        }
    }

    @Test func nonContiguousInput_isFramedTheSame() {
        var framer = LineFramer()
        var outputs: [LineFramer.Output] = []
        framer.append(Self.mixedStream.lazy.map { $0 }) { outputs.append($0) }
        #expect(outputs == Self.mixedExpected)
    }

    @Test func lineOf510Bytes_isAcceptedAnd511IsTooLong() {
        let ok = [UInt8](repeating: 0x61, count: 510)
        let long = [UInt8](repeating: 0x62, count: 511)
        #expect(Support.frame([ok + [13, 10]]) == [.line(ok)])
        #expect(Support.frame([long + [13, 10]]) == [.tooLong])
        #expect(Support.frame([long + [10]]) == [.tooLong])
        #expect(Support.frame([long + [13]]) == [.tooLong])
    }

    @Test func tooLong_isReportedOnceAtItsTerminatorAndTheNextLineIsFine() {
        var framer = LineFramer()
        var outputs: [LineFramer.Output] = []
        for _ in 0 ..< 20 {
            framer.append([UInt8](repeating: 0x7A, count: 100)) { outputs.append($0) }
            #expect(framer.bufferedByteCount <= 510)
        }
        #expect(outputs.isEmpty)
        framer.append(Array("\r\nPING x\r\n".utf8)) { outputs.append($0) }
        #expect(outputs == [.tooLong, Self.line("PING x")])
    }

    @Test func smallLimits_areHonoured() {
        let outputs = Support.frame([Array("abcdefgh\nabcdefghi\nab\n".utf8)], maxLineBytes: 10)
        #expect(outputs == [Self.line("abcdefgh"), .tooLong, Self.line("ab")])
    }

    @Test func moreThanMaxDiscardBytesWithoutTerminator_overflowsOnceAndStops() {
        var framer = LineFramer(maxLineBytes: 512, maxDiscardBytes: 4_096)
        var outputs: [LineFramer.Output] = []
        framer.append([UInt8](repeating: 0x41, count: 4_096)) { outputs.append($0) }
        #expect(outputs.isEmpty)
        #expect(!framer.hasOverflowed)
        framer.append([0x41] + Array("\r\nPING x\r\n".utf8)) { outputs.append($0) }
        #expect(outputs == [.overflow])
        #expect(framer.hasOverflowed)
        framer.append(Array("PING y\r\n".utf8)) { outputs.append($0) }
        #expect(outputs == [.overflow])
        #expect(framer.bufferedByteCount == 0)
    }

    @Test func exactlyMaxDiscardBytes_isOnlyTooLong() {
        let outputs = Support.frame([[UInt8](repeating: 0x41, count: 4_096), Array("\nOK\n".utf8)], maxDiscardBytes: 4_096)
        #expect(outputs == [.tooLong, Self.line("OK")])
    }

    @Test func overflow_dependsOnlyOnTheBytesNotTheChunks() {
        let stream = Array("A\n".utf8) + [UInt8](repeating: 0x42, count: 1_001) + Array("\nC\n".utf8)
        let expected: [LineFramer.Output] = [Self.line("A"), .overflow]
        #expect(Support.frame([stream], maxDiscardBytes: 1_000) == expected)
        #expect(Support.frame(stream.map { [$0] }, maxDiscardBytes: 1_000) == expected)
    }

    @Test func memory_staysBoundedByTheLineLimitWhateverArrives() {
        var framer = LineFramer(maxLineBytes: 512, maxDiscardBytes: .max)
        var outputs = 0
        for index in 0 ..< 2_000 {
            framer.append([UInt8](repeating: UInt8(0x41 + index % 26), count: 61)) { _ in outputs += 1 }
            #expect(framer.bufferedByteCount <= 510)
        }
        #expect(outputs == 0)
        framer.append([10]) { _ in outputs += 1 }
        #expect(outputs == 1)
    }
}
