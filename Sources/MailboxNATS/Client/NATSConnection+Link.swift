#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
import Foundation
import Mailbox
import MailboxNet

// The link's life: attempts, the handshake, reading, keep-alive, loss and reconnect, closing.
// Decisions are made with the lock held; sockets, callbacks and announcements run outside it.
extension NATSConnection {
    // MARK: - Attempts

    /// Picks the next server and attempts it now or after its wait (on `queue`); closes the
    /// connection when no server is left.
    func scheduleAttempt() {
        enum Next {
            case attempt(NATSServerAddress, after: Duration)
            case giveUp(NATSError)
        }
        let next: Next? = box.withLockedValue { state -> Next? in
            guard !state.isClosed else { return nil }
            let maxAttempts = configuration.maxReconnectAttempts
            let retrying = state.hasConnectedOnce || configuration.retryOnFailedConnect
            // Without retrying, the first connect makes one round over the servers.
            let limit = retrying ? maxAttempts : 1
            for offset in 1...state.servers.count {
                let index = (state.serverIndex + offset) % state.servers.count
                let entry = state.servers[index]
                if limit >= 0 && entry.failedAttempts >= limit { continue }
                state.serverIndex = index
                var wait = Duration.zero
                if let last = entry.lastAttempt {
                    let jitter = configuration.reconnectJitter * Double.random(in: 0...1)
                    let due = last + configuration.reconnectWait + jitter
                    wait = max(.zero, ContinuousClock.now.duration(to: due))
                }
                state.servers[index].lastAttempt = ContinuousClock.now + wait
                return .attempt(entry.address, after: wait)
            }
            return .giveUp(state.lastError ?? NATSError(.noServers, "no server could be reached"))
        }
        switch next {
        case nil:
            return
        case .attempt(let address, let wait):
            if wait <= .zero {
                attempt(address)
            } else {
                queue.asyncAfter(deadline: .now() + Self.dispatchInterval(wait)) { self.attempt(address) }
            }
        case .giveUp(let error):
            shutDown(error: error.isFinal ? error : NATSError(.noServers, "no server could be reached; last: \(error)"))
        }
    }

    /// Connects a socket to `address` (a Dispatch source waits; no thread blocks), then
    /// starts the handshake; a failure counts against the server and moves on.
    private func attempt(_ address: NATSServerAddress) {
        Task {
            let transport: TCPConnection
            do throws(SocketError) {
                transport = try await TCPConnection.connect(to: address.host, port: address.port, timeout: configuration.connectTimeout)
            } catch {
                recordFailedAttempt(NATSError(.socket, "connecting to \(address)", socketError: error))
                scheduleAttempt()
                return
            }
            open(transport, to: address)
        }
    }

    /// Starts the handshake on a connected socket.
    private func open(_ transport: TCPConnection, to address: NATSServerAddress) {
        let link = box.withLockedValue { state -> _NATSLink? in
            guard !state.isClosed else { return nil }
            let link = _NATSLink(transport: transport)
            state.phase = .handshaking(link, awaitingInfo: true)
            state.lastError = nil  // what ends this link is said anew
            return link
        }
        guard let link else {
            transport.abort()
            return
        }
        // The socket's queue pushes back at half the outbound limit: `flushOutbound` then keeps
        // the rest in the outbound buffer until `onWritable`, and `publish` throws past it.
        transport.start(
            sendQueueLimit: max(64 * 1024, configuration.outboundBufferLimit / 2), overflow: .backPressure,
            onWritable: { [self] in writable(link) },
            onRead: { [self] bytes in received(bytes, on: link) },
            onClose: { [self] reason in linkClosed(link, reason: reason) })
        // The handshake has the connect time-out to finish.
        queue.asyncAfter(deadline: .now() + Self.dispatchInterval(configuration.connectTimeout)) { [self] in
            let stale = box.withLockedValue { state -> Bool in
                guard case .handshaking(let current, _) = state.phase, current === link else { return false }
                state.lastError = NATSError(.timedOut, "no handshake with \(address) within \(configuration.connectTimeout)")
                return true
            }
            if stale { link.transport.abort() }
        }
    }

