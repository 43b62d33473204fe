#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
import Mailbox

extension TCPConnection {
    /// Connects to `host`:`port` without blocking a thread for the wait, and returns the
    /// connection, not started (non-blocking, close-on-exec, `TCP_NODELAY`).
    ///
    /// How it waits: a numeric host ("127.0.0.1", "::1") is used at once; a name is resolved by
    /// `getaddrinfo` on a Dispatch global queue; each connect is started
    /// non-blocking and awaited with a Dispatch write source plus a Dispatch timer for the
    /// deadline, on one shared serial queue; the calling task is suspended meanwhile. Tries
    /// each address `host` resolves to, in the resolver's order, until one connects.
    /// `timeout` covers the whole call; resolving counts against it, though `getaddrinfo`
    /// itself cannot be cut short. Thread-safe; may be called from any task.
    ///
    /// - Throws: `SocketError` of the last address tried:
    ///   - "connect" `ECONNREFUSED`: nothing listens there;
    ///   - "connect" `ETIMEDOUT`: `timeout` ran out (e.g. the peer's backlog is full);
    ///   - "connect" `ENETUNREACH`/`EHOSTUNREACH`: no route to the address;
    ///   - "connect" `ECANCELED`: the task was cancelled (the socket is closed);
    ///   - "getaddrinfo" with an `EAI_*` code: the name does not resolve;
    ///   - "socket" `EMFILE`: no descriptor left.
    ///
    /// The first call in a process suspends about 1 ms while one Dispatch timer fires (see
    /// `_DispatchTimers`), so the deadline timer works when descriptors run out.
    public static func connect(
        to host: String, port: UInt16, timeout: Duration = .seconds(5)
    ) async throws(SocketError) -> TCPConnection {
        await _DispatchTimers.readyWithoutBlocking()
        let deadline = ContinuousClock.now + timeout
        let candidates = try await resolve(host: host, port: port).get()
        var lastError = SocketError(operation: "connect", errno: EADDRNOTAVAIL)
        for candidate in candidates {
            if Task.isCancelled { throw SocketError(operation: "connect", errno: ECANCELED) }
            let fd = _Posix.makeStreamSocket(family: candidate.family)
            guard fd >= 0 else {
                lastError = SocketError(operation: "socket", errno: _Posix.errno)
                continue
            }
            var storage = candidate.storage
            let started = withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { _Posix.connect(fd, $0, candidate.length) }
            }
            var error: Int32 = started == 0 ? 0 : _Posix.errno
            // EINTR: the connection goes on asynchronously, as for EINPROGRESS.
            if error == EINPROGRESS || error == EINTR {
                error = await _ConnectWait.wait(fd: fd, deadline: deadline)
            }
            if error == 0 {
                let peer = withUnsafePointer(to: &storage) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { SocketAddress($0, length: candidate.length) }
                }
                return TCPConnection(fd: fd, peer: peer, local: _Posix.localAddress(fd))
            }
            _Posix.close(fd)
            lastError = SocketError(operation: "connect", errno: error)
            if error == ECANCELED { break }
        }
        throw lastError
    }

    /// Resolves `host`: a numeric address at once, on the calling thread; a name on a global
    /// queue (`getaddrinfo` blocks).
    private static func resolve(host: String, port: UInt16) async -> Result<[_ResolvedAddress], SocketError> {
        if case .success(let addresses) = resolveNow(host: host, port: port, numericHostOnly: true) {
            return .success(addresses)
        }
        return await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(returning: resolveNow(host: host, port: port, numericHostOnly: false))
            }
        }
    }

    private static func resolveNow(
        host: String, port: UInt16, numericHostOnly: Bool
    ) -> Result<[_ResolvedAddress], SocketError> {
        var found: [_ResolvedAddress] = []
        do throws(SocketError) {
            _ = try _Posix.withResolvedAddresses(
                host: host, port: port, passive: false, numericHostOnly: numericHostOnly
            ) { family, address, length -> Bool? in
                var storage = sockaddr_storage()
                withUnsafeMutableBytes(of: &storage) { target in
                    target.copyMemory(from: UnsafeRawBufferPointer(start: address, count: min(Int(length), target.count)))
                }
                found.append(_ResolvedAddress(family: family, storage: storage, length: length))
                return nil
            }
            return .success(found)
        } catch {
            return .failure(error)
        }
    }
}

