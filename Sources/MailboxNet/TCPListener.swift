#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
import Mailbox

/// A listening TCP socket that hands each accepted connection to a handler.
///
/// Thread-safety: all methods may be called from any thread. The accept handler runs on the
/// listener's own serial queue, one call at a time.
///
/// Lifetime: once `startAccepting` has been called, the listener's Dispatch source keeps it alive
/// and accepting until `close()`; a listener never started is closed when freed.
public final class TCPListener: Sendable {
    /// The address the socket is bound to; with port 0 requested, the port the kernel chose.
    public let localAddress: SocketAddress

    /// The listening socket; closed exactly once (see `_ListenerState.descriptorClosed`).
    let fd: Int32
    /// Runs the accept source's handlers and the user's handler.
    private let queue: DispatchQueue
    /// Marks `queue`, so `close()` can tell it is called from the handler.
    private let queueKey = DispatchSpecificKey<Bool>()
    /// Signalled by the accept source's cancel handler (the socket is closed then).
    private let sourceCancelledSignal = DispatchSemaphore(value: 0)
    /// Protected by its pthread mutex.
    private let state = LockedValueBox(_ListenerState())

    /// How many connections one readable event accepts before yielding the queue.
    private static let acceptsPerEvent = 64
    /// How long accepting pauses after running out of descriptors or memory.
    private static let resourcePause: DispatchTimeInterval = .milliseconds(100)

    /// Resolves `host` (numeric or name, IPv4 or IPv6; "" for every interface), binds the first
    /// address that works with `SO_REUSEADDR`, and listens. The socket is non-blocking and
    /// close-on-exec. Port 0 picks an ephemeral port (see `localAddress`). Blocks only while
    /// resolving a name.
    ///
    /// - Throws: `SocketError` of the last address tried: "bind" with `EADDRINUSE` when the port
    ///   is taken, `EACCES` for a privileged port, `EADDRNOTAVAIL` for an address not on this
    ///   machine; "listen"; "socket"; "getaddrinfo" when `host` does not resolve.
    public init(host: String, port: UInt16, backlog: Int32 = 1024) throws(SocketError) {
        var lastError = SocketError(operation: "bind", errno: EADDRNOTAVAIL)
        let bound = try _Posix.withResolvedAddresses(
            host: host.isEmpty ? nil : host, port: port, passive: true
        ) { family, address, length -> Int32? in
            let fd = _Posix.makeStreamSocket(family: family)
            guard fd >= 0 else {
                lastError = SocketError(operation: "socket", errno: _Posix.errno)
                return nil
            }
            _Posix.setOption(fd, SOL_SOCKET, SO_REUSEADDR, 1)
            if bind(fd, address, length) != 0 {
                lastError = SocketError(operation: "bind", errno: _Posix.errno)
            } else if listen(fd, backlog) != 0 {
                lastError = SocketError(operation: "listen", errno: _Posix.errno)
            } else {
                return fd
            }
            _Posix.close(fd)
            return nil
        }
        guard let bound else { throw lastError }
        fd = bound
        localAddress = _Posix.localAddress(bound)
        queue = DispatchQueue(label: "MailboxNet.TCPListener", target: .global())
        queue.setSpecific(key: queueKey, value: true)
    }

    deinit {
        // Only a listener that was never started, or whose source is gone, gets here.
        state.withLockedValue { state in
            if !state.descriptorClosed {
                state.descriptorClosed = true
                _Posix.close(fd)
            }
        }
    }

    /// Starts accepting. Does nothing if the listener is already closed.
    ///
    /// `handler` is called on the listener's queue, serially, never concurrently: with each
    /// accepted connection (not started: it reads nothing until `start`), or with an accept
    /// error. The listener keeps going after errors that concern one connection
    /// (`ECONNABORTED`, `EPROTO`, `EPERM`, ...) and after running out of resources (`EMFILE`,
    /// `ENFILE`, `ENOBUFS`, `ENOMEM`); after those, and after any unexpected error, it pauses
    /// accepting for 100 ms (a timer, not a busy loop) and then resumes. `EAGAIN` and `EINTR`
    /// are not reported. The first call in the process waits about 1 ms while one Dispatch timer
    /// fires (see `_DispatchTimers`), so the pause timer works once descriptors have run out.
    ///
    /// - Precondition: called at most once.
    public func startAccepting(_ handler: @escaping @Sendable (Result<TCPConnection, SocketError>) -> Void) {
        _DispatchTimers.ready  // the pause timer must work when descriptors have run out
        state.withLockedValue { state in
            precondition(!state.started, "TCPListener.startAccepting called twice (\(localAddress))")
            state.started = true
            guard !state.closed else { return }
            let source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
            source.setEventHandler { [self] in acceptReadyConnections(handler) }
            source.setCancelHandler { [self] in sourceCancelled() }
            state.source = source
            source.resume()
        }
    }

