/// An error from the actor system's API: a bad name, a duplicate, a system shutting down, or
/// an API misused inside an actor (a behavior or a timer that cannot run). Thrown by `spawn`
/// where the problem is known then; otherwise it is the *failure* of the actor that misused the
/// API, handed to its supervision like any thrown error, so that one actor's bug never takes
/// the process down.
///
/// A struct with a private code, so new cases can be added without breaking users; compare
/// with the static members (`error.code == .duplicateName`).
public struct ActorSystemError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong, without details.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Value: Hashable, Sendable { case invalidName, duplicateName, shuttingDown, notAChild, parentNotRunning, invalidBehavior, invalidProps, invalidTimer, conflictingWatch }
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
        /// A behavior that cannot be used where it was: `.same` or `.unhandled` as the behavior
        /// an actor starts with (spawned, or returned by `setup`), or `receiveLifecycle(_:)`
        /// applied to a behavior that is not a `receive` behavior.
        public static let invalidBehavior = Code(.invalidBehavior)
        /// `Props` an actor cannot run with, such as a bounded mailbox of capacity 0.
        public static let invalidProps = Code(.invalidProps)
        /// A repeating timer with an interval under one nanosecond, the schedulers' resolution
        /// (it would fire without end at one instant).
        public static let invalidTimer = Code(.invalidTimer)
        /// An actor watched another with `watch(_:)` and `watch(_:with:)` both (a usage error,
        /// a failure of the watcher).
        public static let conflictingWatch = Code(.conflictingWatch)

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

    static func invalidStartBehavior(_ behavior: String, actor: String, returnedBySetup: Bool) -> ActorSystemError {
        let source = returnedBySetup ? "setup of \(actor) returned" : "\(actor) was spawned with"
        return ActorSystemError(
            code: .invalidBehavior,
            description: "\(source) \(behavior), which is only valid as the result of handling a message")
    }

    static func invalidBehavior(_ description: String) -> ActorSystemError {
        ActorSystemError(code: .invalidBehavior, description: description)
    }

    static func invalidProps(_ problem: String, actor: String) -> ActorSystemError {
        ActorSystemError(code: .invalidProps, description: "cannot spawn \(actor): \(problem)")
    }

    static func invalidTimer(_ problem: String, actor: String) -> ActorSystemError {
        ActorSystemError(code: .invalidTimer, description: "\(actor): \(problem)")
    }

    static func notAChild(_ ref: String, parent: String) -> ActorSystemError {
        ActorSystemError(code: .notAChild, description: "\(ref) is not a child of \(parent)")
    }

    static func conflictingWatch(watcher: String, target: String, nowWithMessage: Bool) -> ActorSystemError {
        let (before, now) = nowWithMessage ? ("watch(_:)", "watch(_:with:)") : ("watch(_:with:)", "watch(_:)")
        return ActorSystemError(
            code: .conflictingWatch,
            description: "\(watcher) watched \(target) with \(now) after \(before): a watch delivers either the "
                + "`terminated` event or a message, not both; unwatch first to switch")
    }
}
