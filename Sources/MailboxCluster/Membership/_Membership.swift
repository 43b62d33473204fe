import Mailbox

/// Membership and failure detection as a pure state machine: events in (a heartbeat heard, a
/// tick of the clock, a probe's outcome, the node's own NATS link going down or up), the
/// member changes and the probes to send out. No clock, no I/O: the core feeds it the time
/// (`Duration` since the node started) and performs what it returns, so the rules are tested
/// table-driven and the simulation drives the same code.
///
/// The rules (see docs/Cluster.md, "Failure detection"):
/// - A node is `joining` from its first heartbeat until its receptionist registry (the
///   version its heartbeats announce) has arrived here, then `up`: an `up` member's
///   registrations are listed on this node. A node with no registrations is `up` at once.
/// - A node not heard for `probeAfter` is probed: a request on its own subject. An answer
///   means it is alive (slow heartbeats); a time-out makes it `unreachable`; NATS answering
///   "no responders" means nobody listens on its subject — its connection is gone — and if
///   that holds for `goneAfter` while this node's own link has been up for `settle`, it is
///   `down` (the fast path for a killed process).
/// - A node `unreachable` for `downAfter` is `down`. Heard again before, it is `up` again.
/// - `down` is final for the incarnation: it is `removed` at the next tick and its heartbeats
///   are ignored afterwards (the node is told, and rejoins under a new incarnation). A new
///   incarnation of the same name downs the old one at once.
/// - While this node's own link is down it judges nobody; when the link is back every member
///   counts as just heard.
struct _Membership {
    struct Settings {
        var heartbeatInterval: Duration
        var probeAfter: Duration
        var downAfter: Duration
        var goneAfter: Duration
        var settle: Duration
    }

    struct Entry: Equatable {
        var status: MemberStatus
        var lastHeard: Duration
        var unreachableSince: Duration?
        /// Since when every probe found no responder (nil: the last probe found one).
        var noRespondersSince: Duration?
        var probing = false
        var lastProbe: Duration = .zero
        var system: String
        var registryVersion: UInt64
    }

    /// What a heartbeat led to.
    enum Heard: Equatable {
        /// Member changes (possibly none).
        case changed([MemberEvent])
        /// The heartbeat came from a downed incarnation: tell it so.
        case tellDowned
    }

    /// What a tick asks for.
    struct TickOutcome: Equatable {
        var events: [MemberEvent] = []
        var probes: [ClusterNode] = []
    }

    let me: ClusterNode
    let settings: Settings
    private(set) var entries: [ClusterNode: Entry] = [:]
    /// Incarnations downed (never let back), oldest first, bounded.
    private(set) var tombstones: [ClusterNode] = []
    private var tombstoneSet: Set<ClusterNode> = []
    /// Since when this node's own link to NATS is up; nil while it is down.
    private(set) var linkUpSince: Duration?

    init(me: ClusterNode, settings: Settings, now: Duration) {
        self.me = me
        self.settings = settings
        self.linkUpSince = now
    }

    /// The members other than this node, by name.
    var members: [Member] {
        entries.map { Member(node: $0.key, status: $0.value.status) }.sorted { $0.node.name < $1.node.name }
    }

    func status(of node: ClusterNode) -> MemberStatus? {
        if tombstoneSet.contains(node) { return .down }
        return entries[node]?.status
    }

    func isDowned(_ node: ClusterNode) -> Bool { tombstoneSet.contains(node) }

    // MARK: Events

    /// A heartbeat of `node`; `registryKnown` says whether this node has the registry version
    /// it announces (until then the node is `joining`).
    mutating func heard(_ node: ClusterNode, status: MemberStatus, system: String, registryVersion: UInt64, registryKnown: Bool = true, at now: Duration) -> Heard {
        guard node != me else { return .changed([]) }
        if tombstoneSet.contains(node) { return .tellDowned }
        var events: [MemberEvent] = []
        // A new incarnation of a name: the old one is gone for good.
        for (other, _) in entries where other.name == node.name && other != node {
            events += down(other)
        }
        // Only a node not yet up waits for its registry (a later change of it does not demote).
        let waitsForRegistry = !registryKnown && (entries[node] == nil || entries[node]?.status == .joining)
        let reported: MemberStatus = status == .leaving ? .leaving : (status == .joining || waitsForRegistry ? .joining : .up)
        if var entry = entries[node] {
            let previous = entry.status
            entry.lastHeard = now
            entry.unreachableSince = nil
            entry.noRespondersSince = nil
            entry.system = system
            entry.registryVersion = registryVersion
            if previous != reported, previous != .leaving || reported == .leaving {
                entry.status = reported
                events.append(MemberEvent(member: Member(node: node, status: reported), previous: previous))
            }
            entries[node] = entry
        } else {
            entries[node] = Entry(status: reported, lastHeard: now, system: system, registryVersion: registryVersion)
            events.append(MemberEvent(member: Member(node: node, status: reported), previous: nil))
        }
        return .changed(events)
    }

