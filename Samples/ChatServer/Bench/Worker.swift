// One worker thread: a poll() loop over its share of the client connections (client i belongs to
// worker i % threads). It connects and registers them, joins their channel, waits for the
// barrier, sends (burst or paced) and accounts every PRIVMSG it receives. Everything in this
// file is confined to the worker's own thread; it talks to the others only through `Shared`.
#if canImport(Glibc)
import Glibc
#endif
import Synchronization

private enum ConnState {
    case pending, connecting, registering, joining, ready, silent, closed
}

/// One client connection (owned by one worker, never shared).
private final class Conn {
    let id: Int
    let channel: Int
    let isSlow: Bool
    let nick: String
    var fd: Int32 = -1
    var state = ConnState.pending
    var registered = false
    var joined = false
    /// Bytes of an incomplete line left over from the last read.
    var rem: [UInt8] = []
    var out: [UInt8] = []
    var outOff = 0
    /// Channel members seen so far (NAMES and JOINs), until the barrier is passed.
    var members: Set<Int> = []
    /// Messages sent so far (healthy senders).
    var sent = 0
    var nextSendNs: UInt64 = 0
    /// "PRIVMSG #chan :<id> " (healthy senders).
    var linePrefix: [UInt8] = []
    /// Per sender slot: a bitset of the sequence numbers received (duplicates).
    var seen: [UInt64] = []
    /// Per sender slot: the highest sequence number received so far (reordering).
    var maxSeq: [Int32] = []

    init(id: Int, channel: Int, isSlow: Bool, nick: String) {
        self.id = id
        self.channel = channel
        self.isSlow = isSlow
        self.nick = nick
    }
}

private let SP: UInt8 = 0x20
private let COLON: UInt8 = 0x3A
private let readCapacity = 256 * 1024

/// Runs one worker to completion on the calling thread and returns what it measured.
func runWorker(index: Int, plan: Plan, shared: Shared, wakeFd: Int32, verbose: Bool) -> WorkerResult {
    let worker = Worker(index: index, plan: plan, shared: shared, wakeFd: wakeFd, verbose: verbose)
    return worker.run()
}

private final class Worker {
    let index: Int
    let plan: Plan
    let shared: Shared
    let wakeFd: Int32
    let verbose: Bool
    var conns: [Conn] = []
    /// Slot 0 is the wake pipe; slot i + 1 belongs to conns[i].
    var pollfds: [pollfd] = []
    var nextToConnect = 0
    /// Indices (into conns) of connections between connect and registration.
    var inflight = Set<Int>()
    var scratchFds: [pollfd] = []
    var scratchSlots: [Int] = []
    var lastSweepNs: UInt64 = 0
    var result = WorkerResult()
    let readBuf = UnsafeMutablePointer<UInt8>.allocate(capacity: readCapacity)
    var params: [(Int, Int)] = []
    let nickPrefix: [UInt8]
    let wordsPerSender: Int
    var running = false
    var periodNs: UInt64 = 0
    var channelNames: [[UInt8]] = []
    /// " xxxx…" appended to every PRIVMSG when --pad is set.
    var padBytes: [UInt8] = []

    init(index: Int, plan: Plan, shared: Shared, wakeFd: Int32, verbose: Bool) {
        self.index = index
        self.plan = plan
        self.shared = shared
        self.wakeFd = wakeFd
        self.verbose = verbose
        nickPrefix = Array(plan.nickPrefix.utf8)
        wordsPerSender = (plan.messagesPerClient + 63) / 64
        if plan.rate > 0 { periodNs = UInt64(1e9 / plan.rate) }
        channelNames = (0..<max(plan.channels, 1)).map { Array(plan.channelName($0).utf8) }
        params.reserveCapacity(16)
        if plan.padding > 0 { padBytes = [SP] + [UInt8](repeating: 0x78, count: plan.padding) }
    }

    deinit { readBuf.deallocate() }

    // MARK: - Loop

