#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Foundation
import Testing
@testable import MailboxNet
import NetTestSupport

/// Behaviour that changes process-wide state (the open-file limit), so it runs in a child
/// process of its own (an exit test) and cannot disturb the tests running beside it.
///
/// It also guards a libdispatch trap: the `timerfd` behind Dispatch timers is created when the
/// first timer is armed, and if descriptors have run out by then the timer never fires, so
/// the listener would stay paused forever (see `_DispatchTimers`).
@Suite("Net: TCPListener out of descriptors")
struct TCPListenerExitTests {
    #if os(Linux)
    @Test func runningOutOfDescriptors_reportsEMFILEPausesAndThenAcceptsThePendingPeer() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            func fail(_ message: String) -> Never {
                FileHandle.standardError.write(Data("exit test failed: \(message)\n".utf8))
                exit(1)
            }
            let results = WaitableList<Result<TCPConnection, SocketError>>()
            guard let listener = try? TCPListener(host: "127.0.0.1", port: 0) else { fail("no listener") }
            listener.startAccepting { results.append($0) }

            // Leave exactly one descriptor: the client's socket gets it, the accept finds none.
            var original = rlimit()
            getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &original)
            let lowestFree = dup(0)
            guard lowestFree >= 0 else { fail("dup") }
            close(lowestFree)
            var lowered = original
            lowered.rlim_cur = rlim_t(lowestFree + 1)
            guard setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &lowered) == 0 else { fail("setrlimit") }

            let started = ContinuousClock.now
            guard let client = try? TCPConnection.connect(host: "127.0.0.1", port: listener.localAddress.port) else {
                fail("connect")
            }
            guard case .failure(let error)? = results.wait(for: 0) else { fail("no EMFILE reported") }
            guard error == SocketError(operation: "accept", errno: EMFILE) else { fail("reported \(error)") }

            // Descriptors again: the paused listener resumes by itself and accepts the peer.
            guard setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &original) == 0 else { fail("restore") }
            var index = 1
            var failures = 1
            while true {
                guard let result = results.wait(for: index) else { fail("peer never accepted") }
                index += 1
                if case .success(let connection) = result {
                    guard connection.peer == client.local else { fail("accepted someone else") }
                    break
                }
                failures += 1
            }
            // Paused 100 ms after each EMFILE: a busy loop would report thousands.
            let elapsed = started.duration(to: .now)
            let allowed = 2 + Int(elapsed / .milliseconds(100))
            guard failures <= allowed else { fail("\(failures) EMFILE reports in \(elapsed)") }
            guard elapsed >= .milliseconds(90) else { fail("resumed after only \(elapsed)") }
            listener.close()
            exit(0)
        }
        if let result, result.exitStatus != .exitCode(0) {
            Issue.record("the child said: \(String(decoding: result.standardErrorContent, as: UTF8.self))")
        }
    }
    #endif
}
