import Dispatch
import Foundation
import Mailbox
import MailboxNet

/// A client connection to a NATS server (or a cluster of them): publish, subscribe, request/reply,
/// flush, reconnect; JetStream key/value on top (`keyValue`).
///
/// ```swift
/// let nats = try await NATSConnection.connect(to: "nats://127.0.0.1:4222")
/// let subscription = try nats.subscribe(to: "orders.>")
/// subscription.messages.observeValues { print($0.subject, $0.string) }
/// try nats.publish("hello", to: "orders.new")
/// let reply = try await nats.request("ping", to: "service.echo", timeout: .seconds(1))
/// nats.close()
/// ```
///
/// Thread-safety: every method may be called from any thread, concurrently, and from inside
/// the observers of its own subscriptions, state and events (they run outside its lock).
/// Publications from one thread go out in call order.
///
/// Delivery: at most once, like NATS itself. Messages of one subscription arrive in order on
/// one thread at a time (the socket's read queue), synchronously: an observer that blocks
/// stops the reading of the whole connection (TCP then pushes back to the server, which cuts
/// off a consumer that falls too far behind with a "slow consumer" error). Hand work to an
/// actor instead: `subscription.deliver(to:)` tells each message to an actor whose bounded
/// mailbox drops and counts what it cannot take.
///
/// Reconnect: when the link is lost the connection tries the servers of its list (and those
/// the cluster announced) with `reconnectWait` plus jitter between attempts on one server,
/// keeps publications in a buffer of `reconnectBufferSize` bytes, and on reconnecting sends
/// its subscriptions again, then the buffer. Requests and flushes waiting at the moment of
/// the loss fail with `disconnected` (their replies may be lost).
///
/// Lifetime: an open connection keeps itself alive (its socket's sources hold it) until
/// `close()`; call it. Closing completes every subscription's signal.
public final class NATSConnection: Sendable {
    /// The configuration it was made with.
    public let configuration: NATSConfiguration
    /// Where the connection stands; changes are announced in order on one serial queue.
    public let state: Property<NATSConnectionState>
    /// What happens to the connection (connected, disconnected, server errors, closed), in
    /// order, on one serial queue. Completes after `.closed`.
    public let events: Signal<NATSConnectionEvent, Never>

    let stateProperty: MutableProperty<NATSConnectionState>
    let eventsInput: Signal<NATSConnectionEvent, Never>.Observer
    /// Everything that changes; protected by its pthread mutex.
    let box: LockedValueBox<_NATSState>
    /// Held by the one flush writing to the socket (see `flushOutbound`); counts the writes.
    /// (A box of `Void` would do, but ThreadSanitizer then reports its empty header's inout
    /// accesses as races.)
    let writeLock = LockedValueBox(0)
    /// Runs flushes, timers and reconnect attempts.
    let queue = DispatchQueue(label: "MailboxNATS.connection")
    /// Announces state changes and events in the order they were decided.
    let announcer = DispatchQueue(label: "MailboxNATS.announcer")

    init(configuration: NATSConfiguration) throws(NATSError) {
        var servers: [NATSServerAddress] = []
        for url in configuration.servers {
            guard let address = NATSServerAddress(url) else {
                throw NATSError(.noServers, "cannot read the server URL \(url.debugDescription)")
            }
            servers.append(address)
        }
        guard !servers.isEmpty else { throw NATSError(.noServers, "the configuration lists no server") }
        if configuration.randomizeServers { servers.shuffle() }
        self.configuration = configuration
        stateProperty = MutableProperty(.connecting)
        state = Property(capturing: stateProperty)
        (events, eventsInput) = Signal<NATSConnectionEvent, Never>.pipe()
        box = LockedValueBox(_NATSState(servers: servers.map { _ServerEntry(address: $0, discovered: false) }))
    }