    func run() -> WorkerResult {
        let total = plan.clients + plan.slow
        var id = index
        while id < total {
            let c = Conn(id: id, channel: plan.mode == .idle ? -1 : plan.channel(of: id),
                         isSlow: id >= plan.clients, nick: plan.nick(id))
            if plan.mode != .idle && !c.isSlow {
                let slots = plan.senderSlots
                c.seen = [UInt64](repeating: 0, count: slots * wordsPerSender)
                c.maxSeq = [Int32](repeating: -1, count: slots)
                c.linePrefix = Array("PRIVMSG \(plan.channelName(c.channel)) :\(id) ".utf8)
            }
            conns.append(c)
            id += plan.threads
        }
        pollfds = [pollfd(fd: wakeFd, events: Int16(POLLIN), revents: 0)]
        pollfds.append(contentsOf: repeatElement(pollfd(fd: -1, events: 0, revents: 0), count: conns.count))
        if plan.mode != .idle {
            let expectedHere = conns.filter { !$0.isSlow }.count * plan.messagesPerClient * max(1, plan.senderSlots - 1)
            result.latenciesNs.reserveCapacity(min(expectedHere, 20_000_000))
        }
        startConnects()

        while true {
            let phase = shared.phase.load(ordering: .acquiring)
            if phase == Phase.stopping { break }
            if phase == Phase.running && !running { beginRunning() }
            var timeout: Int32 = 1000
            if running && plan.mode != .idle {
                timeout = produce()
            }
            if plan.mode == .idle && !running {
                // Registering thousands of idle connections: poll only the few in flight, and
                // sweep the registered ones (PINGs, closes) every 100 ms.
                let now = monotonicNanos()
                if now - lastSweepNs >= 100_000_000 || inflight.isEmpty {
                    lastSweepNs = now
                    if !pollAll(timeout: inflight.isEmpty ? 100 : 0) { break }
                }
                if !inflight.isEmpty && !pollInflight(timeout: 20) { break }
                continue
            }
            if !pollAll(timeout: timeout) { break }
        }
        teardown()
        return result
    }

    /// Polls every connection; false on a fatal poll error.
    func pollAll(timeout: Int32) -> Bool {
        let n = poll(&pollfds, nfds_t(pollfds.count), timeout)
        if n < 0 {
            if errno == EINTR { return true }
            shared.fail("poll: \(errnoText())")
            return false
        }
        if n == 0 { return true }
        if pollfds[0].revents != 0 { drainWakePipe() }
        for i in 0..<conns.count {
            let re = pollfds[i + 1].revents
            if re != 0 {
                pollfds[i + 1].revents = 0
                handle(conns[i], slot: i + 1, revents: re)
            }
        }
        return true
    }

    /// Polls the wake pipe and the connections in flight only.
    func pollInflight(timeout: Int32) -> Bool {
        scratchFds.removeAll(keepingCapacity: true)
        scratchSlots.removeAll(keepingCapacity: true)
        scratchFds.append(pollfds[0])
        scratchSlots.append(0)
        for i in inflight {
            scratchFds.append(pollfds[i + 1])
            scratchSlots.append(i + 1)
        }
        let n = poll(&scratchFds, nfds_t(scratchFds.count), timeout)
        if n < 0 {
            if errno == EINTR { return true }
            shared.fail("poll: \(errnoText())")
            return false
        }
        if n == 0 { return true }
        if scratchFds[0].revents != 0 { drainWakePipe() }
        for k in 1..<scratchFds.count where scratchFds[k].revents != 0 {
            let slot = scratchSlots[k]
            handle(conns[slot - 1], slot: slot, revents: scratchFds[k].revents)
        }
        return true
    }

    func drainWakePipe() {
        var scratch = [UInt8](repeating: 0, count: 64)
        _ = read(wakeFd, &scratch, scratch.count)
    }

    func beginRunning() {
        running = true
        let start = shared.startNs.load(ordering: .acquiring)
        if plan.mode == .paced {
            for c in conns where !c.isSlow {
                // Spread the clients' first messages evenly over one period.
                c.nextSendNs = start + UInt64(Double(periodNs) * Double(c.id) / Double(max(plan.clients, 1)))
            }
        }
    }

    /// Sends what is due; returns the poll timeout in ms until more will be due.
    func produce() -> Int32 {
        let m = plan.messagesPerClient
        var timeout: Int32 = 1000
        if plan.mode == .paced {
            let now = monotonicNanos()
            var nextDue = UInt64.max
            for (i, c) in conns.enumerated() where !c.isSlow && c.state == .ready && c.sent < m {
                if c.nextSendNs <= now {
                    appendMessage(c, timestamp: monotonicNanos())
                    c.nextSendNs += periodNs
                    flush(c, slot: i + 1)
                }
                if c.sent < m { nextDue = min(nextDue, c.nextSendNs) }
            }
            if nextDue != UInt64.max {
                let now2 = monotonicNanos()
                timeout = nextDue <= now2 ? 0 : Int32(min(1000, (nextDue - now2 + 999_999) / 1_000_000))
            }
        } else {
            var more = false
            for (i, c) in conns.enumerated() where !c.isSlow && c.state == .ready && c.sent < m {
                if c.outOff < c.out.count { continue }  // blocked: waits for POLLOUT
                let k = min(plan.burstBatch, m - c.sent)
                let ts = monotonicNanos()
                for _ in 0..<k { appendMessage(c, timestamp: ts) }
                flush(c, slot: i + 1)
                if c.sent < m && c.outOff >= c.out.count && c.state == .ready { more = true }
            }
            timeout = more ? 0 : 1000
        }
        return timeout
    }

