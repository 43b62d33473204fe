import Mailbox
import MailboxNATS
import Synchronization

extension _ClusterCore {
    /// The path of every ask's reply ref (`AskPromise`); its incarnation tells them apart.
    static let askPath = "/temp/$ask"

    // MARK: Links

    /// The link to `node`, made on first use; closed from the start if `node` was downed.
    func link(to node: ClusterNode) -> _PeerLink {
        let (link, isNewAndDowned) = state.withLockedValue { state -> (_PeerLink, Bool) in
            if let link = state.links[node] { return (link, false) }
            let link = _PeerLink(node: node, subject: subjects.node(node), window: configuration.outboundWindow, transport: transport)
            let downed = state.membership.isDowned(node) || state.isShutDown || state.wasDowned
            if !downed { state.links[node] = link }
            return (link, downed)
        }
        if isNewAndDowned { link.close() }
        return link
    }

    /// Sends a control frame in the link's order, past a full window (it must not be lost
    /// to back-pressure; the window bounds messages).
    func sendSequenced(_ frame: _Frame, to node: ClusterNode) {
        let bytes = _Envelope(from: me, sequence: 0, frame: frame).encoded()
        _ = link(to: node).send(bytes, sequenceOffset: sequenceOffset, force: true)
    }

    // MARK: Messages out

    /// Serializes `message` for `endpoint`'s actor. On failure the message has been published
    /// as a dead letter.
    func prepare<Message: Codable & Sendable>(_ message: Message, for endpoint: _RemoteEndpoint<Message>) -> _Preparation {
        if endpoint.link.isClosed {
            system.publishUndeliveredMessage(message, to: endpoint.address, reason: .recipientTerminated)
            return .refused(.recipientTerminated)
        }
        let coding = _RefCoding(core: self, collecting: true)
        let entry = endpoint.codec
        let payload: [UInt8]
        do {
            payload = try entry.encode(message, ClusterCodingContext(refCoding: coding))
        } catch {
            let why = "\(Message.self) could not be encoded: \(error)"
            system.publishUndeliveredMessage(UnencodableMessage(message: message, why: why), to: endpoint.address, reason: .notUnderstood)
            return .refused(.notUnderstood)
        }
        let bytes = endpoint.messageHeader.frame(payload)
        let asks = coding.exportedAsks?.asks.withLock { $0 } ?? []
        if !asks.isEmpty {
            state.withLockedValue { state in
                for ask in asks { state.exports[_WireActor(path: Self.askPath, incarnation: ask)]?.destination = endpoint.link.node }
            }
        }
        return .ready(_Prepared(bytes: bytes, sequenceOffset: sequenceOffset, replyTo: asks.first.map { subjects.noResponders(me, ask: $0) }))
    }

    /// Accounts for the link's outcome: counts, and publishes what was not sent.
    func finish<Message: Sendable>(_ message: Message, for endpoint: _RemoteEndpoint<some Sendable>, outcome: _PeerLink.Outcome) -> TellResult {
        switch outcome {
        case .sent:
            sentMessages.add(1, ordering: .relaxed)
            return .enqueued
        case .full:
            state.withLockedValue { $0.statistics.outboundDrops += 1 }
            system.publishUndeliveredMessage(message, to: endpoint.address, reason: .outboundQueueFull)
            return .dropped(.outboundQueueFull)
        case .closed:
            system.publishUndeliveredMessage(message, to: endpoint.address, reason: .recipientTerminated)
            return .dropped(.recipientTerminated)
        }
    }

    // MARK: Exporting local refs

    /// Makes this node's `ref` reachable from other nodes; returns its address as they see it.
    func export<Message: Codable & Sendable>(_ ref: ActorRef<Message>) -> ActorAddress {
        let wire = _WireActor(path: ref.address.path, incarnation: ref.address.incarnation)
        let isAsk = ref.isAskReply
        let system = self.system
        if state.withLockedValue({ $0.exports[wire] != nil || $0.isShutDown }) { return ref.address.on(me) }
        let entry = configuration.codecs.entry(for: Message.self)
        let isNew = state.withLockedValue { state -> Bool in
            guard state.exports[wire] == nil, !state.isShutDown else { return false }
            state.exports[wire] = _Export(
                ref: ref,
                deliver: { [weak self] manifest, payload, from in
                    guard let self else { return }
                    let context = ClusterCodingContext(refCoding: _RefCoding(core: self))
                    switch entry.decodeMessage(payload, wireManifest: manifest, context: context) {
                    case let .message(message):
                        ref.tell(message as! Message)
                    case let .refused(why):
                        self.state.withLockedValue { $0.statistics.notUnderstood += 1 }
                        system.publishUndeliveredMessage(
                            UndeliveredRemoteMessage(manifest: manifest, payload: Array(payload), from: from, why: why),
                            to: ref.address, reason: .notUnderstood)
                    }
                },
                isAsk: isAsk,
                isCompleted: { ref.isCompletedAsk },
                failAsk: { reason in ref.failAsk(reason) })
            if isAsk { state.askExports.insert(wire) }
            return true
        }
        if isNew, !isAsk {
            let termination = ref.onTermination { [weak self] failure in
                self?.exportedActorTerminated(wire, failure: failure)
            }
            let keep = state.withLockedValue { state -> Bool in
                guard state.exports[wire] != nil else { return false }
                state.exports[wire]!.termination = termination
                return true
            }
            if !keep { termination.dispose() }
        }
        return ref.address.on(me)
    }

    /// An exported actor terminated: tell the nodes that watch it, in each link's order (after
    /// every message it sent them), and forget it.
    private func exportedActorTerminated(_ actor: _WireActor, failure: (any Error)?) {
        let watchers = state.withLockedValue { state -> Set<ClusterNode> in
            state.exports.removeValue(forKey: actor)?.watchers ?? []
        }
        let description = failure.map { String(describing: $0) }
        for node in watchers {
            sendSequenced(.terminated(actor: actor, failure: description), to: node)
        }
    }

