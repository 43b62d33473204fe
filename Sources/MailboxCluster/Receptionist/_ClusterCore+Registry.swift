import Mailbox

extension _ClusterCore {
    /// Sends this node's whole registry to `subject` (every node, or one that asked).
    func sendRegistry(to subject: String) {
        let (version, entries) = state.withLockedValue { state in
            (state.localRegistryVersion, state.localRegistry.flatMap { key, actors in actors.map { _RegistryEntry(key: key, actor: $0) } })
        }
        publish(.registry(version: version, system: system.name, entries: entries), to: subject)
    }

    func receivedRegistryFrame(_ envelope: _Envelope) {
        switch envelope.frame {
        case .registryRequest:
            sendRegistry(to: subjects.node(envelope.from))
        case let .registry(version, system, entries):
            let node = envelope.from
            let (previous, events) = state.withLockedValue { state -> (_RemoteRegistry??, [MemberEvent]) in
                // Only a member's registry counts (a downed node's would come back otherwise).
                guard !state.membership.isDowned(node), !state.wasDowned else { return (.none, []) }
                let old = state.registries[node]
                guard version > (old?.version ?? 0) else { return (.none, []) }
                state.registries[node] = _RemoteRegistry(version: version, system: system, entries: Set(entries))
                return (.some(old), state.membership.registryArrived(node))
            }
            guard case let .some(old) = previous else { return }
            applyRegistry(of: node, from: old, to: _RemoteRegistry(version: version, system: system, entries: Set(entries)))
            // Up once its registrations are listed here.
            apply(events)
        default:
            break
        }
    }

    /// Lists what `new` has and `old` had not, unlists the reverse, for the keys whose type
    /// this node knows.
    func applyRegistry(of node: ClusterNode, from old: _RemoteRegistry?, to new: _RemoteRegistry?) {
        let oldEntries = old?.entries ?? [], newEntries = new?.entries ?? []
        let added = newEntries.subtracting(oldEntries), removed = oldEntries.subtracting(newEntries)
        guard !added.isEmpty || !removed.isEmpty else { return }
        let appliers = state.withLockedValue { $0.registryAppliers }
        var byKey: [String: (added: [ActorAddress], removed: [ActorAddress])] = [:]
        for entry in added {
            byKey[entry.key, default: ([], [])].added.append(address(of: entry.actor, on: node, system: new?.system ?? ""))
        }
        for entry in removed {
            byKey[entry.key, default: ([], [])].removed.append(address(of: entry.actor, on: node, system: old?.system ?? ""))
        }
        for (key, change) in byKey {
            appliers[key]?.apply(change.added, change.removed)
        }
    }

    func address(of actor: _WireActor, on node: ClusterNode, system: String) -> ActorAddress {
        ActorAddress(node: node, system: system, path: actor.path, incarnation: actor.incarnation)
    }

    /// Makes sure remote registrations of `key` reach the local receptionist with their type,
    /// listing those already known.
    func installApplier<Message: Codable & Sendable>(for key: ServiceKey<Message>) {
        let applier = _RegistryApplier { [weak self] added, removed in
            guard let self else { return }
            for address in added { self.system.receptionist.register(self.resolve(address, as: Message.self), with: key) }
            for address in removed { self.system.receptionist.deregister(self.resolve(address, as: Message.self), from: key) }
        }
        let known = state.withLockedValue { state -> [(ClusterNode, _RemoteRegistry)]? in
            guard state.registryAppliers[key.id] == nil else { return nil }
            state.registryAppliers[key.id] = applier
            return state.registries.map { ($0.key, $0.value) }
        }
        guard let known else { return }
        for (node, registry) in known {
            let entries = registry.entries.filter { $0.key == key.id }
            applier.apply(entries.map { address(of: $0.actor, on: node, system: registry.system) }, [])
        }
    }

    /// Adds or removes one of this node's registrations and tells every node (and NATS, by
    /// the key's queue subscription, when the node starts or stops serving the key).
    func changeLocalRegistry(key: String, actor: _WireActor, add: Bool) {
        let changed = state.withLockedValue { state -> Bool in
            let changed = add ? state.localRegistry[key, default: []].insert(actor).inserted : state.localRegistry[key]?.remove(actor) != nil
            if changed { state.localRegistryVersion += 1 }
            return changed
        }
        guard changed else { return }
        syncQueueSubscription(key)
        sendRegistry(to: subjects.registries)
    }
}
