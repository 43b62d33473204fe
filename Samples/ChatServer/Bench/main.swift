// chat-bench: a load generator for IRC servers. See README.md beside this file.
//
//   chat-bench <burst|paced|slow-consumer|idle> [options]
//
// Prints exactly one JSON line per run on stdout (diagnostics go to stderr). Exit status 0 when
// the run's "ok" is true, 1 when the run completed but is not ok, 2 on a usage error.
#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization
import struct Mailbox.LockedValueBox

let usage = """
usage: chat-bench <burst|paced|slow-consumer|idle> [options]
  --host H              server address (default 127.0.0.1)
  --port P              server port (default 6667)
  --label NAME          "server" field of the JSON line (default host:port)
  --clients C           clients (burst/slow-consumer 50, paced 200, idle 10000)
  --channels K          channels; client i joins channel i % K (burst/slow-consumer 1, paced 10)
  --messages M          messages per client (burst/slow-consumer, default 200)
  --rate R              paced: messages per second per client (default 2)
  --duration D          paced: seconds of sending (default 10)
  --slow S              slow-consumer: clients that join and never read (default 1)
  --slow-rcvbuf BYTES   slow-consumer: their SO_RCVBUF (default 4096)
  --hold SECONDS        idle: keep the connections open this long after registering (default 0)
  --deadline SECONDS    the whole run ends by then (default 60)
  --password PASS       send PASS before NICK/USER
  --oper NAME:PASS      send OPER after registering (e.g. to set a flood-exempt user mode)
  --umode MODES         send MODE <nick> MODES after registering (e.g. +F on ngIRCd)
  --server-pid PID      read the server's CPU time and peak RSS from /proc/PID
  --threads T           worker threads (default 2)
  --connect-window N    connections between connect and registration at once (default 8;
                        keep it below the server's listen backlog: ngIRCd's is 10)
  --batch N             burst: lines a sender writes per turn (default 16)
  --pad BYTES           append this many filler bytes to every PRIVMSG (default 0)
  --run-id ID           nick/channel tag, 1-3 alphanumerics (default random)
  --verbose             progress on stderr
"""

struct Options {
    var mode = Mode.burst
    var host = "127.0.0.1"
    var port: UInt16 = 6667
    var label: String?
    var clients: Int?
    var channels: Int?
    var messages = 200
    var rate = 2.0
    var duration = 10.0
    var slow = 1
    var slowReceiveBuffer: Int32 = 4096
    var hold = 0.0
    var deadline = 60.0
    var password: String?
    var oper: (name: String, password: String)?
    var umode: String?
    var serverPid: Int32?
    var threads = 2
    var connectWindow = 8
    var batch = 16
    var pad = 0
    var runId: String?
    var verbose = false
}

func usageExit(_ message: String) -> Never {
    logError("chat-bench: \(message)\n\(usage)")
    exit(2)
}

func parseOptions(_ args: [String]) -> Options {
    var o = Options()
    guard let first = args.first else { usageExit("missing mode") }
    if first == "-h" || first == "--help" {
        print(usage)
        exit(0)
    }
    guard let mode = Mode(rawValue: first) else { usageExit("unknown mode \(first)") }
    o.mode = mode
    var i = 1
    func value() -> String {
        i += 1
        guard i < args.count else { usageExit("\(args[i - 1]) needs a value") }
        return args[i]
    }
    func int(_ s: String, min lo: Int = 0) -> Int {
        guard let v = Int(s), v >= lo else { usageExit("bad number \(s)") }
        return v
    }
    func double(_ s: String) -> Double {
        guard let v = Double(s), v >= 0, v.isFinite else { usageExit("bad number \(s)") }
        return v
    }
    while i < args.count {
        let a = args[i]
        switch a {
        case "--host": o.host = value()
        case "--port":
            guard let p = UInt16(value()), p > 0 else { usageExit("bad port") }
            o.port = p
        case "--label", "--server": o.label = value()
        case "--clients", "--connections": o.clients = int(value(), min: 1)
        case "--channels": o.channels = int(value(), min: 1)
        case "--messages": o.messages = int(value(), min: 1)
        case "--rate": o.rate = double(value())
        case "--duration": o.duration = double(value())
        case "--slow": o.slow = int(value())
        case "--slow-rcvbuf": o.slowReceiveBuffer = Int32(int(value()))
        case "--hold": o.hold = double(value())
        case "--deadline": o.deadline = double(value())
        case "--password": o.password = value()
        case "--oper":
            let v = value()
            guard let colon = v.firstIndex(of: ":") else { usageExit("--oper wants NAME:PASSWORD") }
            o.oper = (String(v[..<colon]), String(v[v.index(after: colon)...]))
        case "--umode": o.umode = value()
        case "--server-pid":
            guard let p = Int32(value()), p > 0 else { usageExit("bad pid") }
            o.serverPid = p
        case "--threads": o.threads = int(value(), min: 1)
        case "--connect-window": o.connectWindow = int(value(), min: 1)
        case "--batch": o.batch = int(value(), min: 1)
        case "--pad":
            o.pad = int(value())
            if o.pad > 400 { usageExit("--pad at most 400 (a line must stay under 512 bytes)") }
        case "--run-id":
            let v = value()
            guard (1...3).contains(v.count), v.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) else {
                usageExit("--run-id wants 1-3 letters or digits")
            }
            o.runId = v
        case "--verbose", "-v": o.verbose = true
        default: usageExit("unknown option \(a)")
        }
        i += 1
    }
    return o
}

