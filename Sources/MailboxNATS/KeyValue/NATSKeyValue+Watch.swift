import Foundation
import Mailbox

extension NATSKeyValue {
    /// Watches the keys matching `pattern` (NATS wildcards: `users.*`, `users.>`; `>` for
    /// all): each start sends the latest entry of every matching key, then `.upToDate` once,
    /// then every change (puts, deletes, purges) as it happens, in revision order.
    ///
    /// Cold: each start creates an ephemeral JetStream push consumer (ordered: no acks, flow
    /// control answered, `last_per_subject`) delivering to an inbox subscription; disposing
    /// the run unsubscribes and deletes the consumer. A gap in the consumer's sequence (a
    /// message lost on the link) recreates the consumer from the revision after the last one
    /// seen, so no change is skipped.
    ///
    /// Fails with `invalidSubject` for a bad pattern, with the consumer's creation error
    /// (`jetStream`, `timedOut`), or with `connectionClosed` when the connection closes.
    ///
    /// Thread-safety: events are sent serially, on the connection's read thread (or, for an
    /// `.upToDate` of an empty bucket, the thread the creation finished on).
    public func watch(_ pattern: String = ">") -> SignalProducer<NATSKeyValueWatchEvent, NATSError> {
        SignalProducer { observer, lifetime in
            guard NATSFrames.isValidSubject(pattern) else {
                observer.send(error: NATSError(.invalidSubject, "key pattern \(pattern.debugDescription)"))
                return
            }
            let watcher = _KeyValueWatcher(keyValue: self, pattern: pattern, observer: observer)
            lifetime.observeEnded { watcher.stop() }
            watcher.begin(fromRevision: nil)
        }
    }
}

/// One run of `watch`: the consumer, its inbox subscription and the ordering checks.
final class _KeyValueWatcher: Sendable {
    private struct State: Sendable {
        var stopped = false
        var subscription: NATSSubscription?
        var consumerName: String?
        /// The consumer sequence expected next (from 1 per consumer).
        var expectedDelivery: UInt64 = 1
        /// The last revision sent.
        var lastRevision: UInt64 = 0
        var sentUpToDate = false
        /// Entries delivered by the current consumer (to tell an empty start).
        var delivered = 0
    }

    private let keyValue: NATSKeyValue
    private let pattern: String
    private let observer: Signal<NATSKeyValueWatchEvent, NATSError>.Observer
    private let state = LockedValueBox(State())
    /// Serialises sends to `observer` (reads and the creation's `.upToDate` come from two
    /// threads); never held while `state` is taken by a stop.
    private let sendLock = NSLock()

    init(keyValue: NATSKeyValue, pattern: String, observer: Signal<NATSKeyValueWatchEvent, NATSError>.Observer) {
        self.keyValue = keyValue
        self.pattern = pattern
        self.observer = observer
    }

    /// Subscribes a new inbox and creates a consumer delivering to it, from the latest value
    /// per key (`fromRevision` nil) or from a revision on (after a gap).
    func begin(fromRevision revision: UInt64?) {
        let connection = keyValue.connection
        let inbox = "\(connection.configuration.inboxPrefix).\(NATSConnection.randomToken())"
        let subscription: NATSSubscription
        do {
            subscription = try connection.subscribe(to: inbox) { [self] message in received(message) }
        } catch {
            fail(error)
            return
        }
        let proceed = state.withLockedValue { state -> Bool in
            guard !state.stopped else { return false }
            state.subscription = subscription
            state.expectedDelivery = 1
            state.delivered = 0
            return true
        }
        guard proceed else {
            subscription.unsubscribe()
            return
        }
        var config: [String: Any] = [
            "deliver_subject": inbox,
            "ack_policy": "none",
            "replay_policy": "instant",
            "filter_subject": keyValue.subject(for: pattern),
            "flow_control": true,
            "idle_heartbeat": 5_000_000_000,
            "mem_storage": true,
            "num_replicas": 1,
        ]
        if let revision {
            config["deliver_policy"] = "by_start_sequence"
            config["opt_start_seq"] = revision
        } else {
            config["deliver_policy"] = "last_per_subject"
        }
        let body: Data
        do {
            body = try JSONSerialization.data(withJSONObject: ["stream_name": keyValue.streamName, "config": config])
        } catch {
            fail(error)
            return
        }
        Task { [self] in
            do throws(NATSError) {
                let reply = try await connection.jetStreamRequest(
                    "CONSUMER.CREATE.\(keyValue.streamName)", body: Array(body), timeout: keyValue.timeout)
                struct Response: Decodable { var name: String?; var num_pending: UInt64?; var error: _JetStreamAPIError? }
                let response = try NATSKeyValue.decode(Response.self, reply)
                if let error = response.error { throw error.natsError("watch \(keyValue.bucket)/\(pattern)") }
                let upToDate = state.withLockedValue { state -> Bool in
                    state.consumerName = response.name
                    // Nothing to send at the start: up to date at once.
                    guard response.num_pending == 0, state.delivered == 0, !state.sentUpToDate else { return false }
                    state.sentUpToDate = true
                    return true
                }
                if upToDate { send(.upToDate) }
            } catch {
                fail(error)
            }
        }
    }

