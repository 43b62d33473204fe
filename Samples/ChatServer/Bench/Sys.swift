// Small POSIX helpers for chat-bench: clocks, sockets, a pthread mutex and condition, threads,
// resource limits and /proc readings of the server under test. Linux only.
#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// Nanoseconds on CLOCK_MONOTONIC (the one clock every timestamp of a run is taken from).
///
/// Thread-safe (a plain system call). Never fails on Linux.
@inline(__always)
func monotonicNanos() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
}

/// The text of `errno` for diagnostics.
func errnoText(_ code: Int32 = errno) -> String {
    String(cString: strerror(code))
}

/// A pthread mutex with a condition variable: the only blocking primitive chat-bench uses
/// (ThreadSanitizer understands it, unlike `Synchronization.Mutex`).
///
/// Thread-safe: every method may be called from any thread. `wait(until:)` returns at the
/// deadline even if nobody signals, so a broken worker cannot hang the run.
// Safe: `mutex` and `cond` are only used through pthread calls, which synchronise themselves.
final class PThreadGate: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let cond = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    /// Creates an unlocked mutex and a condition timed on CLOCK_MONOTONIC.
    init() {
        pthread_mutex_init(mutex, nil)
        var attr = pthread_condattr_t()
        pthread_condattr_init(&attr)
        pthread_condattr_setclock(&attr, CLOCK_MONOTONIC)
        pthread_cond_init(cond, &attr)
        pthread_condattr_destroy(&attr)
    }

    deinit {
        pthread_cond_destroy(cond)
        pthread_mutex_destroy(mutex)
        cond.deallocate()
        mutex.deallocate()
    }

    /// Runs `body` with the mutex held.
    func locked<T>(_ body: () throws -> T) rethrows -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }

    /// Wakes every thread blocked in `wait(until:while:)` so it re-checks its condition.
    func broadcast() {
        pthread_mutex_lock(mutex)
        pthread_cond_broadcast(cond)
        pthread_mutex_unlock(mutex)
    }

    /// Blocks while `keepWaiting()` is true (checked under the mutex), at most until the
    /// CLOCK_MONOTONIC instant `deadlineNs`. Returns `false` if the deadline passed first.
    func wait(untilNanos deadlineNs: UInt64, while keepWaiting: () -> Bool) -> Bool {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        while keepWaiting() {
            let now = monotonicNanos()
            if now >= deadlineNs { return false }
            // Wake at least every 100 ms: a signal sent between the check and the wait is
            // never lost (it is sent under the same mutex), this only bounds clock skew.
            let target = min(deadlineNs, now + 100_000_000)
            var ts = timespec(tv_sec: Int(target / 1_000_000_000), tv_nsec: Int(target % 1_000_000_000))
            pthread_cond_timedwait(cond, mutex, &ts)
        }
        return true
    }
}

/// A joinable OS thread running a `@Sendable` closure (a few workers, not one per client).
final class WorkerThread {
    private var thread: pthread_t

    /// Starts `body` on a new thread. Fails (fatal) only if the system cannot create threads.
    init(_ body: @escaping @Sendable () -> Void) {
        final class Box { let body: @Sendable () -> Void; init(_ b: @escaping @Sendable () -> Void) { body = b } }
        let context = Unmanaged.passRetained(Box(body)).toOpaque()
        var tid = pthread_t()
        let rc = pthread_create(&tid, nil, { raw in
            let box = Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue()
            box.body()
            return nil
        }, context)
        precondition(rc == 0, "pthread_create failed: \(errnoText(rc))")
        thread = tid
    }

    /// Waits for the thread's closure to return.
    func join() {
        pthread_join(thread, nil)
    }
}

