import Mailbox
import MailboxNATS

extension _ClusterCore {
    /// A frame on this node's own subject, on the connection's reading thread, in the order
    /// each sender published.
    func receivedDirected(_ message: NATSMessage) {
        let envelope: _Envelope
        do {
            envelope = try _Envelope.decode(message.payload)
        } catch {
            state.withLockedValue { $0.statistics.malformedFrames += 1 }
            system.publishUndeliveredMessage(
                "malformed cluster frame: \(error)", to: ActorAddress(node: me, system: system.name, path: "/", incarnation: 0), reason: .notUnderstood)
            return
        }
        let from = envelope.from
        switch envelope.frame {
        case .ping:
            if message.replyTo != nil { try? transport.respond(to: message, with: [], headers: nil) }
            return
        case let .call(actor, target, generics, arguments):
            guard message.replyTo != nil else { return }
            received(call: actor, target: target, generics: generics, arguments: arguments, reply: message)
            return
        case .downed:
            // Heard even from a node this one downed: after a partition both sides downed each
            // other, and each must learn it (and join again as a new incarnation).
            thisNodeWasDowned(by: from)
            return
        default:
            break
        }
        // Sequence accounting for frames in the link's order.
        let admission = state.withLockedValue { state -> _Admission in
            if state.membership.isDowned(from) {
                return state.toldDowned.insert(from).inserted ? .tellDowned : .ignore
            }
            guard envelope.frame.isSequenced else { return .accept(ack: nil, export: nil) }
            var link = state.inbound[from, default: _InboundLink()]
            let sequence = envelope.sequence
            guard sequence > link.received else {
                state.statistics.duplicateFrames += 1
                return .ignore
            }
            if sequence > link.received + 1 {
                state.statistics.lostFrames += sequence - link.received - 1
                state.resyncs.insert(from)
            }
            link.received = sequence
            var ack: UInt64?
            if link.received - link.acknowledged >= UInt64(configuration.ackEvery) {
                link.acknowledged = link.received
                ack = link.received
            }
            state.inbound[from] = link
            state.statistics.receivedMessages += 1
            // A message's recipient, found in the same lock (an ask takes one reply).
            guard case let .message(recipient, _, _) = envelope.frame, let export = state.exports[recipient] else {
                return .accept(ack: ack, export: nil)
            }
            if export.isAsk { state.exports[recipient] = nil }
            return .accept(ack: ack, export: export)
        }
        switch admission {
        case .ignore:
            return
        case .tellDowned:
            publish(.downed, to: subjects.node(from))
            return
        case let .accept(ack, export):
            if let ack { publish(.ack(sequence: ack), to: subjects.node(from)) }
            if let export, case let .message(_, manifest, payload) = envelope.frame {
                export.deliver(manifest, payload, from)
                return
            }
        }
        switch envelope.frame {
        case let .message(recipient, manifest, payload):
            // No export: the recipient is gone (or was never exported here). A question (it has
            // a reply subject) is answered "recipient gone": its ask fails at once, as a local
            // ask to a terminated actor does.
            undeliverable(payload, manifest: manifest, to: recipient, from: from)
            if let replyTo = message.replyTo { try? transport.publish(Self.recipientGone, to: replyTo, replyTo: nil, headers: nil) }
        case let .watch(watched, _):
            remoteWatchArrived(of: watched, from: from)
        case let .unwatch(watched, _):
            state.withLockedValue { _ = $0.exports[watched]?.watchers.remove(from) }
        case let .terminated(actor, failure):
            remoteActorTerminated(_RemoteActorKey(node: from, actor: actor), failure: failure)
        case let .ack(sequence):
            let link = state.withLockedValue { $0.links[from] }
            link?.acknowledged(sequence)
        case let .probe(sequence):
            let ack = state.withLockedValue { state -> UInt64 in
                var link = state.inbound[from, default: _InboundLink()]
                if sequence > link.received {
                    state.statistics.lostFrames += sequence - link.received
                    link.received = sequence
                    state.resyncs.insert(from)
                }
                link.acknowledged = link.received
                state.inbound[from] = link
                return link.received
            }
            publish(.ack(sequence: ack), to: subjects.node(from))
        case .downed:
            thisNodeWasDowned(by: from)
        case .registry, .registryRequest:
            receivedRegistryFrame(envelope)
        case let .watchSync(actors):
            receivedWatchSync(actors, from: from)
        case .watchSyncRequest:
            sendWatchSync(to: from, asking: false)
        case .heartbeat, .leaving, .ping, .call, .queued:
            receivedBroadcastFrame(envelope)
        }
    }

