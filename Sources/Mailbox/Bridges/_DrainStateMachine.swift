/// The protocol of `SignalProducer.drain(into:…)` with its actor, as a pure state machine: each
/// method is named after what happened and appends, in order, the actions to perform — outside
/// any lock, by `_DrainRun` (swift-async-algorithms' state machine + storage shape).
///
/// ```
///  start ─ tell init ─────── ack ─ tell v1 ── ack ─ tell v2 ── ack ─ … ─ ack ─ tell complete
///          (nothing sent before the first ack; one message awaiting its ack at a time;
///           upstream values wait in the buffer meanwhile; completion after the last ack)
/// ```
///
/// Demand is one: `pending == nil` means the actor has acknowledged everything and wants one
/// more value; an ack with nothing pending changes nothing (it is remembered, not counted).
struct _DrainStateMachine<Value, Failure: Swift.Error> {
    /// What the run should do, in order.
    enum Action {
        /// Tell the actor the init message (built around the ack ref).
        case tellInit
        /// Tell the actor this value (built around the ack ref).
        case tellValue(Value)
        /// Tell the actor the completion message.
        case tellCompletion
        /// Tell the actor the failure message for this error.
        case tellFailure(DrainError<Failure>)
        /// Send this acknowledged value on the drain's run.
        case emitAcknowledged(Value)
        /// Complete the drain's run.
        case completeRun
        /// Fail the drain's run.
        case failRun(DrainError<Failure>)
        /// Interrupt the drain's run.
        case interruptRun
        /// Interrupt the upstream run.
        case interruptUpstream
        /// Stop watching the actor.
        case stopWatching
    }

    /// What was told to the actor and not acknowledged yet.
    private enum Pending {
        case initMessage
        case value(Value)
    }

    private let target: ActorAddress
    private let bufferLimit: Int
    private let overflow: DrainOverflow
    private var pending: Pending?
    private var buffer = _DrainBuffer<Value>()
    private var upstreamHasCompleted = false
    /// Whether the drain has ended: every later event is ignored.
    private(set) var isFinished = false
    /// Whether `started` has run.
    private var hasStarted = false

    init(target: ActorAddress, bufferLimit: Int, overflow: DrainOverflow) {
        self.target = target
        self.bufferLimit = bufferLimit
        self.overflow = overflow
    }

    /// The drain starts: the actor is told the init message.
    mutating func started(_ actions: inout [Action]) {
        guard !isFinished, !hasStarted else { return }
        hasStarted = true
        pending = .initMessage
        actions.append(.tellInit)
    }

    /// The actor acknowledged (through the ack ref). Returns `false` if the drain has ended:
    /// the ack is then a dead letter.
    mutating func acknowledged(_ actions: inout [Action]) -> Bool {
        guard !isFinished else { return false }
        switch pending {
        case nil:
            // Demand is one: nothing to acknowledge, already asking for one value.
            return true
        case .initMessage:
            pending = nil
        case let .value(value)?:
            pending = nil
            actions.append(.emitAcknowledged(value))
        }
        sendNextOrFinish(&actions)
        return true
    }

    /// The upstream sent `value`.
    mutating func upstreamSent(_ value: Value, _ actions: inout [Action]) {
        guard !isFinished else { return }
        if pending == nil && buffer.isEmpty && hasStarted {
            pending = .value(value)
            actions.append(.tellValue(value))
            return
        }
        guard buffer.count >= bufferLimit else {
            buffer.append(value)
            return
        }
        switch overflow {
        case .dropNewest:
            break
        case .dropOldest:
            if !buffer.isEmpty {
                _ = buffer.removeFirst()
                buffer.append(value)
            }
        case .fail:
            let error = DrainError<Failure>.drainFailed(DrainFailure(code: .bufferOverflow, target: target, bufferLimit: bufferLimit))
            finish(&actions)
            actions.append(.tellFailure(error))
            actions.append(.failRun(error))
            actions.append(.interruptUpstream)
        }
    }