    private func recordFailedAttempt(_ error: NATSError) {
        box.withLockedValue { state in
            state.lastError = error
            if state.servers.indices.contains(state.serverIndex) {
                state.servers[state.serverIndex].failedAttempts += 1
            }
        }
    }

    // MARK: - Reading

    /// A chunk from `link`'s socket (on its read queue): parse, decide under the lock, then
    /// deliver and answer outside it.
    private func received(_ bytes: [UInt8], on link: _NATSLink) {
        var effects = _ReadEffects()
        box.withLockedValue { state in
            guard let current = state.link, current === link else { return }
            // Parsed with the lock held: each frame is decided as it is read (the parser is
            // the link's, touched only on this read queue).
            do throws(NATSProtocolError) {
                try link.parser.parse(bytes) { frame in handle(frame, link: link, state: &state, effects: &effects) }
            } catch {
                state.lastError = NATSError(.protocolError, error.reason)
                effects.abort = true
            }
            // What observers publish while this batch is delivered is flushed at its end.
            if !effects.deliveries.isEmpty { state.deliveringThread = pthread_self() }
        }
        perform(effects, link: link)
    }

    /// What a batch of frames asks to be done outside the lock.
    struct _ReadEffects {
        var deliveries: [(sink: _SubscriptionSink, message: NATSMessage, last: Bool)] = []
        var replies: [(_Waiter<NATSMessage>, Result<NATSMessage, NATSError>)] = []
        var pongs: [_Waiter<Void>] = []
        /// Bytes to write on the link directly (the handshake's CONNECT + PING).
        var direct: [UInt8] = []
        var flush = false
        var events: [NATSConnectionEvent] = []
        var handshakeDone = false
        var abort = false
    }

    private func handle(_ frame: NATSServerFrame, link: _NATSLink, state: inout _NATSState, effects: inout _ReadEffects) {
        switch frame {
        case .message(let sid, let message):
            state.statistics.inMessages += 1
            state.statistics.inBytes += UInt64(message.payload.count)
            if sid == state.inbox?.sid, let inbox = state.inbox {
                let token = message.subject.utf8.count > inbox.prefix.utf8.count
                    ? message.subject.dropFirst(inbox.prefix.count) : ""
                if let waiter = state.requests.removeValue(forKey: token)?.waiter {
                    if message.status == 503 && message.payload.isEmpty {
                        effects.replies.append((waiter, .failure(NATSError(.noResponders, "no responders"))))
                    } else {
                        effects.replies.append((waiter, .success(message)))
                    }
                }
                return
            }
            guard let index = state.subscriptions.index(forKey: sid) else { return }  // unsubscribed meanwhile
            state.subscriptions.values[index].delivered += 1
            let delivered = state.subscriptions.values[index].delivered
            let last = state.subscriptions.values[index].max.map { delivered >= $0 } ?? false
            let sink = state.subscriptions.values[index].sink
            if last { state.subscriptions.remove(at: index) }
            if effects.deliveries.isEmpty { effects.deliveries.reserveCapacity(64) }
            effects.deliveries.append((sink, message, last))
        case .ping:
            if case .connected = state.phase {
                state.outbound.append(contentsOf: NATSFrames.pong)
                effects.flush = effects.flush || state.needsFlushScheduled()
            } else {
                effects.direct.append(contentsOf: NATSFrames.pong)
            }
        case .pong:
            switch state.phase {
            case .handshaking(_, awaitingInfo: false):
                completeHandshake(&state, effects: &effects)
            case .connected:
                state.pingsOutstanding = 0
                if !state.pongWaiters.isEmpty, case .flush(let waiter) = state.pongWaiters.removeFirst() {
                    effects.pongs.append(waiter)
                }
            default:
                break
            }
        case .ok:
            break
        case .error(let text):
            let error = NATSError.fromServer(text)
            if case .handshaking = state.phase {
                state.lastError = error
            } else if error.isFinal {
                state.lastError = error
            } else if error.code == .permissionsViolation || error.code == .slowConsumer {
                // Not fatal: the server keeps the connection.
            } else {
                state.lastError = error  // the server closes after the others
            }
            effects.events.append(.error(error))
        case .info(let json):
            guard let info = try? JSONDecoder().decode(NATSServerInfo.self, from: Data(json)) else {
                state.lastError = NATSError(.protocolError, "INFO that is not valid JSON")
                effects.abort = true
                return
            }
            state.info = info
            if case .handshaking(let current, awaitingInfo: true) = state.phase {
                state.phase = .handshaking(current, awaitingInfo: false)
                effects.direct.append(contentsOf: connectFrame(for: state.currentServer))
                effects.direct.append(contentsOf: NATSFrames.ping)
            }
            let added = addDiscoveredServers(info.connectURLs ?? [], state: &state)
            if !added.isEmpty { effects.events.append(.discoveredServers(added)) }
            if info.lameDuckMode == true { effects.events.append(.lameDuckMode) }
        }
    }

