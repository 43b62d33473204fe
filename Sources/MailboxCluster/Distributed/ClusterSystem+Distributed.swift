import Distributed
import Foundation
import Mailbox
import MailboxNATS

/// `ClusterSystem` is the toolchain's `DistributedActorSystem`: a `distributed actor` whose
/// `ActorSystem` is `ClusterSystem` can be called from any node of the cluster.
///
/// ```swift
/// distributed actor Greeter {
///     typealias ActorSystem = ClusterSystem
///     distributed func greet(_ name: String) -> String { "Hello, \(name)!" }
/// }
/// let greeter = Greeter(actorSystem: clusterA)                  // lives on node A
/// let remote = try Greeter.resolve(id: greeter.id, using: clusterB)
/// let text = try await remote.greet("Ada")                       // a NATS request from B to A
/// ```
///
/// - IDs are `ActorAddress`es with the node (`Codable`: send them in messages, or in another
///   call, to let another node resolve the actor).
/// - A call is a NATS request to the actor's node, with `ClusterConfiguration.callTimeout`.
///   Arguments and results are JSON (`Codable`); refs and addresses inside them resolve on
///   arrival as in messages.
/// - Failure modes (thrown by the call): `DistributedCallError` `.nodeUnreachable` at once when
///   nobody serves the actor's node (NATS "no responders", or the node is down), `.timedOut`,
///   `.actorNotFound` (the actor was deinitialized: its ID resigned), `.remoteError` with the
///   description of what the remote function threw (errors do not cross the wire; their
///   description does), `.serialization`.
extension ClusterSystem: DistributedActorSystem {
    public typealias ActorID = ActorAddress
    public typealias SerializationRequirement = any Codable
    public typealias InvocationEncoder = ClusterInvocationEncoder
    public typealias InvocationDecoder = ClusterInvocationDecoder
    public typealias ResultHandler = ClusterResultHandler

    public func resolve<Act>(id: ActorAddress, as actorType: Act.Type) throws -> Act? where Act: DistributedActor, Act.ID == ActorAddress {
        guard id.node == node else { return nil }  // another node's actor: a remote proxy
        guard let actor = core.distributedActor(id) as? Act else {
            throw DistributedCallError(code: .actorNotFound, actor: id, text: "no \(Act.self) with this ID on this node")
        }
        return actor
    }

    public func assignID<Act>(_ actorType: Act.Type) -> ActorAddress where Act: DistributedActor, Act.ID == ActorAddress {
        core.assignDistributedID()
    }

    public func actorReady<Act>(_ actor: Act) where Act: DistributedActor, Act.ID == ActorAddress {
        core.distributedActorReady(actor, id: actor.id)
    }

    public func resignID(_ id: ActorAddress) {
        core.resignDistributedID(id)
    }

    /// A ref that stands for the distributed actor `id` — on this node or another — in death
    /// watch: `context.watch(ref)` delivers `.terminated(ref)` once, and `ref.onTermination`
    /// runs once, when the actor is deinitialized (its ID resigned) or its node is downed or
    /// leaves (at once if that already happened, or if this node never had such an actor). The
    /// ref takes no messages: call the actor's `distributed func`s instead.
    ///
    /// Thread-safety: any thread. Failure modes: as for any remote watch (docs/Cluster.md,
    /// "Remote death watch"): a watch or terminated frame lost by NATS is made good when the
    /// nodes reconcile their watches after the loss.
    public func watchRef(of id: ActorAddress) -> ActorRef<Never> {
        guard let node = id.node, node != self.node else {
            return core.distributedLifecycle(id.node == nil ? id.on(self.node) : id)
        }
        return core.resolve(id, as: Never.self)
    }

    /// `watchRef(of: actor.id)`.
    public func watchRef<Act: DistributedActor>(of actor: Act) -> ActorRef<Never> where Act.ID == ActorAddress {
        watchRef(of: actor.id)
    }

    public func makeInvocationEncoder() -> ClusterInvocationEncoder {
        ClusterInvocationEncoder(refCoding: _RefCoding(core: core, collecting: true))
    }

    public func remoteCall<Act, Err, Res>(
        on actor: Act, target: RemoteCallTarget, invocation: inout ClusterInvocationEncoder,
        throwing: Err.Type, returning: Res.Type
    ) async throws -> Res where Act: DistributedActor, Act.ID == ActorAddress, Err: Error, Res: Codable {
        let reply = try await core.call(actor.id, target: target, invocation: invocation)
        guard reply.status == .value else {
            throw DistributedCallError(code: .serialization, actor: actor.id, text: "\(target) returned nothing where \(Res.self) was expected")
        }
        do {
            let decoder = JSONDecoder()
            decoder.userInfo[.actorRefCoding] = _RefCoding(core: core)
            return try decoder.decode(Res.self, from: Data(reply.body))
        } catch {
            throw DistributedCallError(code: .serialization, actor: actor.id, text: "the result of \(target) did not decode as \(Res.self): \(error)")
        }
    }