    @inline(__always)
    func appendMessage(_ c: Conn, timestamp: UInt64) {
        c.out.append(contentsOf: c.linePrefix)
        appendDecimal(UInt64(c.sent), to: &c.out)
        c.out.append(SP)
        appendDecimal(timestamp, to: &c.out)
        if !padBytes.isEmpty { c.out.append(contentsOf: padBytes) }
        c.out.append(0x0D)
        c.out.append(0x0A)
        c.sent += 1
        result.sent += 1
    }

    // MARK: - Connections

    func startConnects() {
        while inflight.count < plan.connectWindowPerWorker && nextToConnect < conns.count {
            let i = nextToConnect
            nextToConnect += 1
            let c = conns[i]
            let fd = Net.startConnect(family: plan.family, address: plan.address, length: plan.addressLength,
                                      receiveBuffer: c.isSlow ? plan.slowReceiveBuffer : 0)
            if fd < 0 {
                c.state = .closed
                shared.fail("\(c.nick): connect: \(errnoText(-fd))")
                continue
            }
            c.fd = fd
            c.state = .connecting
            pollfds[i + 1] = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            inflight.insert(i)
        }
    }

    func handle(_ c: Conn, slot: Int, revents: Int16) {
        if c.state == .connecting {
            let err = Net.socketError(c.fd)
            if err != 0 {
                closeConn(c, slot: slot, reason: "connect: \(errnoText(err))")
                return
            }
            c.state = .registering
            pollfds[slot].events = Int16(POLLIN)
            var hello = ""
            if let pass = plan.password { hello += "PASS \(pass)\r\n" }
            hello += "NICK \(c.nick)\r\nUSER bench 0 * :chat-bench\r\n"
            c.out.append(contentsOf: Array(hello.utf8))
            flush(c, slot: slot)
            return
        }
        if revents & Int16(POLLIN | POLLERR | POLLHUP | POLLNVAL) != 0 {
            readAvailable(c, slot: slot)
        }
        if c.state != .closed && revents & Int16(POLLOUT) != 0 {
            flush(c, slot: slot)
        }
    }

    func readAvailable(_ c: Conn, slot: Int) {
        for _ in 0..<4 {
            let keep = c.rem.count
            if keep > 0 {
                c.rem.withUnsafeBufferPointer { readBuf.update(from: $0.baseAddress!, count: keep) }
            }
            let room = readCapacity - keep
            let n = read(c.fd, readBuf + keep, room)
            if n > 0 {
                let now = monotonicNanos()
                processLines(c, slot: slot, count: keep + n, now: now)
                if c.state == .closed || n < room { return }
            } else if n == 0 {
                closeConn(c, slot: slot, reason: "server closed the connection")
                return
            } else {
                if errno == EAGAIN || errno == EINTR { return }
                closeConn(c, slot: slot, reason: "read: \(errnoText())")
                return
            }
        }
    }

    func processLines(_ c: Conn, slot: Int, count: Int, now: UInt64) {
        var start = 0
        var i = 0
        while i < count {
            if readBuf[i] == 0x0A {
                var end = i
                if end > start && readBuf[end - 1] == 0x0D { end -= 1 }
                if end > start {
                    handleLine(c, slot: slot, readBuf + start, end - start, now: now)
                    if c.state == .closed || c.state == .silent { c.rem.removeAll(); return }
                }
                start = i + 1
            }
            i += 1
        }
        c.rem.removeAll(keepingCapacity: true)
        if start < count && count - start <= 8192 {
            c.rem.append(contentsOf: UnsafeBufferPointer(start: readBuf + start, count: count - start))
        }
    }

    // MARK: - Lines

