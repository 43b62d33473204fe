import Mailbox
import MailboxNATS

/// The outbound half of the link to one node incarnation: numbers the sequenced frames, keeps
/// the window of frames sent and not yet acknowledged, and parks `send`s while it is full.
///
/// Numbering and publishing happen under one lock, so the order of the sequence numbers is
/// the order NATS receives the frames in (NATS keeps a publisher's order on a subject).
final class _PeerLink: Sendable {
    enum Outcome {
        case sent
        case full
        case closed
    }

    private struct State {
        var nextSequence: UInt64 = 1
        var acknowledged: UInt64 = 0
        var isClosed = false
        var waiters: [(id: UInt64, continuation: CheckedContinuation<Bool, Never>)] = []
        var nextWaiter: UInt64 = 0
        /// Whether an ack arrived since the last heartbeat (for the probe of a stalled window).
        var heardSinceTick = true

        var inFlight: Int { Int(nextSequence - 1 - acknowledged) }
    }

    let node: ClusterNode
    let subject: String
    private let window: Int
    private let transport: any _ClusterTransport
    private let state = LockedValueBox(State())

    init(node: ClusterNode, subject: String, window: Int, transport: any _ClusterTransport) {
        self.node = node
        self.subject = subject
        self.window = max(1, window)
        self.transport = transport
    }

    /// Sends a sequenced frame (`bytes` has room for the number at `sequenceOffset`) unless
    /// the window is full or the link closed.
    func send(_ bytes: consuming [UInt8], sequenceOffset: Int, replyTo: String? = nil, force: Bool = false) -> Outcome {
        var bytes = bytes
        return state.withLockedValue { state in
            if state.isClosed { return .closed }
            if !force, state.inFlight >= window { return .full }
            _Envelope.patchSequence(state.nextSequence, into: &bytes, at: sequenceOffset)
            do {
                try transport.publish(bytes, to: subject, replyTo: replyTo, headers: nil)
            } catch {
                // Refused by the client (buffers full, closed): nothing was sent, no number used.
                return .full
            }
            state.nextSequence += 1
            return .sent
        }
    }

    /// Waits until the window has room (true) or the link closes (false).
    func waitForRoom() async -> Bool {
        let id = state.withLockedValue { state -> UInt64 in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let resume: Bool? = state.withLockedValue { state in
                    if state.isClosed { return false }
                    if state.inFlight < window { return true }
                    state.waiters.append((id, continuation))
                    return nil
                }
                if let resume { continuation.resume(returning: resume) }
            }
        } onCancel: {
            let waiter = state.withLockedValue { state -> CheckedContinuation<Bool, Never>? in
                guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return state.waiters.remove(at: index).continuation
            }
            waiter?.resume(returning: true)
        }
    }

    /// The node has everything up to `sequence`: room for that many more.
    func acknowledged(_ sequence: UInt64) {
        let woken = state.withLockedValue { state -> [CheckedContinuation<Bool, Never>] in
            state.heardSinceTick = true
            guard sequence > state.acknowledged, sequence < state.nextSequence else { return [] }
            state.acknowledged = sequence
            let room = window - state.inFlight
            guard room > 0, !state.waiters.isEmpty else { return [] }
            let count = min(room, state.waiters.count)
            defer { state.waiters.removeFirst(count) }
            return state.waiters.prefix(count).map(\.continuation)
        }
        for waiter in woken { waiter.resume(returning: true) }
    }

    /// At a heartbeat: the highest number sent, when frames wait for an ack that has not come
    /// since the last heartbeat (the receiver is then told, so a lost tail does not hold the
    /// window forever).
    func stalledSequence() -> UInt64? {
        state.withLockedValue { state in
            defer { state.heardSinceTick = false }
            guard state.inFlight > 0, !state.heardSinceTick else { return nil }
            return state.nextSequence - 1
        }
    }

    /// Frames sent and not acknowledged.
    var inFlight: Int { state.withLockedValue { $0.inFlight } }

    /// The node is down: nothing more is sent; waiting `send`s fail.
    func close() {
        let waiters = state.withLockedValue { state -> [CheckedContinuation<Bool, Never>] in
            state.isClosed = true
            defer { state.waiters = [] }
            return state.waiters.map(\.continuation)
        }
        for waiter in waiters { waiter.resume(returning: false) }
    }

    var isClosed: Bool { state.withLockedValue { $0.isClosed } }
}

extension _Envelope {
    /// Where the sequence number sits in a frame from `node`.
    static func sequenceOffset(from node: ClusterNode) -> Int {
        3 + 4 + node.name.utf8.count + 8
    }

    static func patchSequence(_ sequence: UInt64, into bytes: inout [UInt8], at offset: Int) {
        var value = sequence
        for index in offset..<(offset + 8) {
            bytes[index] = UInt8(truncatingIfNeeded: value)
            value >>= 8
        }
    }
}
