#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Thin wrappers over the POSIX calls the socket layer makes, so the platform differences
/// (Glibc's imported enum types, `accept4`, `MSG_NOSIGNAL` vs `SO_NOSIGPIPE`) live in one place.
///
/// Every function is a plain syscall wrapper: thread-safe as the syscall is, and it reports
/// failure through its return value and `errno` (read it with `_Posix.errno` right after).
enum _Posix {
    /// The calling thread's `errno`.
    static var errno: Int32 {
        #if canImport(Glibc) || canImport(Musl)
        return Glibc.errno
        #else
        return Darwin.errno
        #endif
    }

    static var streamType: Int32 {
        #if canImport(Glibc)
        return Int32(SOCK_STREAM.rawValue)
        #else
        return SOCK_STREAM
        #endif
    }

    /// Flags for `send`/`sendmsg`: `MSG_NOSIGNAL` where it exists, so writing to a closed peer
    /// returns `EPIPE` instead of raising SIGPIPE (Darwin sets `SO_NOSIGPIPE` on the socket).
    static var sendFlags: Int32 {
        #if canImport(Darwin)
        return 0
        #else
        return Int32(MSG_NOSIGNAL)
        #endif
    }

    /// One non-blocking `send` of `bytes` without SIGPIPE; the count written, or -1 with `errno`.
    static func send(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Int {
        #if canImport(Glibc)
        return Glibc.send(fd, bytes.baseAddress, bytes.count, sendFlags)
        #elseif canImport(Musl)
        return Musl.send(fd, bytes.baseAddress, bytes.count, sendFlags)
        #else
        return Darwin.send(fd, bytes.baseAddress, bytes.count, sendFlags)
        #endif
    }

    /// Starts connecting `fd` to `address`; 0, or -1 with `errno` (`EINPROGRESS` when non-blocking).
    static func connect(_ fd: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t) -> Int32 {
        #if canImport(Glibc)
        return Glibc.connect(fd, address, length)
        #elseif canImport(Musl)
        return Musl.connect(fd, address, length)
        #else
        return Darwin.connect(fd, address, length)
        #endif
    }

    /// A new non-blocking, close-on-exec TCP socket of `family`, or -1 with `errno` set.
    static func makeStreamSocket(family: Int32) -> Int32 {
        #if canImport(Glibc)
        let type = streamType | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        return socket(family, type, 0)
        #else
        let fd = socket(family, streamType, 0)
        if fd >= 0 { configureAccepted(fd) }
        return fd
        #endif
    }

    /// Accepts one connection and makes it non-blocking and close-on-exec; -1 with `errno` set
    /// on failure. (`accept4` would do it in one call, but the Glibc module does not export it;
    /// the close-on-exec flag is therefore set a moment after the accept.)
    static func accept(
        _ fd: Int32, _ address: UnsafeMutablePointer<sockaddr>, _ length: UnsafeMutablePointer<socklen_t>
    ) -> Int32 {
        #if canImport(Glibc)
        let accepted = Glibc.accept(fd, address, length)
        #elseif canImport(Musl)
        let accepted = Musl.accept(fd, address, length)
        #else
        let accepted = Darwin.accept(fd, address, length)
        #endif
        if accepted >= 0 { configureAccepted(accepted) }
        return accepted
    }

    /// Non-blocking, close-on-exec and (Darwin) no SIGPIPE, for sockets made without the flags.
    private static func configureAccepted(_ fd: Int32) {
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        _ = fcntl(fd, F_SETFD, fcntl(fd, F_GETFD) | FD_CLOEXEC)
        #if canImport(Darwin)
        setOption(fd, SOL_SOCKET, SO_NOSIGPIPE, 1)
        #endif
    }

    /// Sets an integer socket option, ignoring failure (every caller treats it as best effort).
    static func setOption(_ fd: Int32, _ level: Int32, _ name: Int32, _ value: Int32) {
        var value = value
        _ = setsockopt(fd, level, name, &value, socklen_t(MemoryLayout<Int32>.size))
    }

    /// Disables Nagle's algorithm: IRC lines are small and latency matters more than packing.
    static func setNoDelay(_ fd: Int32) {
        #if canImport(Glibc)
        setOption(fd, Int32(IPPROTO_TCP), Int32(TCP_NODELAY), 1)
        #else
        setOption(fd, IPPROTO_TCP, TCP_NODELAY, 1)
        #endif
    }

    /// `SO_LINGER {on, 0}`: the next `close` resets the connection instead of a graceful FIN.
    static func setAbortiveClose(_ fd: Int32) {
        var linger = linger(l_onoff: 1, l_linger: 0)
        _ = setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<linger>.size))
    }

    /// Shuts down the sending direction (the peer reads EOF once the queued bytes are sent).
    static func shutdownWrite(_ fd: Int32) {
        #if canImport(Glibc)
        _ = shutdown(fd, Int32(SHUT_WR))
        #else
        _ = shutdown(fd, SHUT_WR)
        #endif
    }

    /// Shuts down both directions (on a listening socket: stops accepting and refuses new peers).
    static func shutdownBoth(_ fd: Int32) {
        #if canImport(Glibc)
        _ = shutdown(fd, Int32(SHUT_RDWR))
        #else
        _ = shutdown(fd, SHUT_RDWR)
        #endif
    }

    /// Closes `fd`. `EINTR` is not retried: on Linux the descriptor is released either way.
    static func close(_ fd: Int32) {
        #if canImport(Glibc)
        _ = Glibc.close(fd)
        #elseif canImport(Musl)
        _ = Musl.close(fd)
        #else
        _ = Darwin.close(fd)
        #endif
    }

    /// The pending error of a socket (`SO_ERROR`), 0 when there is none.
    static func pendingError(_ fd: Int32) -> Int32 {
        var value: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        if getsockopt(fd, SOL_SOCKET, SO_ERROR, &value, &length) != 0 { return errno }
        return value
    }

    /// The socket's own address (`getsockname`), or a zero address if the call fails.
    static func localAddress(_ fd: Int32) -> SocketAddress {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let result = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return result == 0 ? SocketAddress(storage) : SocketAddress(host: "0.0.0.0", port: 0)
    }

    /// `true` for the errno values that mean "try again later" on a non-blocking socket.
    static func wouldBlock(_ error: Int32) -> Bool {
        error == EAGAIN || error == EWOULDBLOCK
    }

    /// Resolves `host`/`port` for a TCP socket; `passive` asks for wildcard addresses when
    /// `host` is nil; `numericHostOnly` fails at once (`EAI_NONAME`) for a name, never blocking. Calls `body` with each candidate (family, address, length) in the
    /// resolver's order until `body` returns non-nil.
    static func withResolvedAddresses<T>(
        host: String?, port: UInt16, passive: Bool, numericHostOnly: Bool = false,
        _ body: (Int32, UnsafePointer<sockaddr>, socklen_t) -> T?
    ) throws(SocketError) -> T? {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = streamType
        hints.ai_flags = AI_NUMERICSERV | (passive ? AI_PASSIVE : 0) | (numericHostOnly ? AI_NUMERICHOST : 0)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0 else {
            // EAI_SYSTEM means "look at errno"; keep that errno, it says more.
            if status == EAI_SYSTEM { throw SocketError(operation: "getaddrinfo", errno: errno) }
            throw SocketError(operation: "getaddrinfo", errno: status)
        }
        defer { freeaddrinfo(list) }
        var entry = list
        while let info = entry {
            if let address = info.pointee.ai_addr,
               let result = body(info.pointee.ai_family, address, info.pointee.ai_addrlen) {
                return result
            }
            entry = info.pointee.ai_next
        }
        return nil
    }
}
