#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A failed socket call: which operation, and the `errno` it failed with.
///
/// A plain value (`Sendable`, `Equatable`). `operation` names the call ("bind", "listen",
/// "accept", "read", "write", "connect", "getaddrinfo", "socket"); for "getaddrinfo", `errno`
/// holds the resolver's `EAI_*` code instead (negative on Glibc; a resolver failure that is a
/// system error keeps that positive `errno`). A connect that runs out of
/// time is `connect` with `ETIMEDOUT`.
public struct SocketError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The call that failed: "bind", "listen", "accept", "read", "write", "connect", ...
    public var operation: String
    /// The `errno` it failed with (for "getaddrinfo": the `EAI_*` code).
    public var errno: Int32

    /// A failure of `operation` with `errno`.
    public init(operation: String, errno: Int32) {
        self.operation = operation
        self.errno = errno
    }

    /// "bind failed: Address already in use (errno 98)".
    public var description: String {
        #if canImport(Darwin)
        let isResolverCode = operation == "getaddrinfo"
        #else
        let isResolverCode = operation == "getaddrinfo" && errno < 0  // EAI_* codes are negative
        #endif
        if isResolverCode {
            return "getaddrinfo failed: \(String(cString: gai_strerror(errno))) (EAI \(errno))"
        }
        return "\(operation) failed: \(String(cString: strerror(errno))) (errno \(errno))"
    }

    /// `accept` errors that concern one peer, not the listening socket (Linux also passes a
    /// pending network error of the new connection up through `accept`).
    static let perPeerAcceptErrnos: Set<Int32> = [
        ECONNABORTED, EPROTO, EPERM, ENETDOWN, ENETUNREACH, EHOSTDOWN, EHOSTUNREACH, ENOPROTOOPT, EOPNOTSUPP,
    ]

    /// Errors from running out of descriptors or memory, which pass.
    static let resourceErrnos: Set<Int32> = [EMFILE, ENFILE, ENOBUFS, ENOMEM]

    /// True for an `accept` error that `TCPListener` recovers from by itself (one peer's
    /// trouble, or resources running out, after which it pauses); false for an error of the
    /// listening socket itself, after which its owner should make a new one.
    public var isRecoverableAcceptError: Bool {
        Self.perPeerAcceptErrnos.contains(errno) || Self.resourceErrnos.contains(errno) || errno == EINTR || errno == EAGAIN
    }
}
