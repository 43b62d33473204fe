import Distributed
import Mailbox
import MailboxNATS
import Synchronization

/// A distributed actor of this node, held weakly (the runtime resigns its ID when it goes).
struct _WeakDistributedActor {
    weak var actor: (any DistributedActor)?
}

extension _ClusterCore {
    func assignDistributedID() -> ActorAddress {
        ActorAddress(node: me, system: system.name, path: "/distributed", incarnation: distributedIDs.add(1, ordering: .relaxed).newValue)
    }

    func distributedActorReady(_ actor: any DistributedActor, id: ActorAddress) {
        distributedActors.withLockedValue { $0[id] = _WeakDistributedActor(actor: actor) }
    }

    func resignDistributedID(_ id: ActorAddress) {
        distributedActors.withLockedValue { _ = $0.removeValue(forKey: id) }
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