    /// A frame on a subject every node follows (heartbeats, leaves, registries).
    func receivedBroadcast(_ message: NATSMessage) {
        guard let envelope = try? _Envelope.decode(message.payload) else {
            state.withLockedValue { $0.statistics.malformedFrames += 1 }
            return
        }
        guard envelope.from != me else { return }
        switch envelope.frame {
        case .registry, .registryRequest: receivedRegistryFrame(envelope)
        default: receivedBroadcastFrame(envelope)
        }
    }

    private func receivedBroadcastFrame(_ envelope: _Envelope) {
        let from = envelope.from
        let now = self.now
        switch envelope.frame {
        case let .heartbeat(status, system, registryVersion):
            let (heard, wantsRegistry, isNew) = state.withLockedValue { state -> (_Membership.Heard, Bool, Bool) in
                let isNew = state.membership.status(of: from) == nil
                let known = state.registries[from]?.version ?? 0
                let heard = state.membership.heard(from, status: status, system: system, registryVersion: registryVersion, registryKnown: registryVersion <= known, at: now)
                if case .tellDowned = heard {
                    return (state.toldDowned.insert(from).inserted ? heard : .changed([]), false, false)
                }
                return (heard, registryVersion > known, isNew)
            }
            switch heard {
            case .tellDowned:
                publish(.downed, to: subjects.node(from))
            case let .changed(events):
                apply(events)
            }
            if wantsRegistry { publish(.registryRequest, to: subjects.node(from)) }
            // A new member learns this node's registry without waiting for a change.
            if isNew { sendRegistry(to: subjects.node(from)) }
        case .leaving:
            let events = state.withLockedValue { $0.membership.left(from) }
            apply(events)
        default:
            break
        }
    }

    /// What a node answers on a question's reply subject when its recipient is gone.
    static let recipientGone = Array("mailbox: recipient terminated".utf8)

    /// NATS answered an ask's question with "no responders" (nobody listens on the recipient
    /// node's subject), or the node answered that the recipient is gone. The ask fails at once.
    func receivedNoResponders(_ message: NATSMessage) {
        guard message.status == 503 || message.payload == Self.recipientGone, let token = message.subject.split(separator: ".").last, let incarnation = UInt64(token) else { return }
        let export = state.withLockedValue { state -> _Export? in
            let key = _WireActor(path: _ClusterCore.askPath, incarnation: incarnation)
            guard state.exports[key]?.isAsk == true else { return nil }
            return state.exports.removeValue(forKey: key)
        }
        export?.failAsk(.recipientTerminated)
    }

    // MARK: Delivering

    private func undeliverable(_ payload: ArraySlice<UInt8>, manifest: String, to recipient: _WireActor, from: ClusterNode) {
        system.publishUndeliveredMessage(
            UndeliveredRemoteMessage(manifest: manifest, payload: Array(payload), from: from, why: nil),
            to: ActorAddress(node: me, system: system.name, path: recipient.path, incarnation: recipient.incarnation),
            reason: recipient.path.hasPrefix("/temp/") ? .lateReply : .recipientTerminated)
    }

    /// `from` watches this node's `watched`: remember it, or answer at once if it is gone.
    private func remoteWatchArrived(of watched: _WireActor, from: ClusterNode) {
        let known = state.withLockedValue { state -> Bool in
            guard state.exports[watched] != nil, !state.exports[watched]!.isAsk else { return false }
            state.exports[watched]!.watchers.insert(from)
            return true
        }
        if !known {
            sendSequenced(.terminated(actor: watched, failure: nil), to: from)
        }
    }
}

/// Whether a directed frame is taken in.
enum _Admission {
    case accept(ack: UInt64?, export: _Export?)
    case ignore
    case tellDowned
}
