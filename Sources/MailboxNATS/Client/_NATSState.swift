#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
import MailboxNet

/// Everything about a `NATSConnection` that changes; lives in its `LockedValueBox` and is only
/// touched with that lock held. Methods decide; the connection performs what they return
/// outside the lock.
struct _NATSState {
    enum Phase {
        /// No link: an attempt is scheduled or running (first connect).
        case connecting
        /// A socket is open; waiting for `INFO` (`awaitingInfo`) or the `PONG` of the handshake.
        case handshaking(_NATSLink, awaitingInfo: Bool)
        case connected(_NATSLink)
        /// The link was lost; an attempt is scheduled or running.
        case reconnecting
        case closed
    }

    var phase = Phase.connecting
    var servers: [_ServerEntry]
    /// The server of the last attempt (index into `servers`).
    var serverIndex = -1
    var currentServer: NATSServerAddress? {
        servers.indices.contains(serverIndex) ? servers[serverIndex].address : nil
    }
    var info: NATSServerInfo? {
        didSet { maxPayload = info?.maxPayload ?? Int.max }
    }
    /// `info`'s `max_payload`, read on every publish (copying `info` out would retain its strings).
    var maxPayload = Int.max
    var hasConnectedOnce = false
    /// Why the last link or attempt ended.
    var lastError: NATSError?
    /// Resumed by the first successful handshake, or when the initial connect gives up.
    var connectWaiter: (@Sendable (Result<Void, NATSError>) -> Void)?

    /// Frames waiting for the next flush (while connected) or for the reconnect (otherwise).
    var outbound: [UInt8] = []
    var flushScheduled = false
    /// The socket's queue was full: the outbound buffer waits for its `onWritable`.
    var flushDeferred = false
    /// The read thread while it delivers a batch to observers; what they publish meanwhile is
    /// flushed once at the end of the batch (`publishedWhileDelivering`).
    var deliveringThread: pthread_t?
    var publishedWhileDelivering = false

    var subscriptions: [UInt64: _SubscriptionEntry] = [:]
    var nextSID: UInt64 = 1
    /// The wildcard inbox subscription for requests, made on the first request.
    var inbox: (prefix: String, sid: UInt64)?
    var requests: [Substring: _PendingRequest] = [:]
    /// Fires at the earliest deadline of `requests` (one timer for all of them).
    var requestTimer: (any DispatchSourceTimer)?
    var requestTimerDeadline: DispatchTime?
    var nextRequestToken: UInt64 = 0

    var pongWaiters: [_PongWaiter] = []
    var pingsOutstanding = 0
    var pingTimer: (any DispatchSourceTimer)?

    var statistics = NATSStatistics()

    init(servers: [_ServerEntry]) {
        self.servers = servers
    }

    var link: _NATSLink? {
        switch phase {
        case .handshaking(let link, _), .connected(let link): link
        default: nil
        }
    }

    var isConnected: Bool {
        if case .connected = phase { return true }
        return false
    }

    var isClosed: Bool {
        if case .closed = phase { return true }
        return false
    }

    /// Whether a publication of `bodySize` bytes (headers and payload) may be accepted now;
    /// counts a refusal for a full reconnect buffer.
    mutating func checkPublish(bodySize: Int, subject: String, configuration: NATSConfiguration) throws(NATSError) {
        if bodySize > maxPayload {
            throw NATSError(.maxPayloadExceeded, "\(bodySize) bytes to \(subject); the server allows \(maxPayload)")
        }
        switch phase {
        case .closed:
            throw NATSError(.connectionClosed)
        case .connected:
            if outbound.count + bodySize > configuration.outboundBufferLimit {
                throw NATSError(.outboundBufferExceeded, "\(outbound.count) bytes wait for the socket")
            }
        default:
            if outbound.count + bodySize + subject.utf8.count + 32 > configuration.reconnectBufferSize {
                statistics.reconnectBufferDrops += 1
                throw NATSError(.reconnectBufferExceeded, "\(outbound.count) of \(configuration.reconnectBufferSize) bytes buffered while disconnected")
            }
        }
    }

