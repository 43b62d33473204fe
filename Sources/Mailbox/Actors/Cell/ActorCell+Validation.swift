/// What `spawn` checks before it creates an actor: problems it can know then are thrown to the
/// caller instead of trapping (or failing the new actor) later.
extension ActorCell {
    /// Throws if an actor at `path` cannot run `behavior` with `props`.
    ///
    /// - Throws: `ActorSystemError` with code `.invalidBehavior` when `behavior` is `.same` or
    ///   `.unhandled` (also inside `supervise` rules): the result of handling a message, not a
    ///   behavior to start with. (What a `setup` returns is known only when it runs: the same
    ///   mistake there is a failure of the actor's start.) Code `.invalidProps` for a bounded
    ///   mailbox whose capacity is not positive.
    static func checkSpawnable(_ behavior: borrowing Behavior<Message>, props: Props, path: String) throws {
        if case let .bounded(capacity, _) = props.mailbox, capacity <= 0 {
            throw ActorSystemError.invalidProps("a bounded mailbox needs a positive capacity, not \(capacity)", actor: path)
        }
        var kind = behavior.kind
        while case let .supervised(rule) = kind {
            kind = rule.behavior.kind
        }
        switch kind {
        case .same, .unhandled:
            throw ActorSystemError.invalidStartBehavior(
                "\(Behavior<Message>(kind))", actor: path, returnedBySetup: false)
        default:
            return
        }
    }
}
