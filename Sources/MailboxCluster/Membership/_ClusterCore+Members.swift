import Mailbox

extension _ClusterCore {
    /// Performs member changes: publishes them, and for a node that is gone, fires every watch
    /// of its actors, closes its link and takes its registrations out of the listings.
    func apply(_ events: [MemberEvent]) {
        guard !events.isEmpty else { return }
        for event in events {
            let status = event.member.status
            if status == .down || (status == .removed && event.previous != .down) {
                nodeGone(event.member.node, reason: event.previous == .leaving || status == .removed ? "left" : "downed")
            }
        }
        publishMembers()
        for event in events { memberEventsInput.send(value: event) }
    }

    func nodeGone(_ node: ClusterNode, reason: String) {
        let (link, watches, registry, asks) = state.withLockedValue { state -> (_PeerLink?, [Set<RemoteWatcher>], _RemoteRegistry?, [_Export]) in
            let link = state.links.removeValue(forKey: node)
            // Questions in flight to the node: no answer will come.
            let askKeys = state.exports.compactMap { $0.value.destination == node ? $0.key : nil }
            let asks = askKeys.compactMap { state.exports.removeValue(forKey: $0) }
            state.inbound[node] = nil
            let keys = state.remoteWatches.keys.filter { $0.node == node }
            let watches = keys.compactMap { state.remoteWatches.removeValue(forKey: $0) }
            for actor in Array(state.exports.keys) where state.exports[actor]!.watchers.contains(node) {
                state.exports[actor]!.watchers.remove(node)
            }
            return (link, watches, state.registries.removeValue(forKey: node), asks)
        }
        link?.close()
        for ask in asks { ask.failAsk(.recipientTerminated) }
        let error = ClusterNodeDownError(node: node, reason: reason)
        for watchers in watches {
            for watcher in watchers { watcher.terminated(failure: error) }
        }
        if let registry { applyRegistry(of: node, from: registry, to: nil) }
    }

    /// Another node says this incarnation was downed: it is out of the cluster for good. Every
    /// remote watch fires (the others forgot this node's watches), every link closes; the
    /// node's own actors go on, unreachable from the cluster. Akka's rule: a downed
    /// incarnation never comes back; start a new `ClusterSystem` (a new incarnation) to rejoin.
    func thisNodeWasDowned(by node: ClusterNode) {
        let (first, links, watches) = state.withLockedValue { state -> (Bool, [_PeerLink], [Set<RemoteWatcher>]) in
            guard !state.wasDowned, !state.isShutDown else { return (false, [], []) }
            state.wasDowned = true
            defer {
                state.links = [:]
                state.remoteWatches = [:]
            }
            return (true, Array(state.links.values), Array(state.remoteWatches.values))
        }
        guard first else { return }
        system.log("cluster: \(me) was downed by the cluster (told by \(node)); it no longer sends or receives")
        for link in links { link.close() }
        let error = ClusterNodeDownError(node: me, reason: "this node was downed")
        for watchers in watches {
            for watcher in watchers { watcher.terminated(failure: error) }
        }
        memberEventsInput.send(value: MemberEvent(member: Member(node: me, status: .down), previous: .up))
        publishMembers()
    }

    /// Sets `members` from the state, read inside the property's own lock: when two threads
    /// publish at once, the later snapshot is the one that stays.
    private func publishMembers() {
        membersProperty.modify { shown in
            let (members, wasDowned) = state.withLockedValue { ($0.membership.members, $0.wasDowned) }
            shown = [Member(node: me, status: wasDowned ? .down : .up)] + members
        }
    }
}