    /// Connects to the first server of `configuration.servers` that accepts (in shuffled order
    /// unless `randomizeServers` is false) and completes the handshake (`INFO`, `CONNECT`,
    /// `PING` → `PONG`).
    ///
    /// - Throws: `NATSError`: `authorizationViolation` for bad credentials; `socket` (refused,
    ///   unreachable), `timedOut` or `protocolError` of the last server tried when none could
    ///   be reached; `noServers` for an unreadable list. With `retryOnFailedConnect` it keeps
    ///   trying as a reconnect would, and throws only when every server has used up
    ///   `maxReconnectAttempts`.
    public static func connect(_ configuration: NATSConfiguration) async throws(NATSError) -> NATSConnection {
        let connection = try NATSConnection(configuration: configuration)
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<Void, NATSError>, Never>) in
            connection.box.withLockedValue { $0.connectWaiter = { continuation.resume(returning: $0) } }
            connection.queue.async { connection.scheduleAttempt() }
        }
        try result.get()
        return connection
    }

    /// Connects to one server URL with every other setting at its default.
    public static func connect(to url: String) async throws(NATSError) -> NATSConnection {
        try await connect(NATSConfiguration(url: url))
    }

    /// What the server said in its last `INFO` (nil before the first handshake).
    public var serverInfo: NATSServerInfo? {
        box.withLockedValue { $0.info }
    }

    /// The server currently connected to, or nil.
    public var connectedServer: String? {
        box.withLockedValue { state in
            if case .connected = state.phase { return state.currentServer?.description }
            return nil
        }
    }

    /// Counters since the connection was made.
    public var statistics: NATSStatistics {
        box.withLockedValue { $0.statistics }
    }

    // MARK: - Publishing

    /// Publishes `payload` to `subject`, with a reply subject and headers when given.
    ///
    /// Never blocks: the frame goes into the outbound buffer and is written by the next flush
    /// (a burst becomes one write). While reconnecting it is kept in the reconnect buffer.
    ///
    /// - Throws: `invalidSubject`; `maxPayloadExceeded` (bigger than the server's
    ///   `max_payload`); `reconnectBufferExceeded` while disconnected with the buffer full;
    ///   `outboundBufferExceeded` when the socket does not keep up; `connectionClosed`.
    ///   A publication that throws was not accepted; one that returns was (at most once).
    public func publish(
        _ payload: [UInt8], to subject: String, replyTo: String? = nil, headers: NATSHeaders? = nil
    ) throws(NATSError) {
        try publish(payload, to: subject, replyTo: replyTo, headers: headers, flushInline: false)
    }

    /// `publish`; `flushInline` writes on the calling thread instead of scheduling a flush.
    func publish(
        _ payload: [UInt8], to subject: String, replyTo: String?, headers: NATSHeaders?, flushInline: Bool
    ) throws(NATSError) {
        guard NATSFrames.isValidSubject(subject) else { throw NATSError(.invalidSubject, subject.debugDescription) }
        if let replyTo, !NATSFrames.isValidSubject(replyTo) {
            throw NATSError(.invalidSubject, "reply subject \(replyTo.debugDescription)")
        }
        let bodySize = payload.count + (headers?.encodedCount ?? 0)
        let flush = try box.withLockedValue { state throws(NATSError) -> _FlushDecision in
            try state.checkPublish(bodySize: bodySize, subject: subject, configuration: configuration)
            NATSFrames.appendPublish(to: &state.outbound, subject: subject, replyTo: replyTo, headers: headers, payload: payload)
            state.statistics.outMessages += 1
            state.statistics.outBytes += UInt64(payload.count)
            return state.flushDecision(inline: flushInline)
        }
        switch flush {
        case .none: break
        case .schedule: queue.async { self.flushOutbound() }
        case .inline: flushOutbound()
        }
    }

    /// Publishes the UTF-8 bytes of `string`; see `publish(_:to:replyTo:headers:)`.
    public func publish(
        _ string: String, to subject: String, replyTo: String? = nil, headers: NATSHeaders? = nil
    ) throws(NATSError) {
        try publish(Array(string.utf8), to: subject, replyTo: replyTo, headers: headers)
    }

    /// Answers `message` (publishes to its `replyTo`).
    /// - Throws: as `publish`; `invalidSubject` when the message has no reply subject.
    public func respond(to message: NATSMessage, with payload: [UInt8], headers: NATSHeaders? = nil) throws(NATSError) {
        guard let replyTo = message.replyTo else { throw NATSError(.invalidSubject, "the message has no reply subject") }
        try publish(payload, to: replyTo, headers: headers)
    }

    /// A round trip to the server: returns once the server has processed everything sent
    /// before (a `PING` answered by its `PONG`).
    ///
    /// - Throws: `timedOut` after `timeout`; `disconnected` if the link is lost first (or is
    ///   down when called); `connectionClosed`; `cancelled`.
    public func flush(timeout: Duration = .seconds(5)) async throws(NATSError) {
        let waiter = _Waiter<Void>()
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<Void, NATSError>, Never>) in
                waiter.install { continuation.resume(returning: $0) }
                let outcome = box.withLockedValue { state -> (flush: Bool, error: NATSError?) in
                    switch state.phase {
                    case .closed: return (false, NATSError(.connectionClosed))
                    case .connected:
                        state.pongWaiters.append(.flush(waiter))
                        state.outbound.append(contentsOf: NATSFrames.ping)
                        return (state.needsFlushScheduled(), nil)
                    default: return (false, NATSError(.disconnected, "flush while not connected"))
                    }
                }
                if let error = outcome.error { waiter.complete(.failure(error)) }
                if outcome.flush { queue.async { self.flushOutbound() } }
                queue.asyncAfter(deadline: .now() + Self.dispatchInterval(timeout)) {
                    waiter.complete(.failure(NATSError(.timedOut, "no PONG within \(timeout)")))
                }
            }
        } onCancel: {
            waiter.complete(.failure(NATSError(.cancelled, "flush")))
        }
        try result.get()
    }

    // MARK: - Closing

    /// Closes the connection: what was published is written first (the socket is flushed,
    /// then shut down), every subscription's signal completes, waiting requests and flushes
    /// fail with `connectionClosed`, `state` becomes `.closed` and `events` sends `.closed`.
    ///
    /// Never blocks; idempotent. Publishing afterwards throws `connectionClosed`.
    public func close() {
        shutDown(error: nil)
    }

    /// Waits until `state` is `.closed` (after `close()`, a final error or no server left).
    public func closed() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let disposable = SerialDisposable()
            let once = _Waiter<Void>()
            once.install { _ in
                disposable.dispose()
                continuation.resume()
            }
            disposable.inner = state.producer.startWithValues { value in
                if value == .closed { once.complete(.success(())) }
            }
        }
    }

    static func dispatchInterval(_ duration: Duration) -> DispatchTimeInterval {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0 else { return .nanoseconds(0) }
        guard seconds < Int64(Int.max / 1_000_000_000) - 1 else { return .never }
        return .nanoseconds(Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000))
    }
}