    /// The handshake's PONG: the link is up; subscriptions and buffered publications go out.
    private func completeHandshake(_ state: inout _NATSState, effects: inout _ReadEffects) {
        guard case .handshaking(let link, _) = state.phase else { return }
        let wasReconnect = state.hasConnectedOnce
        state.phase = .connected(link)
        state.hasConnectedOnce = true
        state.lastError = nil
        state.pingsOutstanding = 0
        if state.servers.indices.contains(state.serverIndex) {
            state.servers[state.serverIndex].failedAttempts = 0
        }
        if wasReconnect { state.statistics.reconnects += 1 }
        state.outbound = state.resubscribeFrames() + state.outbound
        effects.flush = !state.outbound.isEmpty && state.needsFlushScheduled()
        effects.handshakeDone = true
        startPingTimer(&state)
        let server = state.currentServer?.description ?? "?"
        effects.events.append(.connected(server: server))
    }

    /// Performs what `received` decided, outside the lock.
    private func perform(_ effects: _ReadEffects, link: _NATSLink) {
        if !effects.direct.isEmpty { link.transport.sendImmediately(effects.direct) }
        if effects.flush { queue.async { self.flushOutbound() } }
        if effects.handshakeDone {
            let waiter = box.withLockedValue { state -> (@Sendable (Result<Void, NATSError>) -> Void)? in
                defer { state.connectWaiter = nil }
                return state.connectWaiter
            }
            announce(.connected, events: effects.events) { waiter?(.success(())) }
        } else if !effects.events.isEmpty {
            announce(nil, events: effects.events)
        }
        if !effects.deliveries.isEmpty {
            // What observers publish while this batch is delivered (replies, mostly) is written
            // once, here, at the end of the batch, on this thread: no hop per reply
            // (`received` marked this thread as delivering, in the lock it already held).
            for (sink, message, last) in effects.deliveries {
                sink.deliver(message)
                if last { sink.finish() }
            }
            let flush = box.withLockedValue { state -> Bool in
                state.deliveringThread = nil
                defer { state.publishedWhileDelivering = false }
                return state.publishedWhileDelivering && state.isConnected && !state.flushScheduled && !state.flushDeferred
            }
            if flush { flushOutbound() }
        }
        for (waiter, result) in effects.replies { waiter.complete(result) }
        for waiter in effects.pongs { waiter.complete(.success(())) }
        if effects.abort { link.transport.abort() }
    }

