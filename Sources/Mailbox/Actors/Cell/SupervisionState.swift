import Foundation

/// An actor's supervision state: its rules with their restart counts, and a restart in
/// progress. Allocated only for actors that need it (a `supervise` rule, a `Supervisor`'s child,
/// or a top-level actor under a guardian strategy that can restart), so that an unsupervised
/// actor pays one pointer.
///
/// Touched only inside the actor's mailbox run (and by its parent before the actor starts).
@usableFromInline
final class SupervisionState<Message: Sendable> {
    // Exclusivity is not checked at run time: like the cell's consumer state, this is touched
    // only inside the actor's mailbox run, one at a time.
    /// A rule in force, with what it has counted.
    struct ActiveRule {
        let rule: SupervisionRule<Message>
        /// Restarts inside the current window (`restart(limit:within:)`).
        var window = RestartWindow()
        /// Consecutive restarts since the last reset (back-off, and `withMaxRestarts`).
        var consecutive = 0
        /// When the last restart completed (for resetting the back-off).
        var lastRestart: Date?
    }

    /// Outermost first; the innermost matching rule decides.
    @exclusivity(unchecked)
    var rules: [ActiveRule] = []
    /// Rules registered when the actor started or restarted; rules met later (a handler
    /// returning a supervised behavior) replace each other after these.
    @exclusivity(unchecked)
    var baseRuleCount = 0
    /// The behavior the actor was spawned with, rebuilt by guardian or `Supervisor` restarts.
    @exclusivity(unchecked)
    var spawnBehavior: Behavior<Message>?
    /// The guardian strategy's counts, for a top-level actor.
    @exclusivity(unchecked)
    var guardianRule: ActiveRule?
    /// Whether a `Supervisor` decides this actor's failures.
    let isManaged: Bool
    /// A one-for-one `Supervisor`'s window: the child restarts itself while it admits.
    let delegatedWindow: SharedRestartWindow?

    /// The restart in progress, if any.
    @exclusivity(unchecked)
    var restart = RestartStateMachine()
    /// Messages taken out of the mailbox while restarting, and the stash of the failed
    /// incarnation: handled first, in order, once the restart completes.
    @exclusivity(unchecked)
    private var buffer: [Message] = []
    @exclusivity(unchecked)
    private var bufferHead = 0
    /// System messages (`terminated` of watched actors) that arrived while restarting.
    @exclusivity(unchecked)
    var deferred: [SystemMessage] = []
    /// Set while the kept messages are handed to the new state (see `replayAfterRestart`).
    @exclusivity(unchecked)
    var isReplaying = false
    /// How the actor is stopping, as its parent will hear of it: `escalated` (its parent
    /// hears of the failure as `childFailed`) or `shutdown` (a `Supervisor` past its intensity).
    @exclusivity(unchecked)
    @usableFromInline
    var exit = ChildExit.stopped
    /// The failure the actor terminated with, kept to answer a watch that arrives after the
    /// termination (so that a parent's late watch still reports `childFailed`).
    @exclusivity(unchecked)
    @usableFromInline
    var terminalFailure: (any Error)?
    /// The actor's behavior when it is a `Supervisor` (registered by it; cleared when the
    /// actor terminates or restarts): saves matching the behavior on every child event.
    @exclusivity(unchecked)
    var managing: SupervisorBehavior?

    init(isManaged: Bool, delegatedWindow: SharedRestartWindow? = nil) {
        self.isManaged = isManaged
        self.delegatedWindow = delegatedWindow
    }

    var bufferedCount: Int { buffer.count - bufferHead }

    /// Puts `messages` before everything buffered (a failed incarnation's stash).
    func prepend(_ messages: [Message]) {
        guard !messages.isEmpty else { return }
        buffer = messages + buffer[bufferHead...]
        bufferHead = 0
    }

    func append(_ message: Message) {
        buffer.append(message)
    }

    func popFirst() -> Message? {
        guard bufferHead < buffer.count else {
            if bufferHead > 0 {
                buffer.removeAll(keepingCapacity: true)
                bufferHead = 0
            }
            return nil
        }
        let message = buffer[bufferHead]
        bufferHead += 1
        return message
    }

    /// Everything buffered, oldest first; the buffer is left empty.
    func removeAllBuffered() -> ArraySlice<Message> {
        defer {
            buffer = []
            bufferHead = 0
        }
        return buffer[bufferHead...]
    }

    /// The rule counts of `source`, mutated in place.
    func withActiveRule<Result>(_ source: RestartSource, _ body: (inout ActiveRule) -> Result) -> Result? {
        switch source {
        case let .rule(index):
            guard rules.indices.contains(index) else { return nil }
            return body(&rules[index])
        case .guardian:
            guard guardianRule != nil else { return nil }
            return body(&guardianRule!)
        case .parent, .delegated:
            return nil
        }
    }
}