    func handleLine(_ c: Conn, slot: Int, _ p: UnsafeMutablePointer<UInt8>, _ len: Int, now: UInt64) {
        var i = 0
        var prefixEnd = 0
        if p[0] == COLON {
            i = 1
            while i < len && p[i] != SP { i += 1 }
            prefixEnd = i
            while i < len && p[i] == SP { i += 1 }
        }
        let cmdStart = i
        while i < len && p[i] != SP { i += 1 }
        let cmdLen = i - cmdStart
        params.removeAll(keepingCapacity: true)
        while i < len {
            while i < len && p[i] == SP { i += 1 }
            if i >= len { break }
            if p[i] == COLON {
                params.append((i + 1, len))
                break
            }
            let s = i
            while i < len && p[i] != SP { i += 1 }
            params.append((s, i))
        }
        let cmd = p + cmdStart
        if cmdLen == 7 && matches(cmd, "PRIVMSG") {
            if params.count >= 2 { onPrivmsg(c, p, params[1], now: now) }
            return
        }
        if cmdLen == 3 && isDigit(cmd[0]) && isDigit(cmd[1]) && isDigit(cmd[2]) {
            let code = Int(cmd[0] - 48) * 100 + Int(cmd[1] - 48) * 10 + Int(cmd[2] - 48)
            onNumeric(c, slot: slot, code, p, len)
            return
        }
        if cmdLen == 4 && matches(cmd, "PING") {
            let token = params.first.map { text(p, $0) } ?? ""
            c.out.append(contentsOf: Array("PONG :\(token)\r\n".utf8))
            flush(c, slot: slot)
            result.pingsAnswered += 1
            return
        }
        if cmdLen == 4 && matches(cmd, "JOIN") {
            if let who = memberId(p, prefixEnd: prefixEnd), c.state == .joining {
                c.members.insert(who)
                checkBarrier(c)
            }
            return
        }
        if cmdLen == 4 && matches(cmd, "QUIT") {
            if let who = memberId(p, prefixEnd: prefixEnd), who >= plan.clients {
                result.slowQuitSeen.insert(who)
            }
            return
        }
        if cmdLen == 5 && matches(cmd, "ERROR") {
            if shared.phase.load(ordering: .relaxed) != Phase.stopping {
                shared.noteError("\(c.nick): \(text(p, (0, len)))")
            }
            return
        }
    }

    func onNumeric(_ c: Conn, slot: Int, _ code: Int, _ p: UnsafeMutablePointer<UInt8>, _ len: Int) {
        switch code {
        case 1:
            guard !c.registered else { return }
            c.registered = true
            if plan.mode == .idle { return }  // ready after the MOTD
            var setup = ""
            if let oper = plan.oper { setup += "OPER \(oper.name) \(oper.password)\r\n" }
            if let modes = plan.userModes { setup += "MODE \(c.nick) \(modes)\r\n" }
            setup += "JOIN \(plan.channelName(c.channel))\r\n"
            c.out.append(contentsOf: Array(setup.utf8))
            flush(c, slot: slot)
            c.state = .joining
            c.members.insert(c.id)
            inflight.remove(slot - 1)
            startConnects()
        case 376, 422:  // end of MOTD / no MOTD
            if plan.mode == .idle && c.registered && c.state == .registering {
                c.state = .ready
                inflight.remove(slot - 1)
                startConnects()
                markReady()
            }
        case 353:  // NAMES: ":srv 353 me = #chan :a @b +c"
            guard c.state == .joining, let names = params.last else { return }
            var s = names.0
            while s < names.1 {
                while s < names.1 && p[s] == SP { s += 1 }
                var e = s
                while e < names.1 && p[e] != SP { e += 1 }
                var n = s
                while n < e && (p[n] == 0x40 || p[n] == 0x2B || p[n] == 0x25 || p[n] == 0x7E || p[n] == 0x26) { n += 1 }
                if let who = parseNickId(p, n, e) { c.members.insert(who) }
                s = e
            }
            checkBarrier(c)
        case 366:  // end of NAMES: the JOIN is complete
            guard c.state == .joining else { return }
            c.joined = true
            if c.isSlow {
                // From here on a slow consumer never reads its socket again.
                c.state = .silent
                pollfds[slot].fd = -1 - c.fd
                markReady()
            } else {
                checkBarrier(c)
            }
        case 400..<600:
            result.errorReplies += 1
            let line = text(p, (0, len))
            if running {
                shared.noteError("\(c.nick): \(line)")
            } else {
                closeConn(c, slot: slot, reason: line)
            }
        default:
            break
        }
    }

