#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A numeric IP address and TCP port: one end of a connection.
///
/// A plain value (`Sendable`, `Hashable`); it never resolves names. `host` is the numeric form the
/// kernel reported ("127.0.0.1", "::1"; an IPv4 peer of a dual-stack IPv6 listener shows as
/// "::ffff:127.0.0.1").
public struct SocketAddress: Sendable, Hashable, CustomStringConvertible {
    /// The numeric address: "127.0.0.1", "::1".
    public var host: String
    /// The TCP port, in host byte order.
    public var port: UInt16

    /// An address from its numeric host and port (not checked, not resolved).
    public init(host: String, port: UInt16) {
        self.host = host
        self.port = port
    }

    /// "127.0.0.1:6667" for IPv4, "[::1]:6667" for IPv6 (any host containing a colon).
    public var description: String {
        host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    /// The address in a `sockaddr_storage` filled by the kernel (`accept`, `getsockname`).
    /// Families other than IPv4 and IPv6 give host "?" and port 0.
    init(_ storage: sockaddr_storage) {
        var storage = storage
        let family = Int32(storage.ss_family)
        self = withUnsafeBytes(of: &storage) { raw -> SocketAddress in
            var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
            switch family {
            case AF_INET:
                var address = raw.load(as: sockaddr_in.self)
                inet_ntop(AF_INET, &address.sin_addr, &text, socklen_t(text.count))
                return SocketAddress(host: Self.string(text), port: UInt16(bigEndian: address.sin_port))
            case AF_INET6:
                var address = raw.load(as: sockaddr_in6.self)
                inet_ntop(AF_INET6, &address.sin6_addr, &text, socklen_t(text.count))
                return SocketAddress(host: Self.string(text), port: UInt16(bigEndian: address.sin6_port))
            default:
                return SocketAddress(host: "?", port: 0)
            }
        }
    }

    /// The address a `sockaddr` of `length` bytes holds.
    init(_ address: UnsafePointer<sockaddr>, length: socklen_t) {
        var storage = sockaddr_storage()
        withUnsafeMutableBytes(of: &storage) { target in
            let count = min(Int(length), target.count)
            target.copyMemory(from: UnsafeRawBufferPointer(start: address, count: count))
        }
        self.init(storage)
    }

    private static func string(_ text: [CChar]) -> String {
        let bytes = text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        return String(decoding: bytes, as: UTF8.self)
    }
}