    public func remoteCallVoid<Act, Err>(
        on actor: Act, target: RemoteCallTarget, invocation: inout ClusterInvocationEncoder, throwing: Err.Type
    ) async throws where Act: DistributedActor, Act.ID == ActorAddress, Err: Error {
        _ = try await core.call(actor.id, target: target, invocation: invocation)
    }
}

/// Why a call to a distributed actor failed.
public struct DistributedCallError: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Code: String, Sendable, Hashable {
        /// Nobody serves the actor's node: it is down, or its connection is gone.
        case nodeUnreachable
        /// No answer within `ClusterConfiguration.callTimeout`.
        case timedOut
        /// The node has no such actor (deinitialized, or the ID was never assigned there).
        case actorNotFound
        /// The distributed function threw; `text` is the error's description.
        case remoteError
        /// Arguments or result could not be encoded or decoded.
        case serialization
    }

    public let code: Code
    /// The actor called.
    public let actor: ActorAddress
    public let text: String

    public var description: String { "call to \(actor): \(code.rawValue): \(text)" }
}

/// Records a call's generic substitutions and arguments (JSON) for the wire.
public struct ClusterInvocationEncoder: DistributedTargetInvocationEncoder {
    public typealias SerializationRequirement = any Codable
    var generics: [String] = []
    var arguments: [ArraySlice<UInt8>] = []
    let refCoding: _RefCoding

    init(refCoding: _RefCoding) {
        self.refCoding = refCoding
    }

    public mutating func recordGenericSubstitution<T>(_ type: T.Type) throws {
        guard let name = _mangledTypeName(type) else {
            throw DistributedCallError(code: .serialization, actor: ActorAddress(parsing: "mailbox://?/#0")!, text: "no mangled name for \(type)")
        }
        generics.append(name)
    }

    public mutating func recordArgument<Value: Codable>(_ argument: RemoteCallArgument<Value>) throws {
        let encoder = JSONEncoder()
        encoder.userInfo[.actorRefCoding] = refCoding
        arguments.append(ArraySlice(try encoder.encode(argument.value)))
    }

    public mutating func recordErrorType<E: Error>(_ type: E.Type) throws {}

    public mutating func recordReturnType<R: Codable>(_ type: R.Type) throws {}

    public mutating func doneRecording() throws {}
}

/// Reads a call's generic substitutions and arguments on the actor's node.
public struct ClusterInvocationDecoder: DistributedTargetInvocationDecoder {
    public typealias SerializationRequirement = any Codable
    let generics: [String]
    let arguments: [ArraySlice<UInt8>]
    var nextArgument = 0
    let refCoding: _RefCoding

    public mutating func decodeGenericSubstitutions() throws -> [any Any.Type] {
        try generics.map { name in
            guard let type = _typeByName(name) else {
                throw DistributedCallError(code: .serialization, actor: ActorAddress(parsing: "mailbox://?/#0")!, text: "unknown type \(name) on this node")
            }
            return type
        }
    }

    public mutating func decodeNextArgument<Argument: Codable>() throws -> Argument {
        guard nextArgument < arguments.count else {
            throw DistributedCallError(code: .serialization, actor: ActorAddress(parsing: "mailbox://?/#0")!, text: "fewer arguments than the function takes")
        }
        defer { nextArgument += 1 }
        let decoder = JSONDecoder()
        decoder.userInfo[.actorRefCoding] = refCoding
        return try decoder.decode(Argument.self, from: Data(arguments[nextArgument]))
    }

    public mutating func decodeErrorType() throws -> (any Any.Type)? { nil }

    public mutating func decodeReturnType() throws -> (any Any.Type)? { nil }
}

/// Sends a call's outcome back on the request's reply subject.
public struct ClusterResultHandler: DistributedTargetInvocationResultHandler {
    public typealias SerializationRequirement = any Codable
    let respond: @Sendable (_CallReply) -> Void
    let refCoding: _RefCoding

    public func onReturn<Success: Codable>(value: Success) async throws {
        let encoder = JSONEncoder()
        encoder.userInfo[.actorRefCoding] = refCoding
        do {
            respond(_CallReply(status: .value, body: Array(try encoder.encode(value))))
        } catch {
            respond(_CallReply(status: .failed, body: Array("the result did not encode: \(error)".utf8)))
        }
    }

    public func onReturnVoid() async throws {
        respond(_CallReply(status: .void, body: []))
    }

    public func onThrow<Err: Error>(error: Err) async throws {
        respond(_CallReply(status: .failed, body: Array(String(describing: error).utf8)))
    }
}

/// A call's outcome on the wire: a status byte, then the body.
struct _CallReply: Sendable {
    enum Status: UInt8 {
        case value = 0
        case void = 1
        case failed = 2
        case notFound = 3
    }

    var status: Status
    var body: [UInt8]

    var encoded: [UInt8] { [status.rawValue] + body }

    init(status: Status, body: [UInt8]) {
        self.status = status
        self.body = body
    }

    init?(_ bytes: [UInt8]) {
        guard let first = bytes.first, let status = Status(rawValue: first) else { return nil }
        self.status = status
        self.body = Array(bytes.dropFirst())
    }
}