    /// The `CONNECT` frame: no verbose, no pedantic, headers and no-responders on, and the
    /// credentials of the URL or of the configuration.
    private func connectFrame(for server: NATSServerAddress?) -> [UInt8] {
        struct Options: Encodable {
            var verbose = false
            var pedantic = false
            var tls_required = false
            var name: String?
            var lang = "swift"
            var version = "0.1.0"
            var `protocol` = 1
            var echo: Bool
            var headers = true
            var no_responders = true
            var user: String?
            var pass: String?
            var auth_token: String?
        }
        var options = Options(echo: configuration.echo)
        options.name = configuration.name
        options.user = server?.user ?? configuration.user
        options.pass = server?.password ?? configuration.password
        options.auth_token = server?.token ?? configuration.token
        let json = (try? JSONEncoder().encode(options)) ?? Data("{}".utf8)
        return Array("CONNECT ".utf8) + Array(json) + [13, 10]
    }

    /// Adds the announced cluster members not yet known; returns them as URLs.
    private func addDiscoveredServers(_ urls: [String], state: inout _NATSState) -> [String] {
        var added: [String] = []
        for url in urls {
            guard let address = NATSServerAddress(url) else { continue }
            let known = state.servers.contains { $0.address.host == address.host && $0.address.port == address.port }
            if !known {
                state.servers.append(_ServerEntry(address: address, discovered: true))
                added.append(address.description)
            }
        }
        return added
    }

    // MARK: - Writing

    /// Writes the outbound buffer to the socket (on `queue`, or inline where latency matters:
    /// a request, the end of a delivered batch). When the socket's queue is full
    /// (a slow server link), the bytes go back to the front of the buffer and wait for
    /// `writable`, so `publish` pushes back (`outboundBufferExceeded` past the limit).
    func flushOutbound() {
        // One flush at a time (`writeLock`), so flushes from several threads (the queue, a
        // request, a read thread) cannot reorder bytes; publishers only take `box`, never
        // waiting for a system call. The socket's lock nests inside; it never calls back with
        // its lock held.
        writeLock.withLockedValue { writes in
            let taken = box.withLockedValue { state -> (_NATSLink, [UInt8])? in
                state.flushScheduled = false
                guard case .connected(let link) = state.phase, !state.outbound.isEmpty, !state.flushDeferred else { return nil }
                let bytes = state.outbound
                state.outbound = []
                return (link, bytes)
            }
            guard let (link, bytes) = taken else { return }
            writes &+= 1
            switch link.transport.sendImmediately(bytes) {
            case .queued:
                break
            case .full, .closed, .sendQueueExceeded:
                // Not taken: keep them, first, for `writable` or for the next link.
                let flushNow = box.withLockedValue { state -> Bool in
                    state.outbound = bytes + state.outbound
                    // Wait for `writable` only if this link is still the one (a new link's
                    // handshake may have come in between: then flush on it).
                    guard let current = state.link, current === link else { return state.needsFlushScheduled() }
                    state.flushDeferred = true
                    return false
                }
                if flushNow { queue.async { self.flushOutbound() } }
            }
        }
    }

    /// The socket's queue has room again: flush what waited.
    private func writable(_ link: _NATSLink) {
        let flush = box.withLockedValue { state -> Bool in
            guard let current = state.link, current === link else { return false }
            state.flushDeferred = false
            return state.needsFlushScheduled()
        }
        if flush { queue.async { self.flushOutbound() } }
    }

    // MARK: - Keep-alive

    private func startPingTimer(_ state: inout _NATSState) {
        state.pingTimer?.cancel()
        let timer = DispatchSource.makeTimerSource(queue: queue)
        let interval = Self.dispatchInterval(configuration.pingInterval)
        timer.schedule(deadline: .now() + interval, repeating: interval)
        timer.setEventHandler { [weak self] in self?.pingTimerFired() }
        state.pingTimer = timer
        timer.resume()
    }

    private func pingTimerFired() {
        enum Action { case none, flush, stale(_NATSLink) }
        let action = box.withLockedValue { state -> Action in
            guard case .connected(let link) = state.phase else { return .none }
            if state.pingsOutstanding >= configuration.maxPingsOutstanding {
                state.lastError = NATSError(.timedOut, "stale connection: \(state.pingsOutstanding) pings without a PONG")
                return .stale(link)
            }
            state.pingsOutstanding += 1
            state.pongWaiters.append(.keepalive)
            state.outbound.append(contentsOf: NATSFrames.ping)
            return state.needsFlushScheduled() ? .flush : .none
        }
        switch action {
        case .none: break
        case .flush: flushOutbound()
        case .stale(let link): link.transport.abort()
        }
    }

