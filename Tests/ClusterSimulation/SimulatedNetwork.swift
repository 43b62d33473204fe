import Mailbox
import MailboxCluster
import MailboxNATS
import MailboxTestKit

/// An in-memory NATS server and network on a `TestScheduler`: the transport of a simulated
/// cluster (`SimulatedCluster`), with the semantics `_ClusterTransport` asks for and faults
/// decided by a seeded `FaultPlan`.
///
/// Semantics (those of nats-server that the cluster core relies on):
/// - Subjects are dot-separated tokens; subscriptions may use `*` (one token) and `>` (the
///   rest). A message goes to every matching subscription of every connected connection.
/// - Without faults, messages from one connection reach each subscription in the order
///   published, `latency` later (plus a seeded jitter of up to `latency`).
/// - A publication with a reply subject that no subscription matches is answered by the
///   "server" with a status-503 message on the reply subject; a request to such a subject
///   fails with `noResponders`. A request with no reply within its time-out fails `timedOut`.
/// - `disconnect(_:for:)` takes a connection's link down (`state` is `.reconnecting`, its
///   subscriptions are gone from the server, what it publishes is buffered and sent on
///   reconnecting, as the NATS client does); `kill(_:)` closes it for good, as a killed process.
///
/// Faults, per delivery (one message to one subscription), decided by `plan` from its seed, the
/// pair (publishing connection, subscription) and how many messages that pair has carried —
/// so a decision does not depend on how other pairs interleave:
/// - `FaultPoint.drop` (`.fail`): the message is lost.
/// - `FaultPoint.duplicate` (`.fail`): it arrives twice.
/// - `FaultPoint.delay` (`.delay(d)`): it and everything after it on the pair arrive `d` late
///   (a slow link: order kept).
/// - `FaultPoint.reorder` (`.delay(d)`): it alone arrives `d` late (later ones overtake it).
/// - `FaultPoint.partition` (`.stall(d)`): the nodes split into two seeded sides that cannot
///   reach each other for `d` (the server keeps their subscriptions: requests across time out).
/// - `FaultPoint.kill` (`.fail`): the receiving connection is killed.
/// `partition(_:for:)` and `kill(_:)` script the same faults directly. Between sides of a
/// partition nothing is delivered, including messages already in flight.
///
/// Thread-safety: every member may be called from any thread, but the simulation is meant to
/// run on the thread that advances `scheduler`; handlers run inside its actions.
package final class SimulatedNetwork: Sendable {
    /// The names of the fault points a plan may use.
    package enum FaultPoint {
        package static let drop = "network.drop"
        package static let duplicate = "network.duplicate"
        package static let delay = "network.delay"
        package static let reorder = "network.reorder"
        package static let partition = "network.partition"
        package static let kill = "network.kill"
    }

    /// What the network did, for assertions that the faults happened.
    package struct Statistics: Sendable, Hashable, CustomStringConvertible {
        package var published = 0
        package var delivered = 0
        package var dropped = 0
        package var duplicated = 0
        package var delayed = 0
        package var reordered = 0
        /// Deliveries not made because a partition stood between the two ends.
        package var partitioned = 0
        package var partitions = 0
        package var kills = 0
        package var noResponders = 0
        package var timedOut = 0

        package var description: String {
            "published \(published), delivered \(delivered), dropped \(dropped), duplicated \(duplicated), delayed \(delayed), "
                + "reordered \(reordered), cut by partitions \(partitioned) (\(partitions) partitions), kills \(kills), "
                + "no-responders \(noResponders), timed out \(timedOut)"
        }
    }

    fileprivate enum LinkStatus: Equatable {
        case connected
        case disconnected
        case closed
    }

    fileprivate struct Connection {
        let name: String
        var status: LinkStatus = .connected
        let property: MutableProperty<NATSConnectionState>
        /// Publications made while disconnected, sent on reconnecting.
        var buffered: [(payload: [UInt8], subject: String, replyTo: String?)] = []
    }

    fileprivate struct Subscription {
        let id: UInt64
        let connection: UInt64
        let pattern: [Substring]
        /// The queue group and subject, when in one.
        let group: String?
        let handler: @Sendable (NATSMessage) -> Void
    }

    fileprivate struct Request {
        let connection: UInt64
        let completion: @Sendable (Result<NATSMessage, NATSError>) -> Void
    }

    /// A (publishing connection, subscription or inbox) pair.
    fileprivate struct PairKey: Hashable {
        let from: UInt64
        let to: UInt64
    }

    fileprivate struct Pair {
        /// Names the pair in fault decisions ("a>b c1>7").
        let name: String
        let hash: UInt64
        /// Per rule of the plan: the point name its trigger is drawn under for this pair.
        let rulePoints: [String]
        var carried = 0
        var lastDue: Duration = .zero

        init(name: String, plan: FaultPlan) {
            self.name = name
            self.hash = _stableHash(name)
            self.rulePoints = plan.rules.map { "\($0.point) \(name)" }
        }
    }

    fileprivate struct State {
        var nextID: UInt64 = 1
        var connections: [UInt64: Connection] = [:]
        /// In the order made (deterministic matching order).
        var subscriptions: [Subscription] = []
        /// Waiting requests by inbox subject.
        var requests: [String: Request] = [:]
        /// The side of each node name while a partition stands.
        var sides: [String: Int]?
        /// The side of names a partition did not list.
        var unlistedSide = 0
        var partitionGeneration = 0
        /// Per (publisher, subscription) pair: messages carried, when the last is due, and the
        /// names its fault decisions are drawn under.
        var pairs: [PairKey: Pair] = [:]
        var statistics = Statistics()
        var killed: [String] = []
        var faultsEnabled = true

        func isCut(_ a: String, _ b: String) -> Bool {
            guard let sides, a != b else { return false }
            return sides[a, default: unlistedSide] != sides[b, default: unlistedSide]
        }
    }

    /// The virtual clock everything runs on.
    package let scheduler: TestScheduler
    /// The faults.
    package let plan: FaultPlan
    /// Time from publish to delivery without faults (plus a seeded jitter up to as much).
    package let latency: Duration
    /// Protected by its lock; never held while a handler or completion runs.
    private let state = LockedValueBox(State())
    /// The points `plan` has rules for.
    private let pointsInPlan: Set<String>

    /// A network on `scheduler` whose faults `plan` decides.
    package init(scheduler: TestScheduler, plan: FaultPlan, latency: Duration = .milliseconds(1)) {
        self.scheduler = scheduler
        self.plan = plan
        self.latency = latency
        self.pointsInPlan = Set(plan.rules.map(\.point))
    }

    /// What happened so far.
    package var statistics: Statistics { state.withLockedValue { $0.statistics } }

    /// Whether the plan's faults apply to new publications (true at first). Turn them off to
    /// let a simulation calm down (scripted partitions and kills still work).
    package var faultsEnabled: Bool {
        get { state.withLockedValue { $0.faultsEnabled } }
        set { state.withLockedValue { $0.faultsEnabled = newValue } }
    }

    /// The names of the connections killed (by `kill` or by the plan), in order.
    package var killed: [String] { state.withLockedValue { $0.killed } }

    /// A new connection (a node's), named `name` for partitions and `kill`.
    package func connect(name: String) -> SimulatedConnection {
        let id = state.withLockedValue { state -> UInt64 in
            defer { state.nextID += 1 }
            state.connections[state.nextID] = Connection(name: name, property: MutableProperty(.connected))
            return state.nextID
        }
        return SimulatedConnection(network: self, id: id, name: name)
    }

    // MARK: Scripted faults

    /// Splits the network: no message crosses between `sides` (names not listed are together
    /// on one more side) until `duration` has passed (forever when nil, until `heal()`).
    package func partition(_ sides: [Set<String>], for duration: Duration?) {
        let generation = state.withLockedValue { state -> Int in
            var map: [String: Int] = [:]
            for (index, side) in sides.enumerated() {
                for name in side { map[name] = index }
            }
            state.sides = map
            state.unlistedSide = sides.count
            state.partitionGeneration += 1
            state.statistics.partitions += 1
            return state.partitionGeneration
        }
        if let duration {
            scheduler.schedule(after: duration) { [weak self] in
                self?.state.withLockedValue { state in
                    if state.partitionGeneration == generation { state.sides = nil }
                }
            }
        }
    }

    /// Ends the partition, if any.
    package func heal() {
        state.withLockedValue { $0.sides = nil }
    }

    /// Whether a partition stands.
    package var isPartitioned: Bool { state.withLockedValue { $0.sides != nil } }

    /// Kills every live connection named `name`, as a killed process: its subscriptions leave
    /// the server, what is in flight to it is lost, it can publish nothing more; its `state`
    /// becomes `.closed`.
    package func kill(_ name: String) {
        let ids = state.withLockedValue { state in
            state.connections.filter { $0.value.name == name && $0.value.status != .closed }.map(\.key).sorted()
        }
        for id in ids { close(id, killed: true) }
    }

    /// Takes connection `name`'s link down for `duration`: it reconnects afterwards (its
    /// subscriptions come back and what it published meanwhile is sent).
    package func disconnect(_ name: String, for duration: Duration) {
        let ids = state.withLockedValue { state -> [(UInt64, MutableProperty<NATSConnectionState>)] in
            let ids = state.connections.filter { $0.value.name == name && $0.value.status == .connected }.map(\.key).sorted()
            for id in ids { state.connections[id]!.status = .disconnected }
            return ids.map { ($0, state.connections[$0]!.property) }
        }
        for (id, property) in ids {
            property.value = .reconnecting
            scheduler.schedule(after: duration) { [weak self] in self?.reconnect(id) }
        }
    }

    private func reconnect(_ id: UInt64) {
        let reconnected = state.withLockedValue { state -> (MutableProperty<NATSConnectionState>, [(payload: [UInt8], subject: String, replyTo: String?)])? in
            guard var connection = state.connections[id], connection.status == .disconnected else { return nil }
            connection.status = .connected
            let buffered = connection.buffered
            connection.buffered = []
            state.connections[id] = connection
            return (connection.property, buffered)
        }
        guard let (property, buffered) = reconnected else { return }
        property.value = .connected
        for publication in buffered {
            try? publish(from: id, publication.payload, to: publication.subject, replyTo: publication.replyTo, headers: nil)
        }
    }

    // MARK: The connection's operations

    fileprivate func close(_ id: UInt64, killed: Bool) {
        let closed = state.withLockedValue { state -> (MutableProperty<NATSConnectionState>, [Request])? in
            guard var connection = state.connections[id], connection.status != .closed else { return nil }
            connection.status = .closed
            connection.buffered = []
            state.connections[id] = connection
            state.subscriptions.removeAll { $0.connection == id }
            let inboxes = state.requests.filter { $0.value.connection == id }.map(\.key).sorted()
            let requests = inboxes.compactMap { state.requests.removeValue(forKey: $0) }
            if killed {
                state.statistics.kills += 1
                state.killed.append(connection.name)
            }
            return (connection.property, requests)
        }
        guard let (property, requests) = closed else { return }
        for request in requests { request.completion(.failure(NATSError(.connectionClosed))) }
        property.value = .closed
    }

    fileprivate func state(of id: UInt64) -> Property<NATSConnectionState> {
        Property(capturing: state.withLockedValue { $0.connections[id]!.property })
    }

    fileprivate func isClosed(_ id: UInt64) -> Bool {
        state.withLockedValue { $0.connections[id]?.status == .closed }
    }

    fileprivate func subscribe(from id: UInt64, to subject: String, queue: String?, handler: @escaping @Sendable (NATSMessage) -> Void) throws(NATSError) -> any Disposable {
        guard Self.isValidSubject(subject, wildcards: true) else { throw NATSError(.invalidSubject, subject.debugDescription) }
        let subscription = try state.withLockedValue { state throws(NATSError) -> UInt64 in
            guard state.connections[id]?.status != .closed else { throw NATSError(.connectionClosed) }
            defer { state.nextID += 1 }
            state.subscriptions.append(Subscription(id: state.nextID, connection: id, pattern: subject.split(separator: ".", omittingEmptySubsequences: false), group: queue.map { "\($0) \(subject)" }, handler: handler))
            return state.nextID
        }
        return AnyDisposable { [weak self] in
            self?.state.withLockedValue { $0.subscriptions.removeAll { $0.id == subscription } }
        }
    }

    /// Where one publication goes: a subscription, or a waiting request's inbox.
    private enum Target {
        case subscription(Subscription, name: String)
        case request(inbox: String, Request, name: String)

        /// The subscription's ID, or for a request's inbox its connection's with the top bit set.
        var key: UInt64 {
            switch self {
            case let .subscription(subscription, _): return subscription.id
            case let .request(_, request, _): return request.connection | (1 << 63)
            }
        }

        var name: String {
            switch self {
            case let .subscription(_, name), let .request(_, _, name): return name
            }
        }
    }

    /// One delivery planned at publish time.
    private struct Delivery {
        let target: Target
        let after: Duration
        let copies: Int
    }

    fileprivate func publish(from id: UInt64, _ payload: [UInt8], to subject: String, replyTo: String?, headers: NATSHeaders?) throws(NATSError) {
        guard Self.isValidSubject(subject, wildcards: false) else { throw NATSError(.invalidSubject, subject.debugDescription) }
        let message = NATSMessage(subject: subject, replyTo: replyTo, headers: headers, payload: payload)
        let now = scheduler.elapsed
        let planned = try state.withLockedValue { state throws(NATSError) -> (from: String, deliveries: [Delivery], kills: [String], noResponders: Bool)? in
            guard let connection = state.connections[id] else { throw NATSError(.connectionClosed) }
            switch connection.status {
            case .closed:
                throw NATSError(.connectionClosed)
            case .disconnected:
                state.connections[id]!.buffered.append((payload, subject, replyTo))
                return nil
            case .connected:
                break
            }
            state.statistics.published += 1
            let tokens = subject.split(separator: ".", omittingEmptySubsequences: false)
            var targets: [Target] = []
            var groups: [String: [Target]] = [:]
            var groupOrder: [String] = []
            for subscription in state.subscriptions where Self.matches(subscription.pattern, tokens) {
                guard let owner = state.connections[subscription.connection], owner.status == .connected else { continue }
                if let group = subscription.group {
                    if groups[group] == nil { groupOrder.append(group) }
                    groups[group, default: []].append(.subscription(subscription, name: owner.name))
                } else {
                    targets.append(.subscription(subscription, name: owner.name))
                }
            }
            // One member of each queue group, chosen by the seed.
            for group in groupOrder {
                let members = groups[group]!
                let pick = SplitMix64.mix(plan.seed ^ _stableHash(group) &+ UInt64(state.statistics.published))
                targets.append(members[Int(pick % UInt64(members.count))])
            }
            if let request = state.requests[subject], let owner = state.connections[request.connection] {
                targets.append(.request(inbox: subject, request, name: owner.name))
            }
            var deliveries: [Delivery] = []
            var kills: [String] = []
            for target in targets {
                let key = PairKey(from: id, to: target.key)
                var pair = state.pairs[key] ?? Pair(name: "\(connection.name)>\(target.name) c\(id)>\(target.key)", plan: plan)
                pair.carried += 1
                let hit = pair.carried
                let point = pair.name
                var after = latency + .nanoseconds(Int64(SplitMix64.mix(plan.seed ^ pair.hash &+ UInt64(hit)) % UInt64(max(1, _nanoseconds(latency)))))
                defer { state.pairs[key] = pair }
                var copies = 1
                var keepsOrder = true
                if fires(FaultPoint.drop, hit, pair, enabled: state.faultsEnabled) != nil {
                    state.statistics.dropped += 1
                    continue
                }
                if fires(FaultPoint.duplicate, hit, pair, enabled: state.faultsEnabled) != nil {
                    state.statistics.duplicated += 1
                    copies = 2
                }
                if let delay = fires(FaultPoint.delay, hit, pair, enabled: state.faultsEnabled)?.delay {
                    state.statistics.delayed += 1
                    after += delay
                }
                if let delay = fires(FaultPoint.reorder, hit, pair, enabled: state.faultsEnabled)?.delay {
                    state.statistics.reordered += 1
                    after += delay
                    keepsOrder = false
                }
                if keepsOrder {
                    // FIFO per pair: never due before the one published before it.
                    let due = max(now + after, pair.lastDue)
                    pair.lastDue = due
                    after = due - now
                }
                if let stall = fires(FaultPoint.partition, hit, pair, enabled: state.faultsEnabled)?.stall, state.sides == nil {
                    startPartition(&state, for: stall, hit: hit, point: point)
                }
                if fires(FaultPoint.kill, hit, pair, enabled: state.faultsEnabled)?.isFailure == true, target.name != connection.name {
                    kills.append(target.name)
                }
                deliveries.append(Delivery(target: target, after: after, copies: copies))
            }
            let noResponders = replyTo != nil && targets.isEmpty
            if noResponders { state.statistics.noResponders += 1 }
            return (connection.name, deliveries, kills, noResponders)
        }
        guard let planned else { return }
        for delivery in planned.deliveries {
            for _ in 0..<delivery.copies {
                scheduler.schedule(after: delivery.after) { [weak self] in
                    self?.deliver(message, to: delivery.target, from: planned.from)
                }
            }
        }
        if planned.noResponders, let replyTo {
            // The server answers the publisher: no partition between them.
            var headers = NATSHeaders()
            headers.status = 503
            headers.statusDescription = "No Responders"
            let answer = NATSMessage(subject: replyTo, headers: headers, payload: [])
            scheduler.schedule(after: latency) { [weak self] in self?.answerFromServer(answer, to: id) }
        }
        for name in planned.kills { kill(name) }
    }

    private func fires(_ point: String, _ hit: Int, _ pair: Pair, enabled: Bool) -> FaultEffect? {
        guard enabled, pointsInPlan.contains(point) else { return nil }
        for (index, rule) in plan.rules.enumerated() where rule.point == point {
            if rule.trigger.fires(atHit: hit, of: pair.rulePoints[index], seed: plan.seed) { return rule.effect }
        }
        return nil
    }

    private func startPartition(_ state: inout State, for duration: Duration, hit: Int, point: String) {
        let names = Set(state.connections.values.filter { $0.status != .closed }.map(\.name)).sorted()
        guard names.count >= 2 else { return }
        var bits = SplitMix64.mix(plan.seed ^ _stableHash("partition \(point)") &+ UInt64(hit))
        var sides: [String: Int] = [:]
        for name in names {
            sides[name] = Int(bits & 1)
            bits >>= 1
        }
        if Set(sides.values).count == 1 { sides[names[0]] = 1 - sides[names[0]]! }
        state.sides = sides
        state.unlistedSide = 0
        state.partitionGeneration += 1
        state.statistics.partitions += 1
        let generation = state.partitionGeneration
        scheduler.schedule(after: duration) { [weak self] in
            self?.state.withLockedValue { state in
                if state.partitionGeneration == generation { state.sides = nil }
            }
        }
    }

    private func deliver(_ message: NATSMessage, to target: Target, from: String) {
        enum Action {
            case handle(@Sendable (NATSMessage) -> Void)
            case complete(@Sendable (Result<NATSMessage, NATSError>) -> Void, Result<NATSMessage, NATSError>)
        }
        let action = state.withLockedValue { state -> Action? in
            if state.isCut(from, target.name) {
                state.statistics.partitioned += 1
                return nil
            }
            switch target {
            case let .subscription(subscription, _):
                // Unsubscribed or disconnected meanwhile: lost.
                guard state.subscriptions.contains(where: { $0.id == subscription.id }),
                      state.connections[subscription.connection]?.status == .connected
                else { return nil }
                state.statistics.delivered += 1
                return .handle(subscription.handler)
            case let .request(inbox, _, _):
                guard let request = state.requests.removeValue(forKey: inbox) else { return nil }
                state.statistics.delivered += 1
                return .complete(request.completion, message.status == 503 ? .failure(NATSError(.noResponders)) : .success(message))
            }
        }
        switch action {
        case nil: break
        case let .handle(handler): handler(message)
        case let .complete(completion, result): completion(result)
        }
    }

    /// A status message from the server to connection `id` (no faults on that hop).
    private func answerFromServer(_ message: NATSMessage, to id: UInt64) {
        enum Action {
            case handle([@Sendable (NATSMessage) -> Void])
            case complete(@Sendable (Result<NATSMessage, NATSError>) -> Void)
        }
        let action = state.withLockedValue { state -> Action? in
            guard state.connections[id]?.status == .connected else { return nil }
            if let request = state.requests[message.subject], request.connection == id {
                state.requests[message.subject] = nil
                return .complete(request.completion)
            }
            let tokens = message.subject.split(separator: ".", omittingEmptySubsequences: false)
            return .handle(state.subscriptions.filter { $0.connection == id && Self.matches($0.pattern, tokens) }.map(\.handler))
        }
        switch action {
        case nil: break
        case let .complete(completion): completion(.failure(NATSError(.noResponders)))
        case let .handle(handlers): for handler in handlers { handler(message) }
        }
    }

    fileprivate func request(
        from id: UInt64, _ payload: [UInt8], to subject: String, timeout: Duration, completion: @escaping @Sendable (Result<NATSMessage, NATSError>) -> Void
    ) {
        let inbox = state.withLockedValue { state -> String? in
            guard state.connections[id]?.status != .closed else { return nil }
            defer { state.nextID += 1 }
            let inbox = "_INBOX.\(id).\(state.nextID)"
            state.requests[inbox] = Request(connection: id, completion: completion)
            return inbox
        }
        guard let inbox else { return completion(.failure(NATSError(.connectionClosed))) }
        scheduler.schedule(after: timeout) { [weak self] in
            guard let self else { return }
            let request = self.state.withLockedValue { state -> Request? in
                guard let request = state.requests.removeValue(forKey: inbox) else { return nil }
                state.statistics.timedOut += 1
                return request
            }
            request?.completion(.failure(NATSError(.timedOut, "no reply within \(timeout)")))
        }
        do throws(NATSError) {
            try publish(from: id, payload, to: subject, replyTo: inbox, headers: nil)
        } catch {
            let request = state.withLockedValue { $0.requests.removeValue(forKey: inbox) }
            request?.completion(.failure(error))
        }
    }

    // MARK: Subjects

    static func matches(_ pattern: [Substring], _ tokens: [Substring]) -> Bool {
        var index = 0
        for token in pattern {
            if token == ">" { return tokens.count > index }
            guard index < tokens.count, token == "*" || token == tokens[index] else { return false }
            index += 1
        }
        return index == tokens.count
    }

    static func isValidSubject(_ subject: String, wildcards: Bool) -> Bool {
        var tokenStart = true
        var previousWildcard = false
        var sawFullWildcard = false
        for byte in subject.utf8 {
            if sawFullWildcard { return false }
            switch byte {
            case UInt8(ascii: "."):
                if tokenStart { return false }
                tokenStart = true
                previousWildcard = false
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r"), UInt8(ascii: "\n"):
                return false
            case UInt8(ascii: "*"), UInt8(ascii: ">"):
                guard wildcards, tokenStart else { return false }
                tokenStart = false
                previousWildcard = true
                sawFullWildcard = byte == UInt8(ascii: ">")
            default:
                if previousWildcard { return false }
                tokenStart = false
            }
        }
        return !tokenStart
    }
}