    /// A node never heard from (its address came in a message or from a listing of another
    /// node) is not served by anybody: it counts as downed, so that what waits for it ends.
    /// Returns false if the node is a member after all (it was heard meanwhile).
    mutating func unknownNodeIsGone(_ node: ClusterNode) -> Bool {
        guard entries[node] == nil, node != me else { return false }
        tombstone(node)
        return true
    }

    /// `node`'s registry arrived: a member still `joining` for want of it is `up`.
    mutating func registryArrived(_ node: ClusterNode) -> [MemberEvent] {
        guard var entry = entries[node], entry.status == .joining else { return [] }
        entry.status = .up
        entries[node] = entry
        return [MemberEvent(member: Member(node: node, status: .up), previous: .joining)]
    }

    /// The node announced an orderly leave: it is removed (its watches fire as for `down`).
    mutating func left(_ node: ClusterNode) -> [MemberEvent] {
        guard entries[node] != nil else { return [] }
        return down(node, final: .removed)
    }

    mutating func tick(at now: Duration) -> TickOutcome {
        var outcome = TickOutcome()
        // Down members leave the list one tick after they were downed.
        for (node, entry) in entries where entry.status == .down {
            entries[node] = nil
            outcome.events.append(MemberEvent(member: Member(node: node, status: .removed), previous: .down))
        }
        guard let linkUpSince else { return outcome }
        let settled = now - linkUpSince >= settings.settle
        for node in entries.keys.sorted(by: { $0.name < $1.name }) {
            guard var entry = entries[node] else { continue }
            let silent = now - entry.lastHeard
            if let since = entry.noRespondersSince, settled, now - since >= settings.goneAfter {
                outcome.events += down(node)
                continue
            }
            if let since = entry.unreachableSince, now - since >= settings.downAfter {
                outcome.events += down(node)
                continue
            }
            if silent >= settings.probeAfter, !entry.probing, now - entry.lastProbe >= settings.heartbeatInterval / 2 {
                entry.probing = true
                entry.lastProbe = now
                entries[node] = entry
                outcome.probes.append(node)
            }
        }
        return outcome
    }

    /// A probe was answered: the node is alive.
    mutating func probeAnswered(_ node: ClusterNode, at now: Duration) -> [MemberEvent] {
        guard var entry = entries[node], entry.status != .down else { return [] }
        entry.probing = false
        entry.noRespondersSince = nil
        entry.lastHeard = now
        entries[node] = entry
        guard entry.status == .unreachable else { return [] }
        return setStatus(node, .up)
    }

    /// Nobody listens on the node's subject.
    mutating func probeFoundNoResponders(_ node: ClusterNode, at now: Duration) -> [MemberEvent] {
        guard var entry = entries[node], entry.status != .down else { return [] }
        entry.probing = false
        if entry.noRespondersSince == nil { entry.noRespondersSince = now }
        if entry.unreachableSince == nil { entry.unreachableSince = now }
        entries[node] = entry
        return entry.status == .unreachable || entry.status == .leaving ? [] : setStatus(node, .unreachable)
    }

    /// The probe had no answer in time.
    mutating func probeTimedOut(_ node: ClusterNode, at now: Duration) -> [MemberEvent] {
        guard var entry = entries[node], entry.status != .down else { return [] }
        entry.probing = false
        entry.noRespondersSince = nil
        if entry.unreachableSince == nil { entry.unreachableSince = now }
        entries[node] = entry
        return entry.status == .unreachable || entry.status == .leaving ? [] : setStatus(node, .unreachable)
    }

    /// This node's own link to NATS went down: judge nobody until it is back.
    mutating func linkLost() {
        linkUpSince = nil
    }

    /// The link is back: everyone counts as just heard (their silence was ours).
    mutating func linkRestored(at now: Duration) {
        linkUpSince = now
        for node in Array(entries.keys) {
            guard var entry = entries[node], entry.status != .down else { continue }
            entry.lastHeard = now
            entry.probing = false
            entry.noRespondersSince = nil
            if entry.unreachableSince != nil { entry.unreachableSince = now }
            entries[node] = entry
        }
    }

    // MARK: Helpers

    private mutating func setStatus(_ node: ClusterNode, _ status: MemberStatus) -> [MemberEvent] {
        guard var entry = entries[node], entry.status != status else { return [] }
        let previous = entry.status
        entry.status = status
        if status == .up { entry.unreachableSince = nil }
        entries[node] = entry
        return [MemberEvent(member: Member(node: node, status: status), previous: previous)]
    }

    /// Remembers `node` as downed for good (the newest 4,096 incarnations).
    private mutating func tombstone(_ node: ClusterNode) {
        guard tombstoneSet.insert(node).inserted else { return }
        tombstones.append(node)
        if tombstones.count > 4096 { tombstoneSet.remove(tombstones.removeFirst()) }
    }

    /// Downs `node` for good: `final` is `.down` (removed at the next tick) or `.removed`.
    private mutating func down(_ node: ClusterNode, final: MemberStatus = .down) -> [MemberEvent] {
        guard let entry = entries[node] else { return [] }
        tombstone(node)
        if final == .removed {
            entries[node] = nil
        } else {
            var downed = entry
            downed.status = .down
            entries[node] = downed
        }
        return [MemberEvent(member: Member(node: node, status: final), previous: entry.status)]
    }
}
