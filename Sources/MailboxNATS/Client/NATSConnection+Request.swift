import Dispatch
import Mailbox

extension NATSConnection {
    /// Publishes `payload` to `subject` with a unique reply subject and waits for the first
    /// reply.
    ///
    /// One wildcard subscription (`_INBOX.<random>.*`) per connection receives every reply;
    /// each request has its own token under it. The server answers at once with status 503
    /// when nobody subscribes to `subject` (the connection announces `no_responders`), so a
    /// request to nobody fails with `noResponders` at once, not by time-out.
    ///
    /// - Throws: `noResponders`; `timedOut` after `timeout` (default
    ///   `configuration.requestTimeout`; a later reply is dropped); `disconnected` when the
    ///   link is lost while waiting; `cancelled` when the task is; and what `publish` throws.
    public func request(
        _ payload: [UInt8], to subject: String, headers: NATSHeaders? = nil, timeout: Duration? = nil
    ) async throws(NATSError) -> NATSMessage {
        let timeout = timeout ?? configuration.requestTimeout
        let waiter = _Waiter<NATSMessage>()
        let token = try register(waiter, subject: subject, timeout: timeout)
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<NATSMessage, NATSError>, Never>) in
                waiter.install { continuation.resume(returning: $0) }
                do throws(NATSError) {
                    // Written on this thread at once: no hop before the request leaves.
                    try publish(payload, to: subject, replyTo: token.replyTo, headers: headers, flushInline: true)
                } catch {
                    waiter.complete(.failure(error))
                }
            }
        } onCancel: {
            waiter.complete(.failure(NATSError(.cancelled, "request to \(subject)")))
        }
        box.withLockedValue { _ = $0.requests.removeValue(forKey: token.key) }
        return try result.get()
    }

    /// Sends the UTF-8 bytes of `string`; see `request(_:to:headers:timeout:)`.
    public func request(
        _ string: String, to subject: String, headers: NATSHeaders? = nil, timeout: Duration? = nil
    ) async throws(NATSError) -> NATSMessage {
        try await request(Array(string.utf8), to: subject, headers: headers, timeout: timeout)
    }

    /// Makes the inbox subscription on first use and registers `waiter` under a new token.
    private func register(_ waiter: _Waiter<NATSMessage>, subject: String, timeout: Duration) throws(NATSError) -> (key: Substring, replyTo: String) {
        let deadline = DispatchTime.now() + Self.dispatchInterval(timeout)
        let (token, flush) = try box.withLockedValue { state throws(NATSError) -> ((key: Substring, replyTo: String), Bool) in
            guard !state.isClosed else { throw NATSError(.connectionClosed) }
            var flush = false
            if state.inbox == nil {
                let prefix = "\(configuration.inboxPrefix).\(Self.randomToken())."
                let sid = state.nextSID
                state.nextSID += 1
                state.inbox = (prefix, sid)
                if state.isConnected {
                    NATSFrames.appendSubscribe(to: &state.outbound, subject: prefix + "*", queue: nil, sid: sid)
                    flush = state.needsFlushScheduled()
                }
            }
            state.nextRequestToken += 1
            let key = String(state.nextRequestToken, radix: 36)
            let replyTo = state.inbox!.prefix + key
            let token = (key: replyTo.suffix(key.count), replyTo: replyTo)
            state.requests[token.key] = _PendingRequest(waiter: waiter, subject: subject, timeout: timeout, deadline: deadline)
            armRequestTimer(&state, for: deadline)
            return (token, flush)
        }
        if flush { queue.async { self.flushOutbound() } }
        return token
    }

    /// Makes the one request timer fire by `deadline` (it is armed for the earliest one).
    private func armRequestTimer(_ state: inout _NATSState, for deadline: DispatchTime) {
        if let armed = state.requestTimerDeadline, armed <= deadline { return }
        if state.requestTimer == nil {
            let timer = DispatchSource.makeTimerSource(queue: queue)
            timer.setEventHandler { [weak self] in self?.requestTimerFired() }
            timer.schedule(deadline: deadline)
            timer.resume()
            state.requestTimer = timer
        } else {
            state.requestTimer?.schedule(deadline: deadline)
        }
        state.requestTimerDeadline = deadline
    }

    /// Fails the requests whose deadline has passed and re-arms for the next one.
    /// - Complexity: O(pending requests).
    private func requestTimerFired() {
        let expired = box.withLockedValue { state -> [_PendingRequest] in
            let now = DispatchTime.now()
            var expired: [_PendingRequest] = []
            var next: DispatchTime?
            for (key, request) in state.requests {
                if request.deadline <= now {
                    expired.append(request)
                    state.requests[key] = nil
                } else if next.map({ request.deadline < $0 }) ?? true {
                    next = request.deadline
                }
            }
            state.requestTimerDeadline = nil
            if let next { armRequestTimer(&state, for: next) }
            return expired
        }
        for request in expired {
            request.waiter.complete(.failure(NATSError(.timedOut, "no reply from \(request.subject) within \(request.timeout)")))
        }
    }

    /// 22 random characters of [0-9A-Za-z], as nats.go's NUID-based inboxes.
    static func randomToken() -> String {
        let alphabet = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz".utf8)
        var generator = SystemRandomNumberGenerator()
        return String(decoding: (0..<22).map { _ in alphabet[Int(generator.next() % 62)] }, as: UTF8.self)
    }
}