/// A short random tag so the nicks and channels of one run never meet another run's.
func randomRunId() -> String {
    let alphabet = Array("abcdefghijklmnopqrstuvwxyz0123456789")
    var g = SystemRandomNumberGenerator()
    return String((0..<3).map { _ in alphabet[Int(g.next() % UInt64(alphabet.count))] })
}

// MARK: - JSON

struct JSONLine {
    private var parts: [String] = []
    mutating func add(_ key: String, _ value: String) { parts.append("\"\(key)\":\"\(escape(value))\"") }
    mutating func add(_ key: String, _ value: Int) { parts.append("\"\(key)\":\(value)") }
    mutating func add(_ key: String, _ value: Bool) { parts.append("\"\(key)\":\(value)") }
    mutating func add(_ key: String, _ value: Double?, decimals: Int = 3) {
        if let v = value, v.isFinite {
            parts.append("\"\(key)\":" + String(format: "%.\(decimals)f", v))
        } else {
            parts.append("\"\(key)\":null")
        }
    }
    mutating func addNullableString(_ key: String, _ value: String?) {
        if let v = value { add(key, v) } else { parts.append("\"\(key)\":null") }
    }
    var text: String { "{" + parts.joined(separator: ",") + "}" }

    private func escape(_ s: String) -> String {
        var out = ""
        for u in s.unicodeScalars {
            switch u {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if u.value < 0x20 { out += String(format: "\\u%04x", u.value) } else { out.unicodeScalars.append(u) }
            }
        }
        return out
    }
}

/// The nearest-rank percentile of sorted nanoseconds, in microseconds.
func percentileMicros(_ sorted: [UInt64], _ p: Double) -> Double? {
    guard !sorted.isEmpty else { return nil }
    let rank = Int((p * Double(sorted.count)).rounded(.up))
    let index = min(max(rank - 1, 0), sorted.count - 1)
    return Double(sorted[index]) / 1000
}

// MARK: - Run

