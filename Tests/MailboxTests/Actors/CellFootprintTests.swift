import Testing
@testable import Mailbox

/// An idle actor's memory is mostly its cell: what few actors use lives in objects created on
/// demand (`ContextState` for children, watches, stash, timers and adapters; `CellOptions` for a
/// bounded mailbox or a scheduler of its own). These tests hold that design: a leaf actor that
/// only handles messages has neither, and each feature that needs one creates it and works.
@Suite("Cell footprint: state on demand")
struct CellFootprintTests {
    enum Message: Sendable, Equatable {
        case ping(Int)
        case spawnChild
        case watchChild
        case stash(Int)
        case unstash
        case startTimer
        case makeAdapter
    }

    /// Synchronous: every tell runs the handler on the calling thread (no other thread reads
    /// the cell).
    func makeSystem() -> ActorSystem {
        ActorSystem(name: "footprint", configuration: .init(
            scheduler: ImmediateScheduler(), timerScheduler: TestScheduler(), logHandler: nil))
    }

    func cell<M>(_ ref: ActorRef<M>) -> ActorCell<M> {
        unsafeDowncast(ref.target, to: ActorCell<M>.self)
    }

    @Test func aLeafActorHandlingMessages_hasNoContextState() async throws {
        let system = makeSystem()
        let seen = LockedValueBox<[String]>([])
        let ref = try system.spawn(Behavior<Message>.setup { context in
            .receive { context, message in
                // The context's own views: name, address, ref, system. None needs state.
                seen.withLockedValue { $0.append("\(context.name) \(message) \(context.stashSize)") }
                _ = context.myself
                _ = context.childRefs
                return .same
            }
        }, name: "leaf")
        ref.tell(.ping(1))
        ref.tell(.ping(2))
        #expect(seen.withLockedValue { $0 } == ["leaf ping(1) 0", "leaf ping(2) 0"])
        #expect(cell(ref).contextStorage == nil)
        #expect(await system.shutdown().isClean)
    }

    @Test func eachFeatureThatNeedsState_createsIt_andWorks() async throws {
        let system = makeSystem()
        let stashed = LockedValueBox<[Int]>([])
        let terminated = LockedValueBox(0)
        func actor() throws -> ActorRef<Message> {
            try system.spawnAnonymous(Behavior<Message>.receive { context, message in
                switch message {
                case .spawnChild:
                    try context.spawn(Behavior<Int>.empty, name: "child")
                case .watchChild:
                    let child = try context.spawn(Behavior<Int>.receiveMessage { _ in .stopped }, name: "watched")
                    context.watch(child)
                    child.tell(0)
                case let .stash(value):
                    try context.stash(.stash(value))
                case .unstash:
                    return context.unstashAll(.receiveMessage { message in
                        if case let .stash(value) = message { stashed.withLockedValue { $0.append(value) } }
                        return .same
                    })
                case .startTimer:
                    context.timers.startSingleTimer(key: "t", message: .ping(0), delay: .seconds(1))
                case .makeAdapter:
                    _ = context.messageAdapter { (value: Int) in Message.ping(value) }
                case .ping:
                    break
                }
                return .same
            }.receiveLifecycle { _, event in
                if case .terminated = event { terminated.withLockedValue { $0 += 1 } }
                return .same
            })
        }
        for feature in [Message.spawnChild, .watchChild, .stash(7), .startTimer, .makeAdapter] {
            let ref = try actor()
            #expect(cell(ref).contextStorage == nil)
            ref.tell(feature)
            #expect(cell(ref).contextStorage != nil, "\(feature) did not create the context state")
            if case .stash = feature {
                ref.tell(.stash(8))
                ref.tell(.unstash)
                #expect(stashed.withLockedValue { $0 } == [7, 8])
            }
        }
        #expect(terminated.withLockedValue { $0 } == 1)
        #expect(await system.shutdown().isClean)
    }

    @Test func options_existOnlyForABoundedMailboxOrAScheduler() async throws {
        let system = ActorSystem(name: "options", configuration: .init(logHandler: nil))
        let plain = try system.spawnAnonymous(Behavior<Int>.empty)
        let bounded = try system.spawnAnonymous(Behavior<Int>.empty, props: Props(mailbox: .bounded(capacity: 4, overflow: .dropNewest)))
        let scheduled = try system.spawnAnonymous(Behavior<Int>.empty, props: Props(scheduler: ImmediateScheduler()))
        #expect(cell(plain).options == nil)
        #expect(cell(plain).bounded == nil)
        #expect(cell(bounded).bounded?.capacity == 4)
        #expect(cell(bounded).customScheduler == nil)
        #expect(cell(scheduled).bounded == nil)
        #expect(cell(scheduled).customScheduler is ImmediateScheduler)
        #expect(cell(plain).scheduler === system.pool)
        #expect(await system.shutdown().isClean)
    }
}