/// One address `getaddrinfo` gave, copied out of its list.
struct _ResolvedAddress {
    var family: Int32
    var storage: sockaddr_storage
    var length: socklen_t
}

// No lock needed: a plain value of C scalars, copied between threads, never shared mutably.
extension _ResolvedAddress: @unchecked Sendable {}

/// Awaits the end of one non-blocking connect: the socket's write source fires (connected or
/// failed: `SO_ERROR` says which), the deadline timer fires (`ETIMEDOUT`), or the task is
/// cancelled (`ECANCELED`), whichever comes first. The continuation is resumed from the write
/// source's cancel handler, so the caller may close the socket at once.
final class _ConnectWait: Sendable {
    struct State {
        var continuation: CheckedContinuation<Int32, Never>?
        var source: (any DispatchSourceWrite)?
        var timer: (any DispatchSourceTimer)?
        /// The errno the wait ended with (0: connected), once decided.
        var result: Int32?
    }

    /// Protected by its pthread mutex.
    private let state = LockedValueBox(State())
    private static let queue = DispatchQueue(label: "MailboxNet.connect", target: .global())

    /// 0 once `fd` is connected, or the errno the connect failed with.
    static func wait(fd: Int32, deadline: ContinuousClock.Instant) async -> Int32 {
        let wait = _ConnectWait()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                wait.begin(fd: fd, deadline: deadline, continuation)
            }
        } onCancel: {
            wait.decide(ECANCELED)
        }
    }

    private func begin(fd: Int32, deadline: ContinuousClock.Instant, _ continuation: CheckedContinuation<Int32, Never>) {
        let decidedAlready = state.withLockedValue { state -> Int32? in
            if let result = state.result { return result }  // cancelled before it began
            state.continuation = continuation
            let source = DispatchSource.makeWriteSource(fileDescriptor: fd, queue: Self.queue)
            source.setEventHandler { [self] in decide(_Posix.pendingError(fd)) }
            source.setCancelHandler { [self] in sourceCancelled() }
            let timer = DispatchSource.makeTimerSource(queue: Self.queue)
            let remaining = ContinuousClock.now.duration(to: deadline)
            timer.schedule(deadline: .now() + TCPConnection.dispatchInterval(remaining))
            timer.setEventHandler { [self] in
                // A busy queue may run this before the write source's handler although the
                // socket connected in time: ask the socket before calling it a time-out.
                var descriptor = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                decide(poll(&descriptor, 1, 0) == 1 ? _Posix.pendingError(fd) : ETIMEDOUT)
            }
            state.source = source
            state.timer = timer
            source.resume()
            timer.resume()
            return nil
        }
        if let decidedAlready { continuation.resume(returning: decidedAlready) }
    }

    /// Records the first outcome and cancels the sources; later outcomes are ignored.
    private func decide(_ error: Int32) {
        state.withLockedValue { state in
            guard state.result == nil else { return }
            state.result = error
            state.timer?.cancel()
            state.timer = nil
            state.source?.cancel()  // its cancel handler resumes the waiter
        }
    }

    private func sourceCancelled() {
        let (continuation, result) = state.withLockedValue { state in
            defer { state.continuation = nil; state.source = nil }
            return (state.continuation, state.result ?? ECANCELED)
        }
        continuation?.resume(returning: result)
    }
}

// Only ever touched inside `_ConnectWait.state`'s pthread mutex (its Dispatch sources are not
// `Sendable` themselves).
extension _ConnectWait.State: @unchecked Sendable {}
