import Mailbox

// Watch reconciliation: watch, unwatch and terminated frames are sequenced like messages and
// lost like them. When a node finds frames from another lost (a gap in the link's sequence
// numbers, or a probe that says more was sent than came), it sends that node, at its next tick,
// the list of that node's actors it watches and asks for the list the other way. Each side adds
// the watches it lacks and answers `terminated` for actors already gone, so a lost watch is
// made good and a lost `terminated` is sent again; a watcher still hears it exactly once (its
// watch is gone after the first).

extension _ClusterCore {
    /// The most actors one `watchSync` frame lists (a frame stays far below NATS's payload limit).
    static let watchSyncChunk = 4_096

    /// Sends `node` the actors of its that this node watches (in chunks), and, if `asking`, a
    /// request for its list of this node's actors.
    func sendWatchSync(to node: ClusterNode, asking: Bool) {
        let actors = state.withLockedValue { state in state.remoteWatches.keys.filter { $0.node == node }.map(\.actor) }
        let subject = subjects.node(node)
        for start in stride(from: 0, to: actors.count, by: Self.watchSyncChunk) {
            publish(.watchSync(actors: Array(actors[start..<min(start + Self.watchSyncChunk, actors.count)])), to: subject)
        }
        if asking { publish(.watchSyncRequest, to: subject) }
    }

    /// `from` watches `actors` of this node: watch those not yet watched, answer `terminated`
    /// for those gone (their failure is no longer known: none is given).
    func receivedWatchSync(_ actors: [_WireActor], from node: ClusterNode) {
        let gone = state.withLockedValue { state -> [_WireActor] in
            var gone: [_WireActor] = []
            for actor in actors {
                if state.exports[actor] != nil, !state.exports[actor]!.isAsk {
                    state.exports[actor]!.watchers.insert(node)
                } else {
                    gone.append(actor)
                }
            }
            return gone
        }
        for actor in gone { sendSequenced(.terminated(actor: actor, failure: nil), to: node) }
    }
}
