/// The far side of a ref to an actor in another process, supplied by the cluster layer
/// (`MailboxCluster`): it serializes what the ref is told and carries watches over the wire.
///
/// `package`: the seam between the runtime and the cluster. The runtime calls it from any
/// thread, from inside mailbox runs, without holding any lock of its own.
package protocol RemoteEndpoint<Message>: AnyObject, Sendable {
    associatedtype Message: Sendable
    /// Sends `message` to the remote actor: `.enqueued` when it was accepted for the wire,
    /// `.dropped(reason)` (published as a dead letter or a drop by the endpoint) otherwise.
    func tell(_ message: Message) -> TellResult
    /// As `tell`, suspending while the outbound queue to the node is full.
    func send(_ message: Message) async throws
    /// `watcher` wants `terminated` when the remote actor terminates or its node is downed.
    func watch(_ watcher: RemoteWatcher)
    /// `watcher` no longer wants it.
    func unwatch(_ watcher: RemoteWatcher)
}

/// A local watcher of a remote actor, as the cluster layer keeps it: `terminated(failure:)`
/// tells the watcher, exactly as a local actor's termination would.
package struct RemoteWatcher: Hashable, Sendable {
    let watcher: AnyTarget
    let watched: AnyTarget

    /// Tells the watcher that the remote actor terminated (with `failure`, if it failed or its
    /// node went down).
    package func terminated(failure: (any Error)?) {
        watcher.sendTerminatedAfterQueuedMessages(watched, failure: failure)
    }

    package static func == (lhs: RemoteWatcher, rhs: RemoteWatcher) -> Bool {
        lhs.watcher === rhs.watcher && lhs.watched === rhs.watched
    }

    package func hash(into hasher: inout Hasher) {
        hasher.combine(ObjectIdentifier(watcher))
    }
}

/// A ref target for an actor in another process: everything goes through its endpoint.
// Immutable after init.
final class RemoteTarget<Message: Sendable>: ActorRefTarget<Message>, @unchecked Sendable {
    let endpoint: any RemoteEndpoint<Message>

    init(address: ActorAddress, system: ActorSystem, endpoint: any RemoteEndpoint<Message>) {
        self.endpoint = endpoint
        super.init(address: address, system: system)
    }

    override func tell(_ message: Message) -> TellResult {
        endpoint.tell(message)
    }

    override func send(_ message: Message) async throws {
        try await endpoint.send(message)
    }

    override func sendSystem(_ message: SystemMessage) {
        switch message {
        case let .watch(watcher):
            endpoint.watch(RemoteWatcher(watcher: watcher, watched: self))
        case let .unwatch(watcher):
            endpoint.unwatch(RemoteWatcher(watcher: watcher, watched: self))
        default:
            // A remote actor is not this process's child: no other system message applies.
            break
        }
    }
}

extension ActorRef {
    /// A ref to the actor at `address` in another process, reached through `endpoint`.
    /// Two refs are equal only when they share the target: the cluster layer interns them.
    package init(remote address: ActorAddress, system: ActorSystem, endpoint: any RemoteEndpoint<Message>) {
        self.init(RemoteTarget(address: address, system: system, endpoint: endpoint))
    }

    /// Whether this is the reply ref of an `ask` (a temporary target, not an actor).
    package var isAskReply: Bool { target is AskPromise<Message> }

    /// Fails the ask whose reply ref this is with `AskError.notDelivered` (reason `reason`);
    /// returns false when this is no ask's reply ref or the ask had completed.
    @discardableResult
    package func failAsk(_ reason: DeadLetter.Reason) -> Bool {
        guard let promise = target as? AskPromise<Message> else { return false }
        return promise.failIfWaiting(promise.error(.notDelivered, reason: reason))
    }
}

extension ActorSystem {
    /// Publishes a message that was not delivered (a dead letter, or a drop if `reason` is
    /// one), counted as the runtime's own are. For the cluster layer.
    package func publishUndeliveredMessage(_ message: any Sendable, to recipient: ActorAddress, reason: DeadLetter.Reason) {
        publishUndelivered(message, to: recipient, reason: reason)
    }
}

extension CodingUserInfoKey {
    /// Where a cluster's codec puts its `ActorRefCoding`, so that refs inside messages encode
    /// as addresses and resolve on arrival.
    package static let actorRefCoding = CodingUserInfoKey(rawValue: "mailbox.actorRefCoding")!
}

/// How refs inside messages are written and read: supplied by the cluster layer in the coder's
/// `userInfo` under `.actorRefCoding`.
package protocol ActorRefCoding: Sendable {
    func encode<Message: Codable & Sendable>(_ ref: ActorRef<Message>, to encoder: any Encoder) throws
    func decodeRef<Message: Codable & Sendable>(_ type: Message.Type, from decoder: any Decoder) throws -> ActorRef<Message>
}

/// A ref inside a `Codable` message is written as its actor's address (with the node) and
/// resolved on arrival into a ref the receiver can tell, ask and watch: the receiver's own
/// actor if the address is on its node, otherwise a remote ref.
///
/// Only a cluster's codec (`MailboxCluster`) can encode or decode a ref: any other encoder
/// or decoder throws, as an address means nothing outside a cluster.
extension ActorRef: Codable where Message: Codable {
    public func encode(to encoder: any Encoder) throws {
        guard let coding = encoder.userInfo[.actorRefCoding] as? any ActorRefCoding else {
            throw EncodingError.invalidValue(self, EncodingError.Context(
                codingPath: encoder.codingPath,
                debugDescription: "an ActorRef can be encoded only by a cluster's codec (MailboxCluster)"))
        }
        try coding.encode(self, to: encoder)
    }

    public init(from decoder: any Decoder) throws {
        guard let coding = decoder.userInfo[.actorRefCoding] as? any ActorRefCoding else {
            throw DecodingError.dataCorrupted(DecodingError.Context(
                codingPath: decoder.codingPath,
                debugDescription: "an ActorRef can be decoded only by a cluster's codec (MailboxCluster)"))
        }
        self = try coding.decodeRef(Message.self, from: decoder)
    }
}

extension ActorRef {
    /// Whether this is an ask's reply ref whose ask has completed (answered, timed out,
    /// cancelled): the cluster layer then forgets it.
    package var isCompletedAsk: Bool {
        (target as? AskPromise<Message>)?.isCompleted ?? false
    }

    /// A ref to `address` with no actor behind it: what it is told is a dead letter, a watch
    /// of it is answered with `terminated` at once. For refs that resolve to an actor that is
    /// gone.
    package init(deadAt address: ActorAddress, system: ActorSystem) {
        self.init(ActorRefTarget<Message>(address: address, system: system))
    }

    /// A weak handle to this ref's target (the cluster layer interns remote refs with it).
    package var weakly: WeakActorRef<Message> { WeakActorRef(target: target) }
}

/// A ref held weakly: `ref` is nil once nothing else holds its target.
package struct WeakActorRef<Message: Sendable>: @unchecked Sendable {
    // `target` is written once, at init; reading a weak reference is thread-safe.
    private weak var target: ActorRefTarget<Message>?

    init(target: ActorRefTarget<Message>) {
        self.target = target
    }

    package var ref: ActorRef<Message>? { target.map(ActorRef.init) }
}

extension SendError {
    /// A send that failed for `reason` (for the cluster layer's remote sends).
    package init(recipient: ActorAddress, failure reason: DeadLetter.Reason) {
        self.init(recipient: recipient, reason: reason)
    }
}
