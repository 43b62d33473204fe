import Synchronization

/// Stopping and termination. Runs inside the mailbox run.
extension ActorCell {
    // MARK: Stopping

    /// Starts stopping: cancel timers, stop children (newest first); terminate once they have
    /// all terminated. The parent hears of the termination as `exit` (with `.escalated`, of
    /// `failure` as `childFailed`).
    @inlinable
    func beginStopping(failure: (any Error)?, exit: ChildExit = .stopped) {
        assertInMailboxRun()
        switch lifecycle {
        case .new, .running:
            break
        case .restarting:
            abandonRestart()
        case .stopping, .terminated:
            return
        }
        if exit != .stopped { supervisionState().exit = exit }
        lifecycle = .stopping(failure: failure)
        context.cancelAllTimers()
        if !hasChildren {
            finishTermination()
        } else {
            stopChildren()
        }
    }

    /// `beginStopping` with children: they stop first.
    @usableFromInline
    func stopChildren() {
        if managingBehavior != nil, let youngest = contextStorage?.children.youngest {
            // A `Supervisor` stops its children one at a time, newest first, as OTP does.
            youngest.sendSystem(.stop)
        } else {
            // Newest first, as an OTP supervisor stops its children: deterministic on a
            // TestScheduler, and dependants stop before what they depend on.
            for child in childrenInStartOrder.reversed() {
                child.sendSystem(.stop)
            }
        }
    }

    /// Post-stop, then the news of the termination to watchers and the parent; frees what
    /// the actor held (children, watches, stash, timers, behavior).
    @inlinable
    func finishTermination() {
        guard case let .stopping(failure) = lifecycle else { return }
        let exit = supervision?.exit ?? .stopped
        if !runIsRetained {
            // From the first message this sends on (post-stop handlers, `terminated` to a
            // watching parent, `childTerminated`), the parent may drop the last reference while
            // this run still has work to do: keep the cell alive until the run returns (the
            // pool worker gives this retain back; see `scheduleRun`).
            _ = Unmanaged.passUnretained(self).retain()
            runIsRetained = true
        }
        do {
            try deliver(.postStop)
        } catch {
            logPostStopFailure(error)
        }
        if let failure {
            supervisionState().terminalFailure = failure
        }
        if let postStopAction {
            postStopAction()
            self.postStopAction = nil
        }
        lifecycle = .terminated
        flags.setTerminated()
        if supervision != nil || roomWaiters != nil || context.hasWatches {
            announceTermination(failure: failure, escalate: exit == .escalated)
        }
        context.releaseAfterTermination()
        install(.stopped)
        system.publishStopped(self)
        let parent = self.parent
        self.parent = nil
        parent?.sendSystem(.childTerminated(self, failure: failure, exit: exit))
    }

    @usableFromInline
    @inline(never)
    func logPostStopFailure(_ error: any Error) {
        system.log("actor \(address.path) threw in post-stop: \(error)")
    }

    /// `finishTermination`'s rarer part, out of line: suspended senders, watchers and watched
    /// actors, messages set aside during a restart.
    @usableFromInline
    func announceTermination(failure: (any Error)?, escalate: Bool) {
        if let roomWaiters {
            let system = self.system, address = self.address
            roomWaiters.recipientTerminated { message in
                system.publishUndelivered(message, to: address, reason: .recipientTerminated)
            }
        }
        let parent = self.parent
        if let watchers = contextStorage?.watchers {
            for watcher in watchers.values where !(escalate && watcher === parent) {
                watcher.sendSystem(.terminated(self, failure: failure))
            }
        }
        deadLetterRestartBuffer()
        if let watching = contextStorage?.watching {
            for watched in watching.values {
                watched.target.sendSystem(.unwatch(self))
            }
        }
    }
}