    /// Closes for good: everything that waits is taken out to be failed or finished outside
    /// the lock; nil if already closed.
    mutating func close() -> _Closing? {
        guard !isClosed else { return nil }
        var closing = _Closing(link: link, final: isConnected ? outbound : [], connectWaiter: connectWaiter)
        phase = .closed
        outbound = []
        connectWaiter = nil
        pingTimer?.cancel()
        pingTimer = nil
        requestTimer?.cancel()
        requestTimer = nil
        closing.sinks = subscriptions.values.map(\.sink)
        subscriptions = [:]
        for waiter in pongWaiters {
            if case .flush(let flushWaiter) = waiter { closing.pongs.append(flushWaiter) }
        }
        pongWaiters = []
        closing.requests = requests.values.map(\.waiter)
        requests = [:]
        return closing
    }

    /// After a publication was appended to `outbound`: how it gets written.
    /// - `none`: a flush is on its way (scheduled, deferred until the socket has room, at the
    ///   end of the batch this read thread delivers), or there is no link (it waits for one);
    /// - `inline`: write now on the calling thread (a request, or a full 64 KiB chunk);
    /// - `schedule`: the first publication since the last flush schedules one on the queue.
    mutating func flushDecision(inline: Bool) -> _FlushDecision {
        if let thread = deliveringThread, pthread_equal(thread, pthread_self()) != 0 {
            publishedWhileDelivering = true
            return .none
        }
        guard isConnected, !flushDeferred else { return .none }
        if inline || outbound.count >= 64 * 1024 { return .inline }
        return needsFlushScheduled() ? .schedule : .none
    }

    /// After appending to `outbound`: true when the caller must schedule a flush.
    mutating func needsFlushScheduled() -> Bool {
        guard isConnected, !flushScheduled, !flushDeferred else { return false }
        flushScheduled = true
        return true
    }

    /// The frames that re-create every subscription on a new link (with the messages each
    /// still expects when it has a maximum), then the inbox.
    func resubscribeFrames() -> [UInt8] {
        var frames: [UInt8] = []
        for (sid, entry) in subscriptions.sorted(by: { $0.key < $1.key }) {
            NATSFrames.appendSubscribe(to: &frames, subject: entry.subject, queue: entry.queue, sid: sid)
            if let max = entry.max {
                NATSFrames.appendUnsubscribe(to: &frames, sid: sid, max: max - entry.delivered)
            }
        }
        if let inbox {
            NATSFrames.appendSubscribe(to: &frames, subject: inbox.prefix + "*", queue: nil, sid: inbox.sid)
        }
        return frames
    }
}

/// A subscription as the connection's state knows it.
struct _SubscriptionEntry {
    var subject: String
    var queue: String?
    /// Unsubscribe after this many messages in total (`unsubscribe(after:)`).
    var max: Int?
    var delivered = 0
    let sink: _SubscriptionSink
}

/// A server of the list, with its attempts.
struct _ServerEntry {
    var address: NATSServerAddress
    /// Announced by the cluster (`connect_urls`), not configured.
    var discovered: Bool
    var failedAttempts = 0
    var lastAttempt: ContinuousClock.Instant?
}

/// What closing hands over to be done outside the lock (`_NATSState.close()`).
struct _Closing {
    /// The link to close, and what was published but not yet written, sent before the end.
    let link: _NATSLink?
    let final: [UInt8]
    let connectWaiter: (@Sendable (Result<Void, NATSError>) -> Void)?
    var sinks: [_SubscriptionSink] = []
    var pongs: [_Waiter<Void>] = []
    var requests: [_Waiter<NATSMessage>] = []
}

/// How a publication's bytes get written (`_NATSState.flushDecision`).
enum _FlushDecision {
    case none, schedule, inline
}

/// A request waiting for its reply.
struct _PendingRequest {
    let waiter: _Waiter<NATSMessage>
    let subject: String
    let timeout: Duration
    let deadline: DispatchTime
}

/// Who waits for a `PONG`, in the order the `PING`s were sent.
enum _PongWaiter {
    /// The keep-alive ping.
    case keepalive
    /// `flush()`.
    case flush(_Waiter<Void>)
}

/// One socket to one server and the parser reading it. Callbacks of a link that is no longer
/// the connection's current one (compared by identity) are ignored.
// Safe: `parser`, the only mutable field, is touched only on the transport's serial read queue.
final class _NATSLink: @unchecked Sendable {
    let transport: TCPConnection
    /// Touched only on the transport's serial read queue (its `onRead` callback).
    var parser = NATSProtocolParser()

    init(transport: TCPConnection) {
        self.transport = transport
    }
}

// Only ever touched inside `NATSConnection.box`'s pthread mutex (its Dispatch timer and the
// links' parsers are not `Sendable` themselves).
extension _NATSState: @unchecked Sendable {}