    func checkBarrier(_ c: Conn) {
        guard c.state == .joining, c.joined else { return }
        let need = plan.healthyMembers(c.channel) + plan.slowMembers(c.channel)
        if c.members.count >= need {
            c.state = .ready
            c.members = []
            markReady()
        }
    }

    func markReady() {
        let n = shared.ready.wrappingAdd(1, ordering: .sequentiallyConsistent).newValue
        if n == shared.needReady { shared.gate.broadcast() }
    }

    func onPrivmsg(_ c: Conn, _ p: UnsafeMutablePointer<UInt8>, _ trailing: (Int, Int), now: UInt64) {
        var i = trailing.0
        let end = trailing.1
        guard let sender = parseNumber(p, &i, end), let seq = parseNumber(p, &i, end),
              let sentAt = parseNumber(p, &i, end), !c.isSlow else {
            result.unexpected += 1
            return
        }
        let s = Int(sender)
        let q = Int(seq)
        guard s < plan.clients, s != c.id, plan.channel(of: s) == c.channel, q < plan.messagesPerClient else {
            result.unexpected += 1
            return
        }
        let slotIndex = s / plan.channels
        let word = slotIndex * wordsPerSender + (q >> 6)
        let mask = UInt64(1) << UInt64(q & 63)
        if c.seen[word] & mask != 0 {
            result.duplicated += 1
            return
        }
        c.seen[word] |= mask
        if Int32(q) < c.maxSeq[slotIndex] {
            result.reordered += 1
        } else {
            c.maxSeq[slotIndex] = Int32(q)
        }
        result.unique += 1
        result.latenciesNs.append(now > sentAt ? now - sentAt : 0)
        result.lastDeliveryNs = now
        let total = shared.delivered.wrappingAdd(1, ordering: .relaxed).newValue
        if total == shared.expected {
            shared.completedNs.store(now, ordering: .sequentiallyConsistent)
            shared.gate.broadcast()
        }
    }

    // MARK: - Output and closing

    func flush(_ c: Conn, slot: Int) {
        guard c.fd >= 0, c.state != .closed else { return }
        while c.outOff < c.out.count {
            let off = c.outOff
            let n = c.out.withUnsafeBytes { raw in
                send(c.fd, raw.baseAddress! + off, raw.count - off, Int32(MSG_NOSIGNAL))
            }
            if n > 0 {
                c.outOff += n
            } else if n < 0 && errno == EINTR {
                continue
            } else if n < 0 && errno == EAGAIN {
                break
            } else {
                closeConn(c, slot: slot, reason: "send: \(errnoText())")
                return
            }
        }
        if c.outOff >= c.out.count {
            c.out.removeAll(keepingCapacity: true)
            c.outOff = 0
            if c.state != .silent { pollfds[slot].events = Int16(POLLIN) }
        } else if c.state != .silent {
            pollfds[slot].events = Int16(POLLIN | POLLOUT)
        }
    }

    func closeConn(_ c: Conn, slot: Int, reason: String) {
        guard c.state != .closed else { return }
        let was = c.state
        c.state = .closed
        if c.fd >= 0 { close(c.fd) }
        c.fd = -1
        pollfds[slot].fd = -1
        pollfds[slot].events = 0
        if was == .connecting || was == .registering {
            inflight.remove(slot - 1)
            startConnects()
        }
        if shared.phase.load(ordering: .relaxed) == Phase.stopping { return }
        if c.isSlow && running {
            result.slowClosed.insert(c.id)
            return
        }
        if running { result.disconnected += 1 }
        if verbose { logError("worker \(index): \(c.nick) closed: \(reason)") }
        shared.fail("\(c.nick): \(reason)")
    }

