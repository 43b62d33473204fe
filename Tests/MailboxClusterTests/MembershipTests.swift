@testable import MailboxCluster
import Mailbox
import Testing

/// The failure detector's rules, event by event, on a clock the test moves.
@Suite("Cluster: membership state machine")
struct MembershipTests {
    static let me = ClusterNode(name: "me", incarnation: 1)
    static let b = ClusterNode(name: "b", incarnation: 2)
    static let settings = _Membership.Settings(
        heartbeatInterval: .milliseconds(100), probeAfter: .milliseconds(300), downAfter: .seconds(2),
        goneAfter: .milliseconds(400), settle: .seconds(1))

    func ms(_ value: Int) -> Duration { .milliseconds(value) }

    func statuses(_ events: [MemberEvent]) -> [MemberStatus] { events.map(\.member.status) }

    func withB(at time: Int = 0, status: MemberStatus = .up) -> _Membership {
        var membership = _Membership(me: Self.me, settings: Self.settings, now: .zero)
        _ = membership.heard(Self.b, status: status, system: "s", registryVersion: 0, at: ms(time))
        return membership
    }

    @Test("a first heartbeat adds the node as it reports itself; our own is ignored")
    func firstHeartbeat() {
        var membership = _Membership(me: Self.me, settings: Self.settings, now: .zero)
        #expect(membership.heard(Self.me, status: .up, system: "s", registryVersion: 0, at: .zero) == .changed([]))
        #expect(membership.heard(Self.b, status: .joining, system: "s", registryVersion: 0, at: .zero)
            == .changed([MemberEvent(member: Member(node: Self.b, status: .joining), previous: nil)]))
        #expect(membership.heard(Self.b, status: .up, system: "s", registryVersion: 0, at: ms(100))
            == .changed([MemberEvent(member: Member(node: Self.b, status: .up), previous: .joining)]))
        #expect(membership.heard(Self.b, status: .up, system: "s", registryVersion: 0, at: ms(200)) == .changed([]))
    }

    @Test("a node is joining until its registry is here, then up; a later registry change does not demote it")
    func joiningUntilRegistry() {
        var membership = _Membership(me: Self.me, settings: Self.settings, now: .zero)
        #expect(membership.heard(Self.b, status: .up, system: "s", registryVersion: 3, registryKnown: false, at: .zero)
            == .changed([MemberEvent(member: Member(node: Self.b, status: .joining), previous: nil)]))
        #expect(membership.heard(Self.b, status: .up, system: "s", registryVersion: 3, registryKnown: false, at: ms(100)) == .changed([]))
        #expect(membership.status(of: Self.b) == .joining)
        #expect(membership.registryArrived(Self.b) == [MemberEvent(member: Member(node: Self.b, status: .up), previous: .joining)])
        #expect(membership.registryArrived(Self.b) == [])
        #expect(membership.heard(Self.b, status: .up, system: "s", registryVersion: 4, registryKnown: false, at: ms(200)) == .changed([]))
        #expect(membership.status(of: Self.b) == .up)
        // A registry that came before the first heartbeat: up at once.
        let c = ClusterNode(name: "c", incarnation: 3)
        #expect(membership.heard(c, status: .up, system: "s", registryVersion: 1, registryKnown: true, at: ms(200))
            == .changed([MemberEvent(member: Member(node: c, status: .up), previous: nil)]))
    }

    @Test("silence past probeAfter sends one probe; no second until it is answered")
    func probing() {
        var membership = withB()
        #expect(membership.tick(at: ms(200)).probes.isEmpty)
        #expect(membership.tick(at: ms(300)).probes == [Self.b])
        #expect(membership.tick(at: ms(400)).probes.isEmpty)
        #expect(membership.probeAnswered(Self.b, at: ms(450)).isEmpty)
        #expect(membership.tick(at: ms(500)).probes.isEmpty)
        #expect(membership.tick(at: ms(750)).probes == [Self.b])
    }

    @Test("a probe that times out makes the node unreachable; downAfter later it is down, then removed")
    func unreachableThenDown() {
        var membership = withB()
        _ = membership.tick(at: ms(300))
        #expect(statuses(membership.probeTimedOut(Self.b, at: ms(800))) == [.unreachable])
        #expect(statuses(membership.tick(at: ms(2_700)).events).isEmpty)
        #expect(statuses(membership.tick(at: ms(2_800)).events) == [.down])
        #expect(membership.isDowned(Self.b))
        #expect(statuses(membership.tick(at: ms(2_900)).events) == [.removed])
        #expect(membership.members.isEmpty)
    }

    @Test("heard again while unreachable: up again, no down")
    func recovers() {
        var membership = withB()
        _ = membership.tick(at: ms(300))
        _ = membership.probeTimedOut(Self.b, at: ms(800))
        #expect(membership.heard(Self.b, status: .up, system: "s", registryVersion: 0, at: ms(1_000))
            == .changed([MemberEvent(member: Member(node: Self.b, status: .up), previous: .unreachable)]))
        #expect(statuses(membership.tick(at: ms(2_900)).events).isEmpty || membership.status(of: Self.b) != .down)
        #expect(membership.status(of: Self.b) != .down)
    }

    @Test("no responders for goneAfter, with our own link settled: down without waiting downAfter")
    func goneFastPath() {
        var membership = withB(at: 1_000)
        _ = membership.tick(at: ms(1_300))
        #expect(statuses(membership.probeFoundNoResponders(Self.b, at: ms(1_310))) == [.unreachable])
        _ = membership.tick(at: ms(1_500))
        _ = membership.probeFoundNoResponders(Self.b, at: ms(1_510))
        #expect(statuses(membership.tick(at: ms(1_709)).events).isEmpty)
        #expect(statuses(membership.tick(at: ms(1_710)).events) == [.down])
    }

    @Test("no responders right after our own link came up counts only as unreachable")
    func unsettled() {
        var membership = withB()
        membership.linkLost()
        membership.linkRestored(at: ms(5_000))
        _ = membership.tick(at: ms(5_300))
        _ = membership.probeFoundNoResponders(Self.b, at: ms(5_310))
        // goneAfter has passed but our link is younger than `settle`.
        #expect(membership.tick(at: ms(5_800)).events.allSatisfy { $0.member.status != .down })
        #expect(membership.status(of: Self.b) == .unreachable)
    }

    @Test("while our own link is down nobody is judged; when it is back, everyone counts as heard")
    func linkDown() {
        var membership = withB()
        membership.linkLost()
        let outcome = membership.tick(at: ms(10_000))
        #expect(outcome.probes.isEmpty && outcome.events.isEmpty)
        membership.linkRestored(at: ms(10_000))
        #expect(membership.tick(at: ms(10_200)).probes.isEmpty)
        #expect(membership.tick(at: ms(10_300)).probes == [Self.b])
    }

    @Test("a downed incarnation is never let back; it is told so")
    func tombstone() {
        var membership = withB()
        _ = membership.tick(at: ms(300))
        _ = membership.probeTimedOut(Self.b, at: ms(300))
        _ = membership.tick(at: ms(2_300))
        #expect(membership.heard(Self.b, status: .up, system: "s", registryVersion: 0, at: ms(2_400)) == .tellDowned)
        #expect(membership.status(of: Self.b) == .down)
    }

    @Test("a new incarnation of a name downs the old one at once")
    func newIncarnation() {
        var membership = withB()
        let reborn = ClusterNode(name: "b", incarnation: 3)
        let heard = membership.heard(reborn, status: .up, system: "s", registryVersion: 0, at: ms(50))
        #expect(heard == .changed([
            MemberEvent(member: Member(node: Self.b, status: .down), previous: .up),
            MemberEvent(member: Member(node: reborn, status: .up), previous: nil),
        ]))
        #expect(membership.isDowned(Self.b))
    }

    @Test("an orderly leave removes the node at once and for good")
    func leave() {
        var membership = withB()
        #expect(membership.left(Self.b) == [MemberEvent(member: Member(node: Self.b, status: .removed), previous: .up)])
        #expect(membership.members.isEmpty)
        #expect(membership.heard(Self.b, status: .up, system: "s", registryVersion: 0, at: ms(10)) == .tellDowned)
        #expect(membership.left(Self.b).isEmpty)
    }

    @Test("probe outcomes for an unknown or downed node change nothing")
    func strayOutcomes() {
        var membership = _Membership(me: Self.me, settings: Self.settings, now: .zero)
        #expect(membership.probeAnswered(Self.b, at: .zero).isEmpty)
        #expect(membership.probeTimedOut(Self.b, at: .zero).isEmpty)
        #expect(membership.probeFoundNoResponders(Self.b, at: .zero).isEmpty)
        #expect(membership.members.isEmpty)
    }

    @Test("an unknown node found unserved counts as downed; a member or this node never does")
    func unknownNode() {
        var membership = withB()
        let ghost = ClusterNode(name: "ghost", incarnation: 9)
        let gone = membership.unknownNodeIsGone(ghost)
        #expect(gone)
        #expect(membership.isDowned(ghost))
        #expect(membership.heard(ghost, status: .up, system: "s", registryVersion: 0, at: ms(10)) == .tellDowned)
        let memberGone = membership.unknownNodeIsGone(Self.b), meGone = membership.unknownNodeIsGone(Self.me)
        #expect(!memberGone && !meGone)
        #expect(membership.status(of: Self.b) == .up)
    }
}
