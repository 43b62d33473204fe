#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Process-wide settings a server wants before it accepts thousands of connections.
///
/// Both change state of the whole process; call them once at start-up (they are thread-safe as
/// the underlying calls are, but they race with anything else changing the same settings).
public enum ProcessLimits {
    /// Raises the soft open-file limit (`RLIMIT_NOFILE`) to the hard limit and returns the soft
    /// limit now in force: unchanged if raising fails, -1 if the limit cannot even be read; on
    /// Darwin capped at `OPEN_MAX` when the hard limit is unlimited. Each connection costs one
    /// descriptor (two for a client and server in one process).
    @discardableResult
    public static func raiseOpenFileLimit() -> Int {
        #if canImport(Glibc)
        let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
        #else
        let resource = RLIMIT_NOFILE
        #endif
        var limit = rlimit()
        guard getrlimit(resource, &limit) == 0 else { return -1 }
        var wanted = limit.rlim_max
        #if canImport(Darwin)
        if wanted == RLIM_INFINITY { wanted = rlim_t(OPEN_MAX) }
        #endif
        if wanted > limit.rlim_cur {
            var raised = limit
            raised.rlim_cur = wanted
            if setrlimit(resource, &raised) == 0 { limit = raised }
        }
        return limit.rlim_cur >= rlim_t(Int.max) ? Int.max : Int(limit.rlim_cur)
    }

    /// Ignores SIGPIPE for the whole process, so a write to a peer that has gone away fails with
    /// `EPIPE` instead of killing the process. The socket layer already writes with
    /// `MSG_NOSIGNAL` (Linux) or `SO_NOSIGPIPE` (Darwin); this also covers other code's writes.
    public static func ignoreSIGPIPE() {
        _ = signal(SIGPIPE, SIG_IGN)
    }
}