/// One node's connection to a `SimulatedNetwork`: a `_ClusterTransport`.
///
/// Thread-safety: as `SimulatedNetwork`.
package final class SimulatedConnection: _ClusterTransport {
    /// The network it is on.
    package let network: SimulatedNetwork
    /// Its name (the node's): what partitions and kills refer to.
    package let name: String
    private let id: UInt64
    package let state: Property<NATSConnectionState>

    fileprivate init(network: SimulatedNetwork, id: UInt64, name: String) {
        self.network = network
        self.id = id
        self.name = name
        self.state = network.state(of: id)
    }

    package func publish(_ payload: [UInt8], to subject: String, replyTo: String?, headers: NATSHeaders?) throws(NATSError) {
        try network.publish(from: id, payload, to: subject, replyTo: replyTo, headers: headers)
    }

    package func clusterSubscribe(to subject: String, queue: String?, handler: @escaping @Sendable (NATSMessage) -> Void) throws(NATSError) -> any Disposable {
        try network.subscribe(from: id, to: subject, queue: queue, handler: handler)
    }

    package func request(_ payload: [UInt8], to subject: String, headers: NATSHeaders?, timeout: Duration?) async throws(NATSError) -> NATSMessage {
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<NATSMessage, NATSError>, Never>) in
            network.request(from: id, payload, to: subject, timeout: timeout ?? .seconds(5)) { continuation.resume(returning: $0) }
        }
        return try result.get()
    }

    package func request(_ payload: [UInt8], to subject: String, timeout: Duration, completion: @escaping @Sendable (Result<NATSMessage, NATSError>) -> Void) {
        network.request(from: id, payload, to: subject, timeout: timeout, completion: completion)
    }

    package func respond(to message: NATSMessage, with payload: [UInt8], headers: NATSHeaders?) throws(NATSError) {
        guard let replyTo = message.replyTo else { throw NATSError(.invalidSubject, "the message has no reply subject") }
        try publish(payload, to: replyTo, replyTo: nil, headers: headers)
    }

    package func flush(timeout: Duration) async throws(NATSError) {
        if network.isClosed(id) { throw NATSError(.connectionClosed) }
    }

    package func close() {
        network.close(id, killed: false)
    }

    package func closed() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = LockedValueBox(false)
            let disposable = SerialDisposable()
            disposable.inner = state.producer.startWithValues { value in
                guard value == .closed, !done.withLockedValue({ done in defer { done = true }; return done }) else { return }
                disposable.dispose()
                continuation.resume()
            }
        }
    }
}

/// `duration` in whole nanoseconds (saturating).
func _nanoseconds(_ duration: Duration) -> Int64 {
    let (seconds, attoseconds) = duration.components
    let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
    if overflow { return seconds > 0 ? .max : .min }
    return scaled &+ attoseconds / 1_000_000_000
}

/// FNV-1a over `text`'s UTF-8: a hash that is the same in every process (`Hasher` is not).
func _stableHash(_ text: String) -> UInt64 {
    var hash: UInt64 = 0xCBF2_9CE4_8422_2325
    for byte in text.utf8 {
        hash ^= UInt64(byte)
        hash &*= 0x0000_0100_0000_01B3
    }
    return hash
}