/// Counters of a connection (`NATSConnection.statistics`).
public struct NATSStatistics: Sendable, Hashable {
    /// Messages and payload bytes received on subscriptions (replies included).
    public var inMessages: UInt64 = 0
    /// Payload bytes received.
    public var inBytes: UInt64 = 0
    /// Messages and payload bytes published (accepted by `publish`).
    public var outMessages: UInt64 = 0
    /// Payload bytes published.
    public var outBytes: UInt64 = 0
    /// Times the connection was re-established.
    public var reconnects: UInt64 = 0
    /// Publications refused because the reconnect buffer was full.
    public var reconnectBufferDrops: UInt64 = 0
    /// Messages a subscription dropped as a slow consumer.
    public var slowConsumerDrops: UInt64 = 0
}

/// A one-shot completion that may be attempted from several places (the reply, the time-out,
/// cancellation): the first wins, the others are ignored.
final class _Waiter<Value: Sendable>: Sendable {
    private struct State: Sendable {
        var done = false
        var result: Result<Value, NATSError>?
        var body: (@Sendable (Result<Value, NATSError>) -> Void)?
    }
    private let box = LockedValueBox(State())

    /// Sets what completing calls; if completed already, calls it at once.
    func install(_ body: @escaping @Sendable (Result<Value, NATSError>) -> Void) {
        let early: Result<Value, NATSError>? = box.withLockedValue { state in
            if state.done { return state.result }
            state.body = body
            return nil
        }
        if let early { body(early) }
    }

    /// Completes with `result` unless completed already; true if this call completed it.
    @discardableResult
    func complete(_ result: Result<Value, NATSError>) -> Bool {
        let outcome: (won: Bool, body: (@Sendable (Result<Value, NATSError>) -> Void)?) = box.withLockedValue { state in
            guard !state.done else { return (false, nil) }
            state.done = true
            if state.body == nil { state.result = result }
            defer { state.body = nil }
            return (true, state.body)
        }
        outcome.body?(result)
        return outcome.won
    }
}
