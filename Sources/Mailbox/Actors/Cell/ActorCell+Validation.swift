/// What `spawn` checks before it creates an actor: problems it can know then are thrown to the
/// caller instead of trapping (or failing the new actor) later.
extension ActorSystem {
    /// Throws if an actor named `name` under `parent` cannot run with `props`. (The actor's
    /// path is built only for the error: this runs on every spawn.)
    ///
    /// - Throws: `ActorSystemError` with code `.invalidProps` for a bounded mailbox whose
    ///   capacity is not positive, or a run length that is not.
    @usableFromInline
    func checkProps(_ props: Props, parent: String, name: String) throws {
        if case let .bounded(capacity, _) = props.mailbox, capacity <= 0 {
            throw ActorSystemError.invalidProps("a bounded mailbox needs a positive capacity, not \(capacity)", actor: "\(parent)/\(name)")
        }
        // `Props.init` checks it, but the property can be set afterwards: a run length of 0
        // would never handle a message and reschedule the run for ever.
        if let runLength = props.runLength, runLength <= 0 {
            throw ActorSystemError.invalidProps("the run length must be positive, not \(runLength)", actor: "\(parent)/\(name)")
        }
    }
}

extension ActorCell {
    /// Throws if `behavior` cannot start an actor named `name` under `parent`. Inlinable:
    /// nothing to do in the common case. (Called after `ActorSystem.checkProps`.)
    ///
    /// - Throws: `ActorSystemError` with code `.invalidBehavior` when `behavior` is `.same` or
    ///   `.unhandled` (also inside `supervise` rules): the result of handling a message, not a
    ///   behavior to start with. (What a `setup` returns is known only when it runs: the same
    ///   mistake there is a failure of the actor's start.)
    @inlinable
    static func checkBehavior(_ behavior: borrowing Behavior<Message>, parent: String, name: String) throws {
        switch behavior.kind {
        case .same, .unhandled, .supervised:
            try checkStartBehavior(behavior, parent: parent, name: name)
        default:
            break
        }
    }

    /// `checkBehavior`'s check of a behavior that is, or wraps, a result-only behavior.
    @usableFromInline
    static func checkStartBehavior(_ behavior: borrowing Behavior<Message>, parent: String, name: String) throws {
        if let invalid = resultOnly(behavior) {
            throw ActorSystemError.invalidStartBehavior("\(invalid)", actor: "\(parent)/\(name)", returnedBySetup: false)
        }
    }

    /// `behavior`, or the behavior its `supervise` rules wrap, if it is `.same` or `.unhandled`
    /// (a result of handling a message only). Matches without copying the common cases.
    private static func resultOnly(_ behavior: borrowing Behavior<Message>) -> Behavior<Message>? {
        switch behavior.kind {
        case .same:
            return .same
        case .unhandled:
            return .unhandled
        case let .supervised(rule):
            return resultOnly(rule.behavior)
        default:
            return nil
        }
    }
}
