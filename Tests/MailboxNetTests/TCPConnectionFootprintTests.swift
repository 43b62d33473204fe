#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Foundation
import Testing
@testable import MailboxNet
import NetTestSupport

/// Measurements, not behaviour: off by default, on with `MAILBOX_NET_MEASURE=1`
/// (`MAILBOX_NET_MEASURE=1 swift test --filter TCPConnectionFootprint`).
@Suite("Net: TCPConnection footprint", .enabled(if: ProcessInfo.processInfo.environment["MAILBOX_NET_MEASURE"] != nil))
struct TCPConnectionFootprintTests {
    #if canImport(Glibc)
    @Test func idleConnections_costUnderTwoKibibytesOfMemoryEachAndNoCPU() throws {
        ProcessLimits.raiseOpenFileLimit()
        let count = Int(ProcessInfo.processInfo.environment["MAILBOX_NET_MEASURE"] ?? "") ?? 2000
        let server = try LoopbackServer()
        var clients: [TCPConnection] = []
        clients.reserveCapacity(count)

        let heapBefore = residentBytes()
        for _ in 0..<count {
            clients.append(try TCPConnection.connect(host: "127.0.0.1", port: server.port))
        }
        var serverSides: [TCPConnection] = []
        for index in 0..<count { serverSides.append(try #require(server.accepted.wait(for: index))) }
        let heapAccepted = residentBytes()
        for connection in serverSides {
            connection.start(sendQueueLimit: 1 << 20, onRead: { _ in }, onClose: { _ in })
        }
        let heapStarted = residentBytes()

        let unstarted = Double(heapAccepted - heapBefore) / Double(2 * count)
        let started = unstarted + Double(heapStarted - heapAccepted) / Double(count)
        print("resident memory per unstarted connection: \(Int(unstarted)) B; per started idle connection: \(Int(started)) B")
        #expect(started < 2048)

        // Make some connections create (and then disarm) their write source: they must not spin.
        for index in 0..<100 {
            setBufferSize(serverSides[index].fd, SO_SNDBUF, 4096)
            let chunk = [UInt8](repeating: 1, count: 64 * 1024)
            var sent = 0
            for _ in 0..<1000 where serverSides[index].queuedByteCount == 0 {
                serverSides[index].send(chunk)
                sent += chunk.count
            }
            #expect(serverSides[index].queuedByteCount > 0)
            let (bytes, _) = readRaw(clients[index].fd, maxBytes: sent)
            #expect(bytes.count == sent)
            #expect(serverSides[index].state.withLockedValue { $0.writeSource != nil && !$0.writeSourceArmed })
        }
        let cpuBefore = cpuSeconds()
        _ = DispatchSemaphore(value: 0).wait(timeout: .now() + .milliseconds(500))  // a measuring window
        let cpu = cpuSeconds() - cpuBefore
        print("CPU while \(count) connections idle for 0.5 s: \(cpu) s")
        #expect(cpu < 0.1)
        for connection in serverSides { connection.close() }
    }

    /// Resident set size from /proc/self/statm (the heap, Dispatch's bookkeeping, stacks).
    private func residentBytes() -> Int {
        let statm = (try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8)) ?? ""
        let pages = statm.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    private func cpuSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
            + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    }
    #endif
}