    /// The upstream completed: the actor is told once every buffered value has been sent and
    /// acknowledged.
    mutating func upstreamCompleted(_ actions: inout [Action]) {
        guard !isFinished else { return }
        upstreamHasCompleted = true
        if pending == nil && hasStarted {
            sendNextOrFinish(&actions)
        }
    }

    /// The upstream failed: the actor is told at once (buffered values are discarded, as Akka
    /// does), and the drain fails.
    mutating func upstreamFailed(_ error: Failure, _ actions: inout [Action]) {
        guard !isFinished else { return }
        finish(&actions)
        actions.append(.tellFailure(.producerFailed(error)))
        actions.append(.failRun(.producerFailed(error)))
    }

    /// The upstream was interrupted: the actor is told `interrupted`, and the drain is
    /// interrupted.
    mutating func upstreamInterrupted(_ actions: inout [Action]) {
        guard !isFinished else { return }
        finish(&actions)
        actions.append(.tellFailure(.drainFailed(DrainFailure(code: .interrupted, target: target))))
        actions.append(.interruptRun)
    }

    /// The drain's run was disposed: nothing more is sent but the actor is told `interrupted`,
    /// and the upstream is interrupted.
    mutating func runDisposed(_ actions: inout [Action]) {
        guard !isFinished else { return }
        finish(&actions)
        actions.append(.tellFailure(.drainFailed(DrainFailure(code: .interrupted, target: target))))
        actions.append(.interruptUpstream)
    }

    /// The actor terminated: the upstream is interrupted and the drain fails; nobody is told.
    mutating func targetTerminated(_ actions: inout [Action]) {
        guard !isFinished else { return }
        isFinished = true
        buffer.removeAll()
        pending = nil
        let error = DrainError<Failure>.drainFailed(DrainFailure(code: .targetTerminated, target: target))
        actions.append(.failRun(error))
        actions.append(.interruptUpstream)
    }

    /// A message of the drain was refused by the actor's mailbox.
    mutating func deliveryFailed(_ reason: DeadLetter.Reason, _ actions: inout [Action]) {
        guard !isFinished else { return }
        if reason == .recipientTerminated {
            targetTerminated(&actions)
            actions.append(.stopWatching)
            return
        }
        let error = DrainError<Failure>.drainFailed(DrainFailure(code: .notDelivered, target: target, deliveryFailure: reason))
        finish(&actions)
        actions.append(.tellFailure(error))
        actions.append(.failRun(error))
        actions.append(.interruptUpstream)
    }

    /// With nothing pending: sends the next buffered value, or completes if the upstream has,
    /// or waits (demand one).
    private mutating func sendNextOrFinish(_ actions: inout [Action]) {
        if !buffer.isEmpty {
            let value = buffer.removeFirst()
            pending = .value(value)
            actions.append(.tellValue(value))
        } else if upstreamHasCompleted {
            finish(&actions)
            actions.append(.tellCompletion)
            actions.append(.completeRun)
        }
    }

    /// Ends the drain (the caller appends what to tell); the watch is no longer needed.
    private mutating func finish(_ actions: inout [Action]) {
        isFinished = true
        buffer.removeAll()
        pending = nil
        actions.append(.stopWatching)
    }
}

/// A FIFO queue of the values waiting for the actor's demand: amortised O(1) `append` and
/// `removeFirst`, releasing each value as it leaves.
struct _DrainBuffer<Element> {
    private var storage: [Element?] = []
    private var head = 0

    var count: Int { storage.count - head }
    var isEmpty: Bool { head == storage.count }

    mutating func append(_ element: Element) {
        storage.append(element)
    }

    /// Removes and returns the oldest element; the buffer must not be empty.
    mutating func removeFirst() -> Element {
        precondition(!isEmpty, "_DrainBuffer.removeFirst on an empty buffer")
        let element = storage[head].take()!
        head += 1
        if head == storage.count {
            storage.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 64 && head * 2 >= storage.count {
            storage.removeFirst(head)
            head = 0
        }
        return element
    }

    mutating func removeAll() {
        storage = []
        head = 0
    }
}
