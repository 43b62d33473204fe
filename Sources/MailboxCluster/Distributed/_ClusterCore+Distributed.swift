import Distributed
import Mailbox
import MailboxNATS
import Synchronization

/// A distributed actor of this node, held weakly (the runtime resigns its ID when it goes).
/// A local distributed actor (weakly: its ID is resigned when it deinitializes) and the
/// watchable ref that stands for it in death watch, with the function that ends that ref.
struct _WeakDistributedActor {
    weak var actor: (any DistributedActor)?
    let lifecycle: ActorRef<Never>
    let terminate: @Sendable ((any Error)?) -> Void
}

extension _ClusterCore {
    func assignDistributedID() -> ActorAddress {
        ActorAddress(node: me, system: system.name, path: "/distributed", incarnation: distributedIDs.add(1, ordering: .relaxed).newValue)
    }

    /// Registers a ready local distributed actor for calls, and gives it a watchable ref
    /// (exported, so other nodes' watches of its ID reach it).
    func distributedActorReady(_ actor: any DistributedActor, id: ActorAddress) {
        let local = ActorAddress(node: nil, system: system.name, path: id.path, incarnation: id.incarnation)
        let (lifecycle, terminate) = ActorRef<Never>.lifecycle(at: local, system: system)
        distributedActors.withLockedValue { $0[id] = _WeakDistributedActor(actor: actor, lifecycle: lifecycle, terminate: terminate) }
        _ = export(lifecycle)
    }

    /// The distributed actor `id` is gone (deinitialized, or its initializer failed): calls
    /// to it fail from now on, and its watchers, here and on other nodes, hear `terminated`.
    func resignDistributedID(_ id: ActorAddress) {
        let entry = distributedActors.withLockedValue { $0.removeValue(forKey: id) }
        entry?.terminate(nil)
    }

    /// The ref that stands for this node's distributed actor `id` in death watch, or a
    /// terminated ref if there is none (never was, or resigned).
    func distributedLifecycle(_ id: ActorAddress) -> ActorRef<Never> {
        distributedActors.withLockedValue { $0[id]?.lifecycle }
            ?? ActorRef(deadAt: ActorAddress(node: nil, system: id.system, path: id.path, incarnation: id.incarnation), system: system)
    }

    func distributedActor(_ id: ActorAddress) -> (any DistributedActor)? {
        distributedActors.withLockedValue { $0[id]?.actor }
    }

    /// Sends a call to `id`'s node and waits for its outcome.
    func call(_ id: ActorAddress, target: RemoteCallTarget, invocation: ClusterInvocationEncoder) async throws -> _CallReply {
        guard let node = id.node else {
            throw DistributedCallError(code: .actorNotFound, actor: id, text: "an ID without a node")
        }
        if state.withLockedValue({ $0.membership.isDowned(node) || $0.wasDowned }) {
            throw DistributedCallError(code: .nodeUnreachable, actor: id, text: "node \(node) is down")
        }
        let frame = _Frame.call(actor: _WireActor(path: id.path, incarnation: id.incarnation), target: target.identifier, generics: invocation.generics, arguments: invocation.arguments)
        let message: NATSMessage
        do {
            message = try await transport.request(_Envelope(from: me, sequence: 0, frame: frame).encoded(), to: subjects.node(node), headers: nil, timeout: configuration.callTimeout)
        } catch {
            switch error.code {
            case .noResponders: throw DistributedCallError(code: .nodeUnreachable, actor: id, text: "nobody serves node \(node)")
            case .timedOut: throw DistributedCallError(code: .timedOut, actor: id, text: "no answer to \(target) within \(configuration.callTimeout)")
            default: throw DistributedCallError(code: .nodeUnreachable, actor: id, text: "\(error)")
            }
        }
        guard let reply = _CallReply(message.payload) else {
            throw DistributedCallError(code: .serialization, actor: id, text: "a malformed reply to \(target)")
        }
        switch reply.status {
        case .value, .void:
            return reply
        case .failed:
            throw DistributedCallError(code: .remoteError, actor: id, text: String(decoding: reply.body, as: UTF8.self))
        case .notFound:
            throw DistributedCallError(code: .actorNotFound, actor: id, text: "no such actor on \(node)")
        }
    }

    /// A call frame arrived (a NATS request): run it on the actor, answer on `reply`.
    func received(call actor: _WireActor, target: String, generics: [String], arguments: [ArraySlice<UInt8>], reply: NATSMessage) {
        let id = ActorAddress(node: me, system: system.name, path: actor.path, incarnation: actor.incarnation)
        let transport = self.transport
        let respond: @Sendable (_CallReply) -> Void = { outcome in
            try? transport.respond(to: reply, with: outcome.encoded, headers: nil)
        }
        guard let local = distributedActor(id) else {
            respond(_CallReply(status: .notFound, body: []))
            return
        }
        guard let cluster = Self.clusterSystem(of: local) else {
            respond(_CallReply(status: .notFound, body: []))
            return
        }
        let refCoding = _RefCoding(core: self)
        Task {
            var decoder = ClusterInvocationDecoder(generics: generics, arguments: arguments, refCoding: refCoding)
            let handler = ClusterResultHandler(respond: respond, refCoding: refCoding)
            do {
                try await cluster.executeDistributedTarget(on: local, target: RemoteCallTarget(target), invocationDecoder: &decoder, handler: handler)
            } catch {
                respond(_CallReply(status: .failed, body: Array("\(error)".utf8)))
            }
        }
    }

    /// The `ClusterSystem` an actor of this node belongs to.
    private static func clusterSystem<Act: DistributedActor>(of actor: Act) -> ClusterSystem? {
        actor.actorSystem as? ClusterSystem
    }
}