    /// Slow consumers: read what the server queued for them and see whether it closed them.
    /// Then QUIT everyone, wait (bounded) for the server to close, and close what is left.
    func teardown() {
        let drainDeadline = monotonicNanos() + 3_000_000_000
        for c in conns where c.isSlow && c.state == .silent && c.fd >= 0 {
            var pfd = pollfd(fd: c.fd, events: Int16(POLLIN), revents: 0)
            draining: while monotonicNanos() < drainDeadline {
                let r = poll(&pfd, 1, 300)
                if r == 0 { break }  // quiet: the server kept it
                if r < 0 { if errno == EINTR { continue }; break }
                while true {
                    let n = read(c.fd, readBuf, readCapacity)
                    if n > 0 {
                        result.slowBytesRead += n
                        continue
                    }
                    if n == 0 || (errno != EAGAIN && errno != EINTR) {
                        result.slowClosed.insert(c.id)
                        close(c.fd)
                        c.fd = -1
                        c.state = .closed
                        break draining
                    }
                    break
                }
            }
        }
        var open: [Int] = []
        for (i, c) in conns.enumerated() where c.fd >= 0 && c.state != .closed {
            let quit = Array("QUIT :chat-bench done\r\n".utf8)
            _ = quit.withUnsafeBytes { send(c.fd, $0.baseAddress!, $0.count, Int32(MSG_NOSIGNAL)) }
            pollfds[i + 1] = pollfd(fd: c.fd, events: Int16(POLLIN), revents: 0)
            open.append(i)
        }
        let quitDeadline = monotonicNanos() + 2_000_000_000
        var remaining = open.count
        while remaining > 0 && monotonicNanos() < quitDeadline {
            let r = poll(&pollfds, nfds_t(pollfds.count), 100)
            if r <= 0 { continue }
            for i in open where pollfds[i + 1].revents != 0 {
                pollfds[i + 1].revents = 0
                let c = conns[i]
                while true {
                    let n = read(c.fd, readBuf, readCapacity)
                    if n > 0 { continue }
                    if n == 0 || (errno != EAGAIN && errno != EINTR) {
                        close(c.fd)
                        c.fd = -1
                        c.state = .closed
                        pollfds[i + 1].fd = -1
                        remaining -= 1
                    }
                    break
                }
            }
        }
        for c in conns where c.fd >= 0 {
            Net.abortiveClose(c.fd)
            c.fd = -1
            c.state = .closed
        }
    }

    // MARK: - Byte helpers

    @inline(__always) func isDigit(_ b: UInt8) -> Bool { b >= 48 && b <= 57 }

    func matches(_ p: UnsafeMutablePointer<UInt8>, _ word: StaticString) -> Bool {
        let w = word.utf8Start
        for k in 0..<word.utf8CodeUnitCount where p[k] != w[k] { return false }
        return true
    }

    func text(_ p: UnsafeMutablePointer<UInt8>, _ range: (Int, Int)) -> String {
        String(decoding: UnsafeBufferPointer(start: p + range.0, count: range.1 - range.0), as: UTF8.self)
    }

    /// The id of a nick of this run ("b<run><id>") in p[s..<e], or nil.
    func parseNickId(_ p: UnsafeMutablePointer<UInt8>, _ s: Int, _ e: Int) -> Int? {
        let n = nickPrefix.count
        guard e - s > n else { return nil }
        for k in 0..<n where p[s + k] != nickPrefix[k] { return nil }
        var v = 0
        for k in (s + n)..<e {
            guard isDigit(p[k]) else { return nil }
            v = v * 10 + Int(p[k] - 48)
        }
        return v
    }

    /// The id of the nick in a ":nick!user@host" prefix.
    func memberId(_ p: UnsafeMutablePointer<UInt8>, prefixEnd: Int) -> Int? {
        guard prefixEnd > 1 else { return nil }
        var e = 1
        while e < prefixEnd && p[e] != 0x21 && p[e] != 0x40 { e += 1 }
        return parseNickId(p, 1, e)
    }

    /// Parses a decimal number at p[i...], skipping leading spaces; advances i.
    @inline(__always)
    func parseNumber(_ p: UnsafeMutablePointer<UInt8>, _ i: inout Int, _ end: Int) -> UInt64? {
        while i < end && p[i] == SP { i += 1 }
        let s = i
        var v: UInt64 = 0
        while i < end && isDigit(p[i]) {
            v = v &* 10 &+ UInt64(p[i] - 48)
            i += 1
        }
        return i > s ? v : nil
    }
}

/// Appends the decimal digits of `value` to `out`.
@inline(__always)
func appendDecimal(_ value: UInt64, to out: inout [UInt8]) {
    if value == 0 {
        out.append(48)
        return
    }
    var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes of scratch, enough for 20 digits
    withUnsafeMutableBytes(of: &digits) { raw in
        var v = value
        var n = 0
        while v > 0 {
            raw[23 - n] = UInt8(48 + v % 10)
            v /= 10
            n += 1
        }
        out.append(contentsOf: UnsafeRawBufferPointer(rebasing: raw[(24 - n)...]))
    }
}

/// Writes a diagnostic line to stderr (stdout carries only the JSON result).
func logError(_ text: String) {
    var line = Array((text + "\n").utf8)
    _ = write(2, &line, line.count)
}
