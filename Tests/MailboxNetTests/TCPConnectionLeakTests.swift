#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Foundation
import Testing
@testable import MailboxNet
import NetTestSupport

/// Counts this process's descriptors around 10,000 connect/accept/close cycles on loopback. It
/// runs in a child process of its own (an exit test): the tests running beside it open and
/// close descriptors too, which would make the count meaningless.
@Suite("Net: descriptor leaks")
struct TCPConnectionLeakTests {
    #if os(Linux)
    @Test func tenThousandConnectAcceptCloseCycles_leaveNoDescriptorOpen() async {
        await #expect(processExitsWith: .success) {
            func fail(_ message: String) -> Never {
                FileHandle.standardError.write(Data("exit test failed: \(message)\n".utf8))
                exit(1)
            }
            ProcessLimits.raiseOpenFileLimit()
            guard let listener = try? TCPListener(host: "127.0.0.1", port: 0) else { fail("no listener") }
            let closed = DispatchSemaphore(value: 0)
            listener.startAccepting { result in
                guard case .success(let connection) = result else { return }
                // Started (a read source), then closed by the server: both ends' sources and
                // descriptors go through the full close path.
                connection.start(sendQueueLimit: 1024, onRead: { _ in }, onClose: { _ in closed.signal() })
                connection.close()
            }
            // Warm-up: Dispatch's own descriptors (timerfd, eventfd, epoll) are made once.
            func cycle(_ count: Int) {
                var clients: [TCPConnection] = []
                for _ in 0..<count {
                    guard let client = try? TCPConnection.connect(host: "127.0.0.1", port: listener.localAddress.port) else {
                        fail("connect")
                    }
                    client.start(sendQueueLimit: 1024, onRead: { _ in }, onClose: { _ in closed.signal() })
                    clients.append(client)
                }
                // Every server side and every client reports its close (the client sees EOF).
                for _ in 0..<(2 * count) {
                    guard closed.wait(timeout: .now() + 10) == .success else { fail("a close never came") }
                }
            }
            cycle(10)
            let before = openDescriptorCount()
            guard before > 0 else { fail("no /proc/self/fd") }
            let started = ContinuousClock.now
            for _ in 0..<100 { cycle(100) }
            let elapsed = started.duration(to: .now)
            // Settle: the last cancel handlers may still be closing descriptors.
            let deadline = ContinuousClock.now + .seconds(10)
            var after = openDescriptorCount()
            while after != before && ContinuousClock.now < deadline {
                usleep(1000)
                after = openDescriptorCount()
            }
            listener.close()
            guard after == before else { fail("\(before) descriptors before, \(after) after") }
            print("10,000 cycles in \(elapsed); descriptors \(before) before and after")
            exit(0)
        }
    }
    #endif
}
