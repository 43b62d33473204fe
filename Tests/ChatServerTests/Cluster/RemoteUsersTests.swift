import Mailbox
import Testing
@testable import ChatServerCore

@Suite("Chat server: the relay's table of remote users")
struct RemoteUsersTests {
    private let b = ClusterNode(name: "b", incarnation: 7)

    private func record(_ id: UInt64, _ nick: String, away: String? = nil) -> ChatUserRecord {
        var record = ChatUserRecord(id: id, nick: nick, user: "~u", host: "h", realName: "R")
        record.away = away
        return record
    }

    @Test func firstRecord_adds_withAnIdAboveEveryConnectionID_thenChangesAreRenamesOrUpdates() {
        var users = RemoteUsers(firstLocalID: 1 << 62)
        guard case let .added(user) = users.seen(record(1, "bob"), on: b) else { Issue.record("not added"); return }
        #expect(user.localID == 1 << 62)
        #expect(users.seen(record(1, "bob"), on: b) == .unchanged(user))
        guard case let .renamed(renamed, oldPrefix) = users.seen(record(1, "robert"), on: b) else { Issue.record("not renamed"); return }
        #expect(oldPrefix == "bob!~u@h")
        #expect(renamed.localID == user.localID && renamed.record.nick == "robert")
        guard case let .updated(updated) = users.seen(record(1, "robert", away: "out"), on: b) else { Issue.record("not updated"); return }
        #expect(updated.record.away == "out")
        guard case let .added(other) = users.seen(record(2, "betty"), on: b) else { Issue.record("not added"); return }
        #expect(other.localID == user.localID + 1)
        #expect(users.localID(of: ChatUserRef(node: b, id: 2), me: ClusterNode(name: "a", incarnation: 1)) == other.localID)
        #expect(users.localID(of: ChatUserRef(node: ClusterNode(name: "a", incarnation: 1), id: 5), me: ClusterNode(name: "a", incarnation: 1)) == 5)
    }

    @Test func lateNewsOfAUserThatLeft_orOfANodeThatIsDown_isIgnored() {
        var users = RemoteUsers()
        _ = users.seen(record(1, "bob"), on: b)
        let left = users.left(ChatUserRef(node: b, id: 1))
        #expect(left?.record.nick == "bob")
        #expect(users.left(ChatUserRef(node: b, id: 1)) == nil)
        #expect(users.seen(record(1, "bob"), on: b) == .ignored)
        // A quit that overtook the user's first record: the record is late news too.
        #expect(users.left(ChatUserRef(node: b, id: 9)) == nil)
        #expect(users.seen(record(9, "nine"), on: b) == .ignored)

        _ = users.seen(record(2, "betty"), on: b)
        _ = users.seen(record(3, "barry"), on: b)
        let c = ClusterNode(name: "c", incarnation: 1)
        _ = users.seen(record(2, "carol"), on: c)
        let gone = users.nodeDown(b)
        #expect(Set(gone.map(\.record.nick)) == ["betty", "barry"])
        #expect(users.nodeDown(b).isEmpty)
        #expect(users.seen(record(4, "late"), on: b) == .ignored)
        #expect(users.users.count == 1)
        // The same name, a new incarnation: a new node.
        guard case .added = users.seen(record(2, "betty"), on: ClusterNode(name: "b", incarnation: 8)) else {
            Issue.record("a new incarnation's user was not added"); return
        }
    }

    @Test func departedUsersAreForgottenPastTheLimit_oldestFirst() {
        var users = RemoteUsers(departedLimit: 4)
        for id in UInt64(1)...5 { _ = users.left(ChatUserRef(node: b, id: id)) }
        // Past 4, the oldest half went: 1 and 2 are new again, 5 is still remembered.
        guard case .added = users.seen(record(1, "one"), on: b) else { Issue.record("1 still remembered"); return }
        #expect(users.seen(record(5, "five"), on: b) == .ignored)
    }
}