func main() -> Int32 {
    signal(SIGPIPE, SIG_IGN)
    let o = parseOptions(Array(CommandLine.arguments.dropFirst()))
    let mode = o.mode
    let clients = o.clients ?? (mode == .paced ? 200 : mode == .idle ? 10_000 : 50)
    let channels = mode == .idle ? 1 : (o.channels ?? (mode == .paced ? 10 : 1))
    let slow = mode == .slowConsumer ? o.slow : 0
    let runId = o.runId ?? randomRunId()
    if clients + slow > 99_999 { usageExit("at most 99,999 clients (nicks are at most 9 characters)") }
    if mode != .idle && channels > clients { usageExit("more channels than clients") }
    let messages = mode == .paced ? max(1, Int((o.rate * o.duration).rounded())) : o.messages
    if mode == .paced && o.rate <= 0 { usageExit("--rate must be > 0") }

    let fdLimit = raiseFileLimit(to: clients + slow + 64 + 2 * o.threads)
    if fdLimit < clients + slow + 16 {
        usageExit("RLIMIT_NOFILE is \(fdLimit), too low for \(clients + slow) connections")
    }
    guard let target = Net.resolve(host: o.host, port: o.port) else { usageExit("cannot resolve \(o.host)") }
    let threads = min(o.threads, clients + slow)
    let plan = Plan(
        mode: mode, family: target.family, address: target.storage, addressLength: target.length,
        clients: clients, slow: slow, channels: channels, messagesPerClient: messages,
        rate: o.rate, threads: threads,
        connectWindowPerWorker: max(1, o.connectWindow / threads),
        runId: runId, password: o.password, oper: o.oper, userModes: o.umode,
        burstBatch: o.batch, slowReceiveBuffer: o.slowReceiveBuffer, padding: o.pad)
    let label = o.label ?? (o.host.contains(":") ? "[\(o.host)]:\(o.port)" : "\(o.host):\(o.port)")
    let expected = plan.expectedDeliveries
    let shared = Shared(needReady: clients + slow, expected: expected)

    let pid = o.serverPid
    var peakReset = false
    if let pid {
        peakReset = ProcStats.resetPeakRSS(pid: pid)
    }
    let rssBefore = pid.flatMap { ProcStats.statusMiB(pid: $0, field: "VmRSS") }
    let cpuAtStart = pid.flatMap { ProcStats.cpuSeconds(pid: $0) }

    let begin = monotonicNanos()
    let deadlineNs = begin + UInt64(o.deadline * 1e9)
    if o.verbose { logError("chat-bench \(mode.rawValue): run \(runId), \(clients) clients + \(slow) slow, \(channels) channels, \(messages) messages each, \(threads) threads") }

    // Workers, each with a wake pipe.
    var wakeWriters: [Int32] = []
    var workers: [WorkerThread] = []
    let results = LockedValueBox<[WorkerResult]>([])
    for w in 0..<threads {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { usageExit("pipe: \(errnoText())") }
        _ = fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK)
        _ = fcntl(fds[1], F_SETFL, fcntl(fds[1], F_GETFL) | O_NONBLOCK)
        wakeWriters.append(fds[1])
        let readEnd = fds[0]
        let verbose = o.verbose
        workers.append(WorkerThread {
            let r = runWorker(index: w, plan: plan, shared: shared, wakeFd: readEnd, verbose: verbose)
            results.withLockedValue { $0.append(r) }
        })
    }
    func wakeAll() {
        var b: UInt8 = 1
        for fd in wakeWriters { _ = write(fd, &b, 1) }
    }

    // Setup: every client registered, joined and past the barrier (or registered, for idle).
    let allReady = shared.gate.wait(untilNanos: deadlineNs) {
        shared.ready.load(ordering: .sequentiallyConsistent) < shared.needReady
            && shared.failed.load(ordering: .sequentiallyConsistent) == 0
    }
    let setupOK = allReady && shared.failed.load(ordering: .sequentiallyConsistent) == 0
    let readyCount = shared.ready.load(ordering: .sequentiallyConsistent)
    let setupEnd = monotonicNanos()
    if o.verbose { logError("setup: \(readyCount)/\(shared.needReady) ready after \(Double(setupEnd - begin) / 1e9) s") }

    var cpuStart = pid.flatMap { ProcStats.cpuSeconds(pid: $0) }
    var rssAfter: Double?
    var endNs = setupEnd
    var timedOut = false
    if setupOK {
        if mode == .idle {
            cpuStart = cpuAtStart
            rssAfter = pid.flatMap { ProcStats.statusMiB(pid: $0, field: "VmRSS") }
            shared.startNs.store(setupEnd, ordering: .sequentiallyConsistent)
            shared.phase.store(Phase.running, ordering: .releasing)
            wakeAll()
            if o.hold > 0 {
                let holdEnd = min(deadlineNs, monotonicNanos() + UInt64(o.hold * 1e9))
                _ = shared.gate.wait(untilNanos: holdEnd) { shared.failed.load(ordering: .sequentiallyConsistent) == 0 }
                rssAfter = pid.flatMap { ProcStats.statusMiB(pid: $0, field: "VmRSS") } ?? rssAfter
            }
            endNs = setupEnd
        } else {
            let t0 = monotonicNanos()
            shared.startNs.store(t0, ordering: .sequentiallyConsistent)
            shared.phase.store(Phase.running, ordering: .releasing)
            wakeAll()
            let done = shared.gate.wait(untilNanos: deadlineNs) {
                shared.delivered.load(ordering: .sequentiallyConsistent) < expected
                    && shared.failed.load(ordering: .sequentiallyConsistent) == 0
            }
            let completed = shared.completedNs.load(ordering: .sequentiallyConsistent)
            endNs = completed != 0 ? completed : monotonicNanos()
            timedOut = !done
        }
    }
    let cpuEnd = pid.flatMap { ProcStats.cpuSeconds(pid: $0) }
    let peak = pid.flatMap { ProcStats.statusMiB(pid: $0, field: "VmHWM") }
    shared.phase.store(Phase.stopping, ordering: .releasing)
    wakeAll()
    for w in workers { w.join() }
    for fd in wakeWriters { close(fd) }

    // Merge.
    var merged = WorkerResult()
    var allLatencies: [UInt64] = []
    var slowQuit = Set<Int>()
    var slowClosed = Set<Int>()
    for r in results.withLockedValue({ $0 }) {
        merged.unique += r.unique
        merged.duplicated += r.duplicated
        merged.reordered += r.reordered
        merged.unexpected += r.unexpected
        merged.sent += r.sent
        merged.errorReplies += r.errorReplies
        merged.disconnected += r.disconnected
        merged.pingsAnswered += r.pingsAnswered
        merged.slowBytesRead += r.slowBytesRead
        slowQuit.formUnion(r.slowQuitSeen)
        slowClosed.formUnion(r.slowClosed)
        allLatencies.append(contentsOf: r.latenciesNs)
    }
    allLatencies.sort()
    let t0 = shared.startNs.load(ordering: .sequentiallyConsistent)
    let measuredNs = setupOK && mode != .idle && endNs > t0 ? endNs - t0 : 0
    let elapsed = mode == .idle ? Double(setupEnd - begin) / 1e9 : Double(measuredNs) / 1e9
    let lost = max(0, expected - merged.unique)
    let serverCpu: Double? = {
        guard let a = cpuStart, let b = cpuEnd else { return nil }
        return b - a
    }()
    let firstError = shared.firstError.withLockedValue { $0 }

    var ok = setupOK && lost == 0 && merged.duplicated == 0 && merged.reordered == 0 && merged.disconnected == 0
    if mode == .idle { ok = setupOK && readyCount == clients }

    var j = JSONLine()
    j.add("bench", "chat")
    j.add("mode", mode.rawValue)
    j.add("server", label)
    j.add("clients", clients)
    j.add("channels", mode == .idle ? 0 : channels)
    j.add("messages", mode == .idle ? 0 : messages)
    j.add("deliveries", merged.unique)
    j.add("expected", expected)
    j.add("deliveries_per_s", elapsed > 0 && mode != .idle ? Double(merged.unique) / elapsed : nil, decimals: 1)
    j.add("p50_us", percentileMicros(allLatencies, 0.50), decimals: 1)
    j.add("p99_us", percentileMicros(allLatencies, 0.99), decimals: 1)
    j.add("max_us", allLatencies.last.map { Double($0) / 1000 }, decimals: 1)
    j.add("lost", lost)
    j.add("duplicated", merged.duplicated)
    j.add("reordered", merged.reordered)
    j.add("server_cpu_s", serverCpu)
    j.add("server_peak_rss_mb", peak, decimals: 1)
    j.add("elapsed_s", elapsed)
    j.add("setup_s", Double(setupEnd - begin) / 1e9)
    j.add("sent", merged.sent)
    j.add("unexpected", merged.unexpected)
    j.add("error_replies", merged.errorReplies)
    j.add("disconnected", merged.disconnected)
    j.add("timed_out", timedOut || !allReady)
    j.add("threads", threads)
    if o.pad > 0 { j.add("pad", o.pad) }
    j.add("run_id", runId)
    if mode == .paced {
        j.add("rate", o.rate, decimals: 2)
        j.add("duration_s", o.duration, decimals: 2)
    }
    if mode == .slowConsumer {
        let gone = slowQuit.union(slowClosed)
        j.add("slow_clients", slow)
        j.add("slow_disconnected", gone.count)
        j.add("slow_quit_seen", slowQuit.count)
        j.add("slow_bytes_read_at_end", merged.slowBytesRead)
    }
    if mode == .idle {
        j.add("connections", readyCount)
        j.add("rss_before_mb", rssBefore, decimals: 1)
        j.add("rss_after_mb", rssAfter, decimals: 1)
        let perConn: Double? = {
            guard let a = rssBefore, let b = rssAfter, readyCount > 0 else { return nil }
            return (b - a) * 1024 / Double(readyCount)
        }()
        j.add("rss_per_conn_kb", perConn, decimals: 2)
        j.add("connects_per_s", elapsed > 0 ? Double(readyCount) / elapsed : nil, decimals: 1)
        j.add("pings_answered", merged.pingsAnswered)
    }
    if pid != nil { j.add("peak_rss_reset", peakReset) }
    j.addNullableString("error", setupOK ? firstError : (firstError ?? "setup incomplete: \(readyCount)/\(shared.needReady) clients ready"))
    j.add("ok", ok)
    var line = Array((j.text + "\n").utf8)  // one unbuffered write: the line is out when we exit
    _ = write(1, &line, line.count)
    return ok ? 0 : 1
}

exit(main())
