/// What spawns actors: the `ActorSystem` (top-level actors, from any thread) and an
/// `ActorContext` (children of its actor, inside that actor's handlers only), as in Akka's
/// `ActorRefFactory`. The spawn helpers that build on `spawn(_:name:props:)`, such as
/// `spawn(name:props:initialState:_:)` and `spawn(name:props:output:_:)`, are written once, here,
/// for both.
///
/// Thread-safety: that of the conforming type (see above).
public protocol ActorRefFactory {
    /// Spawns an actor named `name` running `behavior`: a top-level actor for a system, a child
    /// for a context.
    ///
    /// - Throws: `ActorSystemError` (invalid or duplicate name, shutting down, parent not
    ///   running); no actor is then running.
    @discardableResult
    func spawn<Message: Sendable>(
        _ behavior: sending Behavior<Message>, name: String, props: Props
    ) throws -> ActorRef<Message>
}

extension ActorSystem: ActorRefFactory {}

extension ActorContext: ActorRefFactory {}
