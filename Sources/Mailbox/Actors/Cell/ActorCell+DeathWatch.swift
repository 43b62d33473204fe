/// Death watch on the watcher's side: turning the termination of a watched actor, or the
/// escalated failure of a child, into the lifecycle event the behavior handles. Runs inside the
/// mailbox run.
///
/// A failed child is a kind of terminated actor (Akka Typed: `ChildFailed` extends
/// `Terminated`): its termination is offered as `.childFailed(child, error:)` first and, if the
/// behavior leaves that unhandled, as `.terminated(child)`. Only a behavior that handles
/// neither is in a death pact.
extension ActorCell {
    /// A watched actor terminated, with the failure that stopped it, if any.
    func watchedActorTerminated(_ ref: AnyTarget, failure: (any Error)?) {
        if case .restarting = lifecycle, contextStorage?.watching[ObjectIdentifier(ref)] != nil {
            // For the new state, once it is built.
            supervisionState().deferred.append(.terminated(ref, failure: failure))
            return
        }
        guard case .running = lifecycle, let state = contextStorage,
              let watch = state.watching.removeValue(forKey: ObjectIdentifier(ref)) else { return }
        if let customMessage = watch.message {
            handle(customMessage)
            return
        }
        let isListed = state.children.contains(ref)
        if isListed {
            // The child is gone; its `childTerminated` will find nothing left to remove.
            state.children.remove(ref)
        }
        // A child that already terminated (its `childTerminated` came first: the watch reached
        // it late) is still this actor's child: its failure is not lost.
        let childFailure = failure != nil && (isListed || context.isOrWasChild(ref)) ? failure : nil
        do {
            if try !deliverTermination(of: ref, childFailure: childFailure) {
                throw DeathPactError(terminated: AnyActorRef(ref))
            }
        } catch {
            fail(error, message: nil)
        }
    }

    /// Delivers, in arrival order, the queued terminations whose user messages ahead have
    /// all been taken out of the mailbox.
    @usableFromInline
    func deliverQueuedTerminations(_ storage: ContextState<Message>) {
        while let first = storage.queuedTerminations.first, mailboxHead.headIndex >= first.userIndex {
            storage.queuedTerminations.removeFirst()
            watchedActorTerminated(first.ref, failure: first.failure)
        }
    }

    /// A child escalated `failure` and terminated: `.childFailed` first; if unhandled and this
    /// actor watches the child, its watch (custom message or `.terminated`) takes it; otherwise
    /// this actor fails with `ChildFailedError`, which names the child.
    func childEscalated(_ child: AnyTarget, failure: any Error) throws {
        let watch = contextStorage?.watching.removeValue(forKey: ObjectIdentifier(child))
        let ref = AnyActorRef(child)
        if try deliver(.childFailed(ref, error: failure)) { return }
        if let watch {
            if let customMessage = watch.message {
                handle(customMessage)
                return
            }
            if try deliver(.terminated(ref)) { return }
        }
        throw ChildFailedError(child: ref, cause: failure)
    }

    /// Offers the termination of `ref` to the behavior: `.childFailed` first when `childFailure`
    /// is set, then `.terminated`. Returns whether either was handled.
    private func deliverTermination(of ref: AnyTarget, childFailure: (any Error)?) throws -> Bool {
        let anyRef = AnyActorRef(ref)
        if let childFailure, try deliver(.childFailed(anyRef, error: childFailure)) { return true }
        return try deliver(.terminated(anyRef))
    }
}