    // MARK: Resolving addresses

    /// The ref for `address`: this node's actor (or a dead ref if it is gone or of another
    /// type), or a ref to a remote actor, interned.
    func resolve<Message: Codable & Sendable>(_ address: ActorAddress, as type: Message.Type) -> ActorRef<Message> {
        guard let node = address.node else { return ActorRef(deadAt: address, system: system) }
        if node == me {
            let wire = _WireActor(path: address.path, incarnation: address.incarnation)
            let found = state.withLockedValue { $0.exports[wire]?.ref }
            if let ref = found as? ActorRef<Message> { return ref }
            return ActorRef(deadAt: ActorAddress(node: nil, system: address.system, path: address.path, incarnation: address.incarnation), system: system)
        }
        // Reply refs of asks are used once: not interned.
        if address.path.hasPrefix("/temp/") {
            return makeRemoteRef(address, as: type)
        }
        if let existing = state.withLockedValue({ ($0.interned[address] as? WeakActorRef<Message>)?.ref }) {
            return existing
        }
        let made = makeRemoteRef(address, as: type)
        return state.withLockedValue { state in
            // Another thread may have made one meanwhile: keep the first.
            if let existing = (state.interned[address] as? WeakActorRef<Message>)?.ref { return existing }
            state.interned[address] = made.weakly
            return made
        }
    }

    private func makeRemoteRef<Message: Codable & Sendable>(_ address: ActorAddress, as type: Message.Type) -> ActorRef<Message> {
        let endpoint = _RemoteEndpoint<Message>(address: address, link: link(to: address.node!), core: self)
        return ActorRef(remote: address, system: system, endpoint: endpoint)
    }

    // MARK: Watching remote actors

    func watch(_ actor: _WireActor, on link: _PeerLink, by watcher: RemoteWatcher) {
        let key = _RemoteActorKey(node: link.node, actor: actor)
        let outcome = state.withLockedValue { state -> (first: Bool, gone: Bool, unknown: Bool) in
            if link.isClosed || state.membership.isDowned(link.node) { return (false, true, false) }
            let first = state.remoteWatches[key] == nil
            state.remoteWatches[key, default: []].insert(watcher)
            return (first, false, state.membership.status(of: link.node) == nil)
        }
        if outcome.gone {
            watcher.terminated(failure: ClusterNodeDownError(node: link.node, reason: "down"))
            return
        }
        if outcome.first { sendSequenced(.watch(watched: actor, watcher: _WireActor(path: "/", incarnation: 0)), to: link.node) }
        // A node this one never heard from may be long gone: the failure detector would never
        // judge it. Ask NATS whether anybody serves it.
        if outcome.unknown { checkUnknownNode(link.node) }
    }

    /// Probes a node that is no member; if nobody serves it, it is gone: what waits for it ends.
    func checkUnknownNode(_ node: ClusterNode) {
        let bytes = _Envelope(from: me, sequence: 0, frame: _Frame.ping).encoded()
        // A callback, not a task: on a simulated transport the outcome comes on its clock.
        transport.request(bytes, to: subjects.node(node), timeout: configuration.probeTimeout) { [weak self] result in
            guard let self, case let .failure(error) = result, error.code == .noResponders else { return }
            _ = self.unknownNodeHasNoResponders(node)
        }
    }

    /// Pings `node`'s subject; when nobody serves it (NATS "no responders") it is gone: it is
    /// tombstoned, what waits for it ends, and the answer is true. A time-out or a lost link
    /// proves nothing (the node may yet be heard), nor does an answer that came while the node
    /// was heard from: false.
    func probeUnknownNode(_ node: ClusterNode) async -> Bool {
        let bytes = _Envelope(from: me, sequence: 0, frame: _Frame.ping).encoded()
        do throws(NATSError) {
            _ = try await transport.request(bytes, to: subjects.node(node), headers: nil, timeout: configuration.probeTimeout)
            return false
        } catch where error.code == .noResponders {
            return unknownNodeHasNoResponders(node)
        } catch {
            return false
        }
    }

    /// Nobody serves `node`: tombstone it and end what waits for it, unless it was heard from
    /// meanwhile (false).
    private func unknownNodeHasNoResponders(_ node: ClusterNode) -> Bool {
        guard state.withLockedValue({ $0.membership.unknownNodeIsGone(node) }) else { return false }
        nodeGone(node, reason: "nobody serves it")
        return true
    }

    func unwatch(_ actor: _WireActor, on link: _PeerLink, by watcher: RemoteWatcher) {
        let key = _RemoteActorKey(node: link.node, actor: actor)
        let last = state.withLockedValue { state -> Bool in
            guard state.remoteWatches[key]?.remove(watcher) != nil else { return false }
            if state.remoteWatches[key]!.isEmpty {
                state.remoteWatches[key] = nil
                return true
            }
            return false
        }
        if last, !link.isClosed { sendSequenced(.unwatch(watched: actor, watcher: _WireActor(path: "/", incarnation: 0)), to: link.node) }
    }

    /// A remote actor terminated: each watcher hears it once.
    func remoteActorTerminated(_ key: _RemoteActorKey, failure: String?) {
        let watchers = state.withLockedValue { $0.remoteWatches.removeValue(forKey: key) } ?? []
        let address = ActorAddress(node: key.node, system: "", path: key.actor.path, incarnation: key.actor.incarnation)
        let error: (any Error)? = failure.map { RemoteActorFailure(actor: address, failure: $0) }
        for watcher in watchers { watcher.terminated(failure: error) }
    }
}
