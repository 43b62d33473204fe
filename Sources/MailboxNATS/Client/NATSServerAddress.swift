/// One server of a connection's list: host, port and the credentials its URL carried.
struct NATSServerAddress: Sendable, Hashable, CustomStringConvertible {
    var host: String
    var port: UInt16
    var user: String?
    var password: String?
    var token: String?

    /// Parses `nats://user:pass@host:port`, `host:port`, `[::1]:4222`, `nats://token@host`.
    /// Nil for a URL it cannot read (no host, a port that is not a number).
    init?(_ url: String) {
        var rest = Substring(url.trimmingSpaces())
        if let scheme = rest.range(of: "://") {
            let name = rest[..<scheme.lowerBound].lowercased()
            guard name == "nats" || name == "tcp" else { return nil }
            rest = rest[scheme.upperBound...]
        }
        if let slash = rest.firstIndex(of: "/") { rest = rest[..<slash] }
        if let at = rest.lastIndex(of: "@") {
            let credentials = rest[..<at]
            rest = rest[rest.index(after: at)...]
            if let colon = credentials.firstIndex(of: ":") {
                user = String(credentials[..<colon]).removingPercentEncoding()
                password = String(credentials[credentials.index(after: colon)...]).removingPercentEncoding()
            } else {
                token = String(credentials).removingPercentEncoding()
            }
        }
        var portText: Substring?
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { return nil }
            host = String(rest[rest.index(after: rest.startIndex)..<close])
            let after = rest[rest.index(after: close)...]
            if after.hasPrefix(":") { portText = after.dropFirst() } else if !after.isEmpty { return nil }
        } else if let colon = rest.lastIndex(of: ":") {
            host = String(rest[..<colon])
            portText = rest[rest.index(after: colon)...]
        } else {
            host = String(rest)
        }
        guard !host.isEmpty else { return nil }
        if let portText {
            guard let port = UInt16(portText) else { return nil }
            self.port = port
        } else {
            self.port = 4222
        }
    }

    /// "nats://host:port" (credentials left out).
    var description: String {
        host.contains(":") ? "nats://[\(host)]:\(port)" : "nats://\(host):\(port)"
    }
}

extension String {
    /// Decodes `%XX` escapes (as in URL user info); invalid escapes are kept as they are.
    func removingPercentEncoding() -> String {
        guard contains("%") else { return self }
        var bytes: [UInt8] = []
        var iterator = Array(utf8)[...]
        while let byte = iterator.popFirst() {
            if byte == 37, iterator.count >= 2,
               let value = UInt8(String(decoding: iterator.prefix(2), as: UTF8.self), radix: 16) {
                bytes.append(value)
                iterator = iterator.dropFirst(2)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
