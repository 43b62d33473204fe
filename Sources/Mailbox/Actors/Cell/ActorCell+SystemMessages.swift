import Synchronization

/// System messages: draining the lock-free stack and handling each. Runs inside the
/// mailbox run.
extension ActorCell {
    /// Handles every queued system message, oldest first; returns how many.
    ///
    /// Inlinable, like the rest of an actor's common lifecycle (start, `become`, stop,
    /// termination): specialised where the actor is spawned, it runs without the generic
    /// metadata look-ups that unspecialised code makes for every `Behavior<Message>` it touches
    /// (the largest single cost of a spawn before they were inlinable; see docs/Performance.md).
    @inlinable
    func runSystemMessages() -> Int {
        var handled = 0
        while let top = systemMessages.exchange(nil, ordering: .acquiring) {
            // The stack is newest first: reverse its links in place (no array), then handle
            // oldest first, releasing each node after its message.
            var oldest: UnsafeMutableRawPointer?
            var node: UnsafeMutableRawPointer? = top
            while let current = node {
                let box = Unmanaged<SystemMessageNode>.fromOpaque(current).takeUnretainedValue()
                node = box.next
                box.next = oldest
                oldest = current
            }
            node = oldest
            while let current = node {
                let box = Unmanaged<SystemMessageNode>.fromOpaque(current).takeRetainedValue()
                node = box.next
                handleSystemMessage(box.message)
                handled += 1
            }
        }
        return handled
    }

    @inlinable
    func handleSystemMessage(_ message: SystemMessage) {
        switch message {
        case .start:
            guard case .new = lifecycle else { return }
            lifecycle = .running
            prepareGuardianSupervision()
            installInitial(behavior)
        case .stop:
            switch lifecycle {
            case .new:
                lifecycle = .running
                beginStopping(failure: nil)
            case .running, .restarting:
                beginStopping(failure: nil)
            case .stopping, .terminated:
                break
            }
        default:
            handleOtherSystemMessage(message)
        }
    }

    /// The system messages off the common lifecycle, out of line.
    @usableFromInline
    func handleOtherSystemMessage(_ message: SystemMessage) {
        switch message {
        case .start, .stop:
            handleSystemMessage(message)
        case let .watch(watcher):
            if case .terminated = lifecycle {
                // A late watch learns the failure too (a parent then sees `childFailed`).
                watcher.sendSystem(.terminated(self, failure: supervision?.terminalFailure))
            } else if watcher !== self {
                contextState().watchers[ObjectIdentifier(watcher)] = watcher
            }
        case let .unwatch(watcher):
            _ = contextStorage?.watchers.removeValue(forKey: ObjectIdentifier(watcher))
        case let .terminated(ref, failure):
            watchedActorTerminated(ref, failure: failure)
        case let .terminatedAfter(ref, failure, userIndex):
            if mailboxHead.headIndex >= userIndex {
                watchedActorTerminated(ref, failure: failure)
            } else {
                // After the messages ahead of it: the run delivers it once it has taken them.
                contextState().queuedTerminations.append(ContextState<Message>.QueuedTermination(userIndex: userIndex, ref: ref, failure: failure))
            }
        case let .childTerminated(child, failure, exit):
            contextStorage?.children.remove(child)
            switch lifecycle {
            case .running:
                childTerminatedWhileRunning(child, failure: failure, exit: exit)
            case .stopping:
                if !hasChildren {
                    finishTermination()
                } else if managingBehavior != nil, let youngest = contextStorage?.children.youngest {
                    // A `Supervisor` stops its children one at a time, newest first.
                    youngest.sendSystem(.stop)
                }
            case .restarting:
                childTerminatedWhileRestarting()
            case .new, .terminated:
                break
            }
        case let .adapterFailed(error, message):
            // Failed as if the handler had thrown for it; a stopping actor logs it.
            fail(error, message: message)
        case let .backoffElapsed(generation):
            backoffElapsed(generation: generation)
        case let .childFailed(child, error):
            managedChildFailed(child, error: error)
        case .restartStop:
            restartStopFromParent()
        case .restartStart:
            restartStartFromParent()
        case .restartNow:
            restartStopFromParent(thenStart: true)
        case let .restartStepDone(child, setupFailure):
            managedChildStepDone(child, setupFailure: setupFailure)
        case let .intensityExceeded(error):
            shutDownAfterExceedingIntensity(error)
        }
    }
}
