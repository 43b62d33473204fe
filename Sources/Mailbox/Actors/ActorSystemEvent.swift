/// A message that was not delivered, and why.
public struct DeadLetter: Sendable, CustomStringConvertible {
    /// Why a message became a dead letter.
    public enum Reason: Sendable, Equatable, CustomStringConvertible {
        /// The recipient had terminated (or terminated with the message still queued).
        case recipientTerminated
        /// The recipient's bounded mailbox was full; the policy says which message was dropped.
        case mailboxFull(OverflowPolicy)
        /// A reply arrived after its ask had completed (timed out or cancelled).
        case lateReply
        /// The message was sent to `ActorSystem.deadLetters` or a ref with no actor behind it.
        case noRecipient
        /// The recipient was waiting out a restart back-off and its stash was full.
        case backoffStashFull

        public var description: String {
            switch self {
            case .recipientTerminated: return "recipient terminated"
            case let .mailboxFull(policy): return "mailbox full (\(policy))"
            case .lateReply: return "late reply"
            case .noRecipient: return "no recipient"
            case .backoffStashFull: return "back-off stash full"
            }
        }
    }

    /// Who the message was for.
    public let recipient: ActorAddress
    /// The message itself.
    public let message: any Sendable
    /// Why it was not delivered.
    public let reason: Reason

    public var description: String {
        "dead letter to \(recipient.path) (\(reason)): \(message)"
    }
}

/// What happens in an actor system, published on its event stream for monitoring.
public enum ActorSystemEvent: Sendable, CustomStringConvertible {
    /// An actor was spawned.
    case spawned(ActorAddress)
    /// An actor terminated (stopped, failed, or stopped by its parent or the system).
    case stopped(ActorAddress)
    /// An actor's handler (or `setup`) threw. Followed by `supervised`, saying what was done.
    case failed(ActorAddress, error: any Error)
    /// Supervision decided what to do with a failed actor (see `SupervisionDecision`).
    case supervised(SupervisionDecision)
    /// A message was not delivered: the recipient had terminated, its mailbox was full (a
    /// *drop*), or a reply came too late.
    case deadLetter(DeadLetter)
    /// A behavior returned `.unhandled` for a message.
    case unhandled(ActorAddress, message: any Sendable)

    public var description: String {
        switch self {
        case let .spawned(address): return "spawned \(address.path)"
        case let .stopped(address): return "stopped \(address.path)"
        case let .failed(address, error): return "failed \(address.path): \(error)"
        case let .supervised(decision): return decision.description
        case let .deadLetter(letter): return letter.description
        case let .unhandled(address, message): return "unhandled by \(address.path): \(message)"
        }
    }
}

/// What supervision did with one failure of an actor.
public struct SupervisionDecision: Sendable, CustomStringConvertible {
    /// Who decided.
    public enum Decider: Sendable, Equatable {
        /// A `Behavior.supervise(_:).onFailure(_:)` rule of the actor itself.
        case actor
        /// The system's `guardianStrategy` (top-level actors without a deciding rule).
        case guardian
        /// The `Supervisor` the actor is a child of.
        case supervisor
        /// Nobody: the default for an actor without supervision, stop.
        case none
    }

    /// The actor that failed.
    public let actor: ActorAddress
    /// What it threw.
    public let error: any Error
    /// The message whose handling failed, if the failure came from a message (it is dropped:
    /// neither retried nor dead-lettered). `nil` for failures in `setup` or lifecycle handlers.
    public let message: (any Sendable)?
    /// What was done: `restart` (possibly after a back-off), `resume`, `stop` or `escalate`.
    /// A restart refused by its limit is reported as the limit's `stop` or `escalate`; a
    /// `Supervisor`'s child reports `escalate` (the supervisor decides next), except that a
    /// one-for-one supervisor's child whose restart its supervisor's window admits restarts
    /// at once and reports `restart` by `.supervisor`.
    public let directive: SupervisorDirective
    /// Who decided.
    public let decider: Decider
    /// The back-off before the restart, for `restartWithBackoff`.
    public let backoff: Duration?

    public var description: String {
        var text = "\(actor.path) failed (\(error)): \(directive) by \(decider)"
        if let backoff { text += " after \(backoff)" }
        return text
    }
}

/// An error from the actor system's API: a bad name, a duplicate, a system shutting down.
///
/// A struct with a private code, so new cases can be added without breaking users; compare
/// with the static members (`error.code == .duplicateName`).
public struct ActorSystemError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong, without details.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Value: Hashable, Sendable { case invalidName, duplicateName, shuttingDown, notAChild, parentNotRunning }
        private let value: Value
        private init(_ value: Value) { self.value = value }

        /// The name is not a valid actor name.
        public static let invalidName = Code(.invalidName)
        /// A sibling with that name exists.
        public static let duplicateName = Code(.duplicateName)
        /// The system is shutting down and spawns no new actors.
        public static let shuttingDown = Code(.shuttingDown)
        /// The ref given is not a child of this actor.
        public static let notAChild = Code(.notAChild)
        /// An actor that is stopping (for example in its post-stop handler) cannot spawn.
        public static let parentNotRunning = Code(.parentNotRunning)

        public var description: String { "\(value)" }
    }

    /// The kind of error.
    public let code: Code
    /// A human description naming what was wrong.
    public let description: String

    static func invalidName(_ name: String, parent: String, problem: String) -> ActorSystemError {
        ActorSystemError(code: .invalidName, description: "invalid actor name '\(name)' under \(parent): \(problem)")
    }

    static func duplicateName(_ name: String, parent: String) -> ActorSystemError {
        ActorSystemError(code: .duplicateName, description: "an actor named '\(name)' already exists under \(parent)")
    }

    static func shuttingDown(_ system: String) -> ActorSystemError {
        ActorSystemError(code: .shuttingDown, description: "actor system '\(system)' is shutting down")
    }

    static func parentNotRunning(_ parent: String) -> ActorSystemError {
        ActorSystemError(code: .parentNotRunning, description: "\(parent) is stopping and cannot spawn children")
    }

    static func notAChild(_ ref: String, parent: String) -> ActorSystemError {
        ActorSystemError(code: .notAChild, description: "\(ref) is not a child of \(parent)")
    }
}

/// The failure of an actor that did not handle the `terminated` event of an actor it watched
/// (a death pact, as in Akka).
public struct DeathPactError: Error, Sendable, CustomStringConvertible {
    /// The watched actor that terminated.
    public let terminated: AnyActorRef

    public var description: String {
        "death pact: watched actor \(terminated.address.path) terminated and the termination was not handled"
    }
}

/// Thrown by `ActorContext.stash(_:)` when the stash is full.
public struct StashOverflowError: Error, Sendable, CustomStringConvertible {
    /// The actor whose stash overflowed.
    public let actor: ActorAddress
    /// The stash's capacity.
    public let capacity: Int

    public var description: String {
        "stash of \(actor.path) is full (capacity \(capacity))"
    }
}