    /// A message on the inbox (on the read thread).
    private func received(_ message: NATSMessage) {
        if message.status == 100 {
            // Flow control asks for an empty reply; a heartbeat may name a stalled consumer.
            if let replyTo = message.replyTo {
                try? keyValue.connection.publish([], to: replyTo)
            } else if let stalled = message.headers?["Nats-Consumer-Stalled"] {
                try? keyValue.connection.publish([], to: stalled)
            }
            return
        }
        guard let replyTo = message.replyTo, let metadata = Self.metadata(replyTo) else { return }
        enum Outcome { case send([NATSKeyValueWatchEvent]), reset(UInt64), ignore }
        let outcome = state.withLockedValue { state -> Outcome in
            guard !state.stopped else { return .ignore }
            if metadata.delivery != state.expectedDelivery {
                // A gap: start again after the last revision sent.
                return .reset(state.lastRevision + 1)
            }
            state.expectedDelivery += 1
            state.delivered += 1
            state.lastRevision = metadata.revision
            let prefix = "$KV.\(keyValue.bucket)."
            let key = message.subject.hasPrefix(prefix) ? String(message.subject.dropFirst(prefix.count)) : message.subject
            let entry = NATSKeyValueEntry(
                bucket: keyValue.bucket, key: key, value: message.payload, revision: metadata.revision,
                operation: NATSKeyValue.operation(message.headers))
            var events: [NATSKeyValueWatchEvent] = [.entry(entry)]
            if !state.sentUpToDate && metadata.pending == 0 {
                state.sentUpToDate = true
                events.append(.upToDate)
            }
            return .send(events)
        }
        switch outcome {
        case .ignore:
            return
        case .send(let events):
            for event in events { send(event) }
        case .reset(let revision):
            let old = state.withLockedValue { state -> (NATSSubscription?, String?) in
                defer { state.subscription = nil; state.consumerName = nil }
                return (state.subscription, state.consumerName)
            }
            old.0?.unsubscribe()
            if let name = old.1 { deleteConsumer(name) }
            begin(fromRevision: revision)
        }
    }

    /// Ends the run: unsubscribes and deletes the consumer. Idempotent.
    func stop() {
        let old = state.withLockedValue { state -> (NATSSubscription?, String?)? in
            guard !state.stopped else { return nil }
            state.stopped = true
            return (state.subscription, state.consumerName)
        }
        guard let old else { return }
        old.0?.unsubscribe()
        if let name = old.1 { deleteConsumer(name) }
    }

    private func deleteConsumer(_ name: String) {
        // Fire and forget: an ephemeral consumer without its inbox also expires by itself.
        try? keyValue.connection.publish([], to: "$JS.API.CONSUMER.DELETE.\(keyValue.streamName).\(name)")
    }

    private func send(_ event: NATSKeyValueWatchEvent) {
        sendLock.lock()
        defer { sendLock.unlock() }
        observer.send(value: event)
    }

    private func fail(_ error: NATSError) {
        stop()
        sendLock.lock()
        defer { sendLock.unlock() }
        observer.send(error: error)
    }

    /// The stream sequence (revision), consumer sequence and pending count of a JetStream
    /// delivery, from its reply subject `$JS.ACK.<stream>.<consumer>.<delivered>.<stream seq>.
    /// <consumer seq>.<time>.<pending>` (servers 2.10+ insert a domain and an account hash
    /// after `ACK`; the numbers are counted from the end either way).
    static func metadata(_ replyTo: String) -> (revision: UInt64, delivery: UInt64, pending: UInt64)? {
        let tokens = replyTo.split(separator: ".", omittingEmptySubsequences: false)
        guard tokens.count >= 9, tokens[0] == "$JS", tokens[1] == "ACK" else { return nil }
        let count = tokens.count
        guard let revision = UInt64(tokens[count - 4]), let delivery = UInt64(tokens[count - 3]),
              let pending = UInt64(tokens[count - 1]) else { return nil }
        return (revision, delivery, pending)
    }
}