/// Socket helpers (IPv4 and IPv6 loopback; the host is resolved numerically or by name).
enum Net {
    /// Resolves `host`:`port` to a socket address (first result), or nil.
    static func resolve(host: String, port: UInt16) -> (family: Int32, storage: sockaddr_storage, length: socklen_t)? {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_family = AF_UNSPEC
        var result: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &result) == 0, let first = result else { return nil }
        defer { freeaddrinfo(result) }
        var storage = sockaddr_storage()
        withUnsafeMutableBytes(of: &storage) { dst in
            dst.copyMemory(from: UnsafeRawBufferPointer(start: first.pointee.ai_addr, count: Int(first.pointee.ai_addrlen)))
        }
        return (first.pointee.ai_family, storage, first.pointee.ai_addrlen)
    }

    /// Starts a non-blocking connect. Returns the socket, or a negative errno on failure.
    /// `receiveBuffer` > 0 sets SO_RCVBUF before connecting (a small window for slow consumers).
    static func startConnect(family: Int32, address: sockaddr_storage, length: socklen_t, receiveBuffer: Int32 = 0) -> Int32 {
        let fd = socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        if fd < 0 { return -errno }
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        if receiveBuffer > 0 {
            var size = receiveBuffer
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        var addr = address
        let rc = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, length) }
        }
        if rc != 0 && errno != EINPROGRESS {
            let e = errno
            close(fd)
            return -e
        }
        return fd
    }

    /// The pending error of a socket whose non-blocking connect finished (0 = connected).
    static func socketError(_ fd: Int32) -> Int32 {
        var err: Int32 = 0
        var len = socklen_t(MemoryLayout<Int32>.size)
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len)
        return err
    }

    /// Closes with SO_LINGER 0 (a reset, no TIME_WAIT left on our side).
    static func abortiveClose(_ fd: Int32) {
        var lg = linger(l_onoff: 1, l_linger: 0)
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, socklen_t(MemoryLayout<linger>.size))
        close(fd)
    }
}

/// Raises RLIMIT_NOFILE so `needed` descriptors fit; returns the soft limit in force afterwards.
func raiseFileLimit(to needed: Int) -> Int {
    var lim = rlimit()
    getrlimit(RLIMIT_NOFILE_CONSTANT, &lim)
    if Int(lim.rlim_cur) >= needed { return Int(lim.rlim_cur) }
    var want = lim
    want.rlim_cur = rlim_t(needed)
    if Int(want.rlim_max) < needed { want.rlim_max = rlim_t(needed) }  // root may raise the hard limit
    if setrlimit(RLIMIT_NOFILE_CONSTANT, &want) != 0 {
        want.rlim_cur = lim.rlim_max
        want.rlim_max = lim.rlim_max
        _ = setrlimit(RLIMIT_NOFILE_CONSTANT, &want)
    }
    getrlimit(RLIMIT_NOFILE_CONSTANT, &lim)
    return Int(lim.rlim_cur)
}

private let RLIMIT_NOFILE_CONSTANT = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)

/// Readings of another process from /proc (the server under test).
enum ProcStats {
    /// utime + stime of `pid` in seconds, or nil if /proc/PID/stat cannot be read.
    static func cpuSeconds(pid: Int32) -> Double? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = text.lastIndex(of: ")") else { return nil }
        let fields = text[text.index(after: close)...].split(separator: " ")
        // After the command name: state is field 3 (index 0), utime field 14, stime field 15.
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        return (user + system) / (ticks > 0 ? ticks : 100)
    }

    /// A `VmXXX:` line of /proc/PID/status in MiB (e.g. "VmHWM", "VmRSS"), or nil.
    static func statusMiB(pid: Int32, field: String) -> Double? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix(field + ":") {
            let parts = line.split(separator: " ", omittingEmptySubsequences: true)
            if parts.count >= 2, let kb = Double(parts[1]) { return kb / 1024 }
        }
        return nil
    }

    /// Resets the peak RSS (VmHWM) of `pid` to its current RSS (`echo 5 > /proc/PID/clear_refs`),
    /// so a run's peak is its own. Returns false if not permitted.
    static func resetPeakRSS(pid: Int32) -> Bool {
        let fd = open("/proc/\(pid)/clear_refs", O_WRONLY)
        if fd < 0 { return false }
        defer { close(fd) }
        return write(fd, "5", 1) == 1
    }
}
