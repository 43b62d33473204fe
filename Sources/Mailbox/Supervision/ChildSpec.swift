/// What a `Supervisor` starts: an id (also the child's actor name), a restart type, and the
/// child's behavior.
public struct ChildSpec: Sendable {
    /// When a child is restarted.
    public enum Restart: Sendable, Equatable {
        /// Always.
        case permanent
        /// Only after a failure; a child that stops normally stays stopped (and so does a
        /// child `Supervisor` that exceeded its restart intensity: OTP's `shutdown` exit).
        case transient
        /// Never.
        case temporary
    }

    /// Whether the child is a worker or itself a supervisor (OTP's `type`), as
    /// `countChildren` and `whichChildren` report it.
    public enum ChildType: Sendable, Equatable {
        /// An actor that does the work.
        case worker
        /// A `Supervisor`.
        case supervisor
    }

    /// The child's id and actor name.
    public let id: String
    /// When the child is restarted.
    public let restart: Restart
    /// `.supervisor` for a child that takes `SupervisorMessage`s (a `Supervisor.behavior`),
    /// `.worker` otherwise.
    public let type: ChildType
    /// Spawns the child; a one-for-one supervisor passes its shared intensity window.
    @usableFromInline
    let start: @Sendable (ActorContext<SupervisorMessage>, SharedRestartWindow?) throws -> AnyTarget

    /// A child started with `behavior()` (called again for each new actor, not for restarts in
    /// place, which rebuild the behavior's `setup`).
    ///
    /// Call it with a concrete message type where you can: the child's mailbox run is then
    /// compiled specialised for that type in your module.
    @inlinable
    public init<Message: Sendable>(
        id: String, restart: Restart = .permanent, props: Props = Props(),
        _ behavior: @escaping @Sendable () -> Behavior<Message>
    ) {
        self.id = id
        self.restart = restart
        self.type = Message.self == SupervisorMessage.self ? .supervisor : .worker
        self.start = { context, window in
            try context.spawnChild(behavior(), name: id, props: props, managed: true, delegatedWindow: window) { $0.runMailbox() }.target
        }
    }
}
