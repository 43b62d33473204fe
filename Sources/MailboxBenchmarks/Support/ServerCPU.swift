#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The CPU time another process (the NATS server a benchmark talks to) has used, so a benchmark
/// can report what its traffic cost the server.
///
/// Two sources, the precise one first:
/// - `proc`: the pid from a pid file (`MAILBOX_NATS_PID_FILE`, which `Tests/Integration/nats.sh`
///   sets); `cpuSeconds` reads utime + stime of every thread from `/proc/<pid>/stat` (clock-tick
///   resolution, 10 ms here). Spans of a second or more are what the benchmarks measure.
/// - `varz`: without a pid file, the monitoring endpoint's `/varz` (`MAILBOX_NATS_MONITOR_URL`),
///   whose `cpu` is the server's own percentage over roughly its last second: an estimate,
///   `cpu% / 100 × seconds`, for a span that kept the server busy for a second or more.
enum ServerCPU {
    /// Where the figures come from; the `server_cpu_source` field.
    enum Source: Sendable {
        case proc(pid: Int32)
        case varz(host: String, port: UInt16)

        var name: String {
            switch self {
            case .proc: return "proc"
            case .varz: return "varz-estimate"
            }
        }
    }

    /// The source the environment names, or nil (then CPU fields are null).
    static func sourceFromEnvironment() -> Source? {
        if let path = environment("MAILBOX_NATS_PID_FILE"), let pid = readPID(path), cpuSeconds(pid: pid) != nil {
            return .proc(pid: pid)
        }
        if let url = environment("MAILBOX_NATS_MONITOR_URL"), let (host, port) = hostAndPort(ofHTTPURL: url) {
            return .varz(host: host, port: port)
        }
        return nil
    }

    /// Measures the server CPU `body` causes: seconds of server CPU, or nil when unknown.
    static func measure<T>(_ source: Source?, _ body: () -> T) -> (serverSeconds: Double?, result: T) {
        switch source {
        case nil:
            return (nil, body())
        case .proc(let pid)?:
            let before = cpuSeconds(pid: pid)
            let result = body()
            let after = cpuSeconds(pid: pid)
            guard let before, let after else { return (nil, result) }
            return (after - before, result)
        case .varz(let host, let port)?:
            let start = MonotonicClock.nanoseconds()
            let result = body()
            let seconds = Double(MonotonicClock.nanoseconds() - start) / 1e9
            guard let percent = varzCPUPercent(host: host, port: port) else { return (nil, result) }
            return (percent / 100 * seconds, result)
        }
    }

    /// utime + stime of process `pid` (all its threads), in seconds; nil if it cannot be read.
    static func cpuSeconds(pid: Int32) -> Double? {
        guard let text = readSmallFile("/proc/\(pid)/stat") else { return nil }
        // "pid (comm) state ppid ..." — comm may hold spaces and parentheses: split after the last ')'.
        guard let close = text.utf8.lastIndex(of: UInt8(ascii: ")")) else { return nil }
        let fields = text[text.utf8.index(after: close)...].split(separator: " ")
        // fields[0] is field 3 (state); utime is field 14, stime field 15.
        guard fields.count > 12, let utime = Double(fields[11]), let stime = Double(fields[12]) else { return nil }
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        return (utime + stime) / (ticks > 0 ? ticks : 100)
    }

    // MARK: - Helpers

    static func environment(_ name: String) -> String? {
        guard let value = getenv(name) else { return nil }
        let text = String(cString: value)
        return text.isEmpty ? nil : text
    }

    private static func readPID(_ path: String) -> Int32? {
        readSmallFile(path).flatMap { Int32($0.filter { $0.isNumber }) }
    }

    /// The whole of a small text file (a pid file, a `/proc` stat line), or nil.
    private static func readSmallFile(_ path: String) -> String? {
        guard let file = fopen(path, "r") else { return nil }
        defer { fclose(file) }
        var buffer = [CChar](repeating: 0, count: 4096)
        let count = fread(&buffer, 1, buffer.count - 1, file)
        guard count > 0 else { return nil }
        return buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }

    /// `host` and `port` of `http://host:port[/...]`.
    static func hostAndPort(ofHTTPURL url: String) -> (String, UInt16)? {
        guard url.hasPrefix("http://") else { return nil }
        let authority = url.dropFirst("http://".count).prefix { $0 != "/" }
        guard let colon = authority.lastIndex(of: ":"), let port = UInt16(authority[authority.index(after: colon)...]) else {
            return nil
        }
        return (String(authority[..<colon]), port)
    }

    /// `/varz`'s `cpu` (a percentage), fetched with a blocking HTTP/1.0 GET; nil on any failure.
    private static func varzCPUPercent(host: String, port: UInt16) -> Double? {
        guard let body = httpGet(host: host, port: port, path: "/varz") else { return nil }
        // The monitoring JSON is pretty-printed: find `"cpu": <number>`.
        guard let key = body.range(of: "\"cpu\":") else { return nil }
        let number = body[key.upperBound...].drop { $0 == " " }.prefix { $0.isNumber || $0 == "." || $0 == "-" || $0 == "e" }
        return Double(number)
    }

    private static func httpGet(host: String, port: UInt16, path: String) -> String? {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        guard inet_pton(AF_INET, host == "localhost" ? "127.0.0.1" : host, &address.sin_addr) == 1 else { return nil }
        #if canImport(Glibc)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else { return nil }
        let request = "GET \(path) HTTP/1.0\r\nHost: \(host)\r\n\r\n"
        guard request.withCString({ write(fd, $0, strlen($0)) }) > 0 else { return nil }
        var response: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let count = read(fd, &chunk, chunk.count)
            if count <= 0 { break }
            response.append(contentsOf: chunk[..<count])
        }
        return String(decoding: response, as: UTF8.self)
    }
}