    // MARK: - Loss and closing

    /// `link`'s socket closed (on its queue): reconnect, move to the next server, or close.
    private func linkClosed(_ link: _NATSLink, reason: TCPConnection.CloseReason) {
        enum Next { case ignore, reconnect(wasConnected: Bool), close(NATSError) }
        var failedPongs: [_Waiter<Void>] = []
        var failedRequests: [_Waiter<NATSMessage>] = []
        let next = box.withLockedValue { state -> Next in
            guard let current = state.link, current === link else { return .ignore }
            let wasConnected = state.isConnected
            state.pingTimer?.cancel()
            state.pingTimer = nil
            for waiter in state.pongWaiters {
                if case .flush(let flushWaiter) = waiter { failedPongs.append(flushWaiter) }
            }
            state.pongWaiters = []
            state.flushScheduled = false
            state.flushDeferred = false
            failedRequests = state.requests.values.map(\.waiter)
            state.requests = [:]
            if state.lastError == nil {
                switch reason {
                case .failed(let error): state.lastError = NATSError(.socket, "link to \(link.transport.peer) failed", socketError: error)
                default: state.lastError = NATSError(.disconnected, "the server closed the connection")
                }
            }
            if !wasConnected, state.servers.indices.contains(state.serverIndex) {
                state.servers[state.serverIndex].failedAttempts += 1
            }
            let error = state.lastError!
            if error.isFinal { return .close(error) }
            if wasConnected && !configuration.allowReconnect { return .close(error) }
            state.phase = state.hasConnectedOnce ? .reconnecting : .connecting
            return .reconnect(wasConnected: wasConnected)
        }
        let lost = NATSError(.disconnected, "the link to the server was lost")
        for waiter in failedPongs { waiter.complete(.failure(lost)) }
        for waiter in failedRequests { waiter.complete(.failure(lost)) }
        switch next {
        case .ignore:
            return
        case .close(let error):
            shutDown(error: error)
        case .reconnect(let wasConnected):
            if wasConnected {
                let error = box.withLockedValue { $0.lastError }
                announce(.reconnecting, events: [.disconnected(error)])
            }
            scheduleAttempt()
        }
    }

    /// Closes for good (user's `close()` with nil, or a final error).
    func shutDown(error: NATSError?) {
        // Under the write lock: a flush that has taken bytes but not yet handed them to the
        // socket finishes first, so the final bytes follow it and nothing is lost or reordered.
        let closing = writeLock.withLockedValue { _ -> _Closing? in
            guard let closing = box.withLockedValue({ $0.close() }) else { return nil }
            closing.link?.transport.close(final: closing.final.isEmpty ? nil : closing.final)
            return closing
        }
        guard let closing else { return }
        let closed = NATSError(.connectionClosed, error.map { "\($0)" } ?? "closed")
        for waiter in closing.pongs { waiter.complete(.failure(closed)) }
        for waiter in closing.requests { waiter.complete(.failure(closed)) }
        for sink in closing.sinks { sink.finish() }
        announce(.closed, events: [.closed(error)], complete: true) {
            closing.connectWaiter?(.failure(error ?? closed))
        }
    }

    /// Sets `state` and sends `events` on the announcer queue, in the order calls were made;
    /// then runs `then` (used to return from `connect` only once `state` says connected).
    func announce(
        _ newState: NATSConnectionState?, events: [NATSConnectionEvent], complete: Bool = false,
        then: (@Sendable () -> Void)? = nil
    ) {
        announcer.async { [self] in
            if let newState, stateProperty.value != .closed { stateProperty.value = newState }
            for event in events { eventsInput.send(value: event) }
            if complete { eventsInput.sendCompleted() }
            then?()
        }
    }
}
