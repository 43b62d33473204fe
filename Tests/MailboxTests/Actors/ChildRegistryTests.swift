import Testing
@testable import Mailbox

@Suite("ChildRegistry: children in start order, without allocation per child")
struct ChildRegistryTests {
    /// Targets that name `parent` as their parent, as a spawn makes them.
    func children(of parent: AnyTarget, _ names: [String]) -> [AnyTarget] {
        names.map { AnyTarget(address: parent.address.child($0, incarnation: 1), parent: parent) }
    }

    let parent = AnyTarget(address: ActorAddress(system: "s", path: "/user/p", incarnation: 1))

    @Test func insertAndRemove_keepStartOrder_fromAnyPosition() {
        var registry = ChildRegistry()
        let targets = children(of: parent, ["a", "$a1", "b", "$a2", "c"])
        for target in targets { registry.insert(target, named: target.address.name) }
        #expect(registry.inStartOrder.map(\.address.name) == ["a", "$a1", "b", "$a2", "c"])
        registry.remove(targets[2])   // middle
        registry.remove(targets[0])   // oldest
        registry.remove(targets[4])   // youngest
        #expect(registry.inStartOrder.map(\.address.name) == ["$a1", "$a2"])
        #expect(registry.inStartOrder.count == 2)
        registry.remove(targets[2])   // already removed: no effect
        #expect(registry.inStartOrder.count == 2)
        registry.removeAll()
        #expect(registry.isEmpty && registry.inStartOrder.isEmpty)
        #expect(targets.allSatisfy { !$0.isListedChild && $0.youngerSibling == nil && $0.olderSibling == nil })
    }

    @Test func namesChosenByTheCaller_areIndexed_generatedNamesAreFoundByScan() {
        var registry = ChildRegistry()
        let targets = children(of: parent, ["alice", "$a7"])
        for target in targets { registry.insert(target, named: target.address.name) }
        #expect(registry.isNameTaken("alice"))
        #expect(!registry.isNameTaken("$a7"))   // unique by construction, never checked
        #expect(registry["alice"] === targets[0])
        #expect(registry["$a7"] === targets[1])
        #expect(registry["bob"] == nil && registry["$a8"] == nil)
        registry.remove(targets[0])
        #expect(!registry.isNameTaken("alice") && registry["alice"] == nil)
    }

    @Test func contains_isFalseForAnotherParentsListedChild() {
        let otherParent = AnyTarget(address: ActorAddress(system: "s", path: "/user/q", incarnation: 2))
        var mine = ChildRegistry()
        var theirs = ChildRegistry()
        let myChild = children(of: parent, ["a"])[0]
        let theirChild = children(of: otherParent, ["a"])[0]
        mine.insert(myChild, named: "a")
        theirs.insert(theirChild, named: "a")
        #expect(mine.contains(myChild))
        #expect(!mine.contains(theirChild))   // listed, but by its own parent
        mine.remove(theirChild)               // not ours: no effect on either registry
        #expect(theirs.contains(theirChild) && mine.inStartOrder.count == 1)
        #expect(!ChildRegistry().contains(myChild))
        mine.removeAll()
        theirs.removeAll()
    }

    @Test func aLongChainIsReleasedWithoutRecursion() {
        weak var oldest: AnyTarget?
        do {
            var registry = ChildRegistry()
            for index in 0..<200_000 {
                let target = AnyTarget(address: parent.address.child("$a\(index)", incarnation: 1), parent: parent)
                if index == 0 { oldest = target }
                registry.insert(target, named: target.address.name)
            }
            registry.removeAll()
        }
        #expect(oldest == nil)
    }

    // MARK: Through the actor API

    @Test func anonymousChildren_areListedInStartOrder_andFoundByName() throws {
        let (system, scheduler) = makeTestSystem()
        let seen = Inbox<String>()
        let parent = try system.spawn(Behavior<Int>.setup { context in
            var spawned: [ActorRef<Int>] = []
            for _ in 0..<5 { spawned.append(try context.spawnAnonymous(Behavior<Int>.ignore)) }
            try context.spawn(Behavior<Int>.ignore, name: "named")
            try context.stop(spawned[1])
            seen.record(context.childRefs.map(\.path).joined(separator: " "))
            seen.record(context.child(named: spawned[3].address.name)?.path ?? "missing")
            return .receiveMessage { _ in
                seen.record(context.childRefs.map(\.path).joined(separator: " "))
                return .same
            }
        }, name: "parent")
        scheduler.advance()
        let all = seen.values[0].split(separator: " ")
        #expect(all.count == 6 && all.last == "/user/parent/named")   // stop is asynchronous
        #expect(seen.values[1] == all[3].description)
        parent.tell(0)   // after the stopped child's termination was handled
        scheduler.advance()
        #expect(seen.values[2].split(separator: " ") == all.enumerated().filter { $0.offset != 1 }.map(\.element))
    }

    @Test func watchingAnotherParentsChild_reportsTerminated_notChildFailed() throws {
        struct Boom: Error {}
        let (system, scheduler) = makeTestSystem()
        let events = Inbox<String>()
        // `other` owns `victim`; `watcher` (not its parent) watches it and must see `terminated`.
        let other = try system.spawn(Behavior<ActorRef<ActorRef<Int>>>.setup { context in
            let victim = try context.spawn(Behavior<Int>.receiveMessage { _ in throw Boom() }, name: "victim")
            return .receiveMessage { replyTo in
                replyTo.tell(victim)
                return .same
            }.receiveLifecycle { _, event in
                if case .childFailed = event { events.record("owner saw childFailed") }
                return .same
            }
        }, name: "owner")
        let watcher = try system.spawn(Behavior<ActorRef<Int>>.receive { context, victim in
            context.watch(victim)
            victim.tell(1)
            return .same
        }.receiveLifecycle { _, event in
            switch event {
            case .terminated: events.record("watcher saw terminated")
            case .childFailed: events.record("watcher saw childFailed")
            default: break
            }
            return .same
        }, name: "watcher")
        scheduler.advance()
        other.tell(watcher)
        scheduler.advance()
        #expect(events.values.contains("watcher saw terminated"))
        #expect(!events.values.contains("watcher saw childFailed"))
    }
}
