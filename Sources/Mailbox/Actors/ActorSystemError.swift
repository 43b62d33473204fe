/// An error from the actor system's API: a bad name, a duplicate, a system shutting down.
///
/// A struct with a private code, so new cases can be added without breaking users; compare
/// with the static members (`error.code == .duplicateName`).
public struct ActorSystemError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong, without details.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Value: Hashable, Sendable { case invalidName, duplicateName, shuttingDown, notAChild, parentNotRunning, conflictingWatch }
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
