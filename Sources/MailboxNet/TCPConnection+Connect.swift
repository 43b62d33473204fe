#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension TCPConnection {
    /// Connects to `host`:`port` (the client side, for tests and tools) and returns the
    /// connection, not started.
    ///
    /// Blocks the calling thread until connected or `timeout` has passed (resolving the name
    /// included, though `getaddrinfo` itself cannot be interrupted); the socket is non-blocking
    /// afterwards. Tries each address `host` resolves to, in order, until one connects.
    ///
    /// - Throws: `SocketError` of the last address tried: "connect" with `ECONNREFUSED`,
    ///   `ETIMEDOUT` (the time-out ran out), ...; "getaddrinfo" if `host` does not resolve;
    ///   "socket" if no socket could be made (`EMFILE`).
    public static func connect(
        host: String, port: UInt16, timeout: Duration = .seconds(5)
    ) throws(SocketError) -> TCPConnection {
        let deadline = ContinuousClock.now + timeout
        var lastError = SocketError(operation: "connect", errno: EADDRNOTAVAIL)
        let connection = try _Posix.withResolvedAddresses(
            host: host, port: port, passive: false
        ) { family, address, length -> TCPConnection? in
            let fd = _Posix.makeStreamSocket(family: family)
            guard fd >= 0 else {
                lastError = SocketError(operation: "socket", errno: _Posix.errno)
                return nil
            }
            if let error = connect(fd, to: address, length: length, deadline: deadline) {
                lastError = error
                _Posix.close(fd)
                return nil
            }
            return TCPConnection(fd: fd, peer: SocketAddress(address, length: length), local: _Posix.localAddress(fd))
        }
        guard let connection else { throw lastError }
        return connection
    }

    /// Connects the non-blocking `fd`, waiting in `poll` until `deadline`; nil on success.
    private static func connect(
        _ fd: Int32, to address: UnsafePointer<sockaddr>, length: socklen_t, deadline: ContinuousClock.Instant
    ) -> SocketError? {
        if _Posix.connect(fd, address, length) == 0 { return nil }
        let error = _Posix.errno
        // EINTR: the connection goes on asynchronously, as for EINPROGRESS.
        guard error == EINPROGRESS || error == EINTR else {
            return SocketError(operation: "connect", errno: error)
        }
        while true {
            let remaining = ContinuousClock.now.duration(to: deadline)
            guard remaining > .zero else { return SocketError(operation: "connect", errno: ETIMEDOUT) }
            let (seconds, attoseconds) = remaining.components
            let milliseconds = Int32(clamping: seconds * 1000 + attoseconds / 1_000_000_000_000_000 + 1)
            var descriptor = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            let ready = poll(&descriptor, 1, milliseconds)
            if ready < 0 {
                let error = _Posix.errno
                if error == EINTR { continue }
                return SocketError(operation: "connect", errno: error)
            }
            if ready == 0 { continue }  // re-checks the deadline
            let pending = _Posix.pendingError(fd)
            return pending == 0 ? nil : SocketError(operation: "connect", errno: pending)
        }
    }
}