    /// Stops accepting and closes the socket (peers still in the backlog are refused).
    ///
    /// Idempotent. After it returns, no new handler call begins. Called from outside the
    /// handler, it also waits until a handler call in progress has returned and the socket is
    /// closed (so the port is free again); called from inside the handler, the socket closes
    /// just after the handler returns. Do not call it while the handler waits for the calling
    /// thread.
    public func close() {
        let mustWait = state.withLockedValue { state -> Bool in
            guard !state.closed else { return false }
            state.closed = true
            // Stops the listen at once (Linux refuses new peers from here on) even while a
            // handler call still runs and the descriptor stays open.
            _Posix.shutdownBoth(fd)
            if let timer = state.resumeTimer {
                state.resumeTimer = nil
                timer.cancel()
            }
            guard let source = state.source else {
                state.descriptorClosed = true
                _Posix.close(fd)
                return false
            }
            if state.sourceSuspended {
                state.sourceSuspended = false
                source.resume()
            }
            source.cancel()
            return true
        }
        if mustWait && DispatchQueue.getSpecific(key: queueKey) == nil {
            sourceCancelledSignal.wait()
        }
    }

    // MARK: - Accepting

    private enum AcceptOutcome {
        case accepted(Int32, SocketAddress)
        case retry
        case stop
        case report(SocketError, thenStop: Bool)
    }

    /// The accept source's handler: accepts up to `acceptsPerEvent` connections, handing each
    /// (or each error) to `handler`.
    private func acceptReadyConnections(_ handler: @Sendable (Result<TCPConnection, SocketError>) -> Void) {
        var accepted = 0
        while accepted < Self.acceptsPerEvent {
            switch acceptOne() {
            case .accepted(let connectionFD, let peer):
                accepted += 1
                let local = _Posix.localAddress(connectionFD)
                handler(.success(TCPConnection(fd: connectionFD, peer: peer, local: local)))
            case .retry:
                continue
            case .stop:
                return
            case .report(let error, let thenStop):
                accepted += 1
                handler(.failure(error))
                if thenStop { return }
            }
        }
    }

    private func acceptOne() -> AcceptOutcome {
        state.withLockedValue { state in
            guard !state.closed, !state.sourceSuspended else { return .stop }
            var storage = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let connectionFD = withUnsafeMutablePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { _Posix.accept(fd, $0, &length) }
            }
            if connectionFD >= 0 { return .accepted(connectionFD, SocketAddress(storage)) }
            let error = _Posix.errno
            if _Posix.wouldBlock(error) { return .stop }
            if error == EINTR { return .retry }
            let failure = SocketError(operation: "accept", errno: error)
            if SocketError.perPeerAcceptErrnos.contains(error) {
                // One peer's trouble.
                return .report(failure, thenStop: false)
            }
            // EMFILE, ENFILE, ENOBUFS, ENOMEM (or worse): retrying at once would spin.
            pauseAccepting(&state)
            return .report(failure, thenStop: true)
        }
    }

    /// Suspends the accept source and resumes it after `resourcePause`. Caller holds the lock.
    private func pauseAccepting(_ state: inout _ListenerState) {
        guard let source = state.source, !state.sourceSuspended else { return }
        state.sourceSuspended = true
        source.suspend()
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + Self.resourcePause)
        timer.setEventHandler { [self] in resumeAccepting() }
        state.resumeTimer = timer
        timer.resume()
    }

    private func resumeAccepting() {
        state.withLockedValue { state in
            guard let timer = state.resumeTimer else { return }
            state.resumeTimer = nil
            timer.cancel()
            if !state.closed, let source = state.source, state.sourceSuspended {
                state.sourceSuspended = false
                source.resume()
            }
        }
    }

    /// The accept source's cancel handler (after its last event handler): closes the socket.
    private func sourceCancelled() {
        state.withLockedValue { state in
            state.source = nil
            state.descriptorClosed = true
            _Posix.close(fd)
        }
        sourceCancelledSignal.signal()
    }
}

/// The mutable state of a `TCPListener`, only touched with its lock held.
struct _ListenerState {
    var started = false
    var closed = false
    /// The accept source, from `startAccepting` until its cancellation completes.
    var source: (any DispatchSourceRead)?
    /// Suspended while accepting pauses after a resource error.
    var sourceSuspended = false
    /// Ends the pause.
    var resumeTimer: (any DispatchSourceTimer)?
    var descriptorClosed = false
}

// Only ever touched inside `TCPListener.state`'s pthread mutex (its Dispatch sources are not
// `Sendable` themselves).
extension _ListenerState: @unchecked Sendable {}
