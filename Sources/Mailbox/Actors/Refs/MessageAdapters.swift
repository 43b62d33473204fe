/// An actor's message adapters (see `ActorContext.messageAdapter`), as Akka Typed keeps them: one
/// per message type (registering a type again replaces its function, and its ref, made once,
/// uses the new one), looked up newest first by the message's dynamic type, so the most recently
/// registered adapter that matches a subtype wins.
///
/// Thread-safety: `register` runs inside the owner's mailbox run, `convert` on senders' threads;
/// the entries are protected by their `LockedValueBox`.
final class MessageAdapters<To: Sendable>: Sendable {
    private struct Entry {
        let type: ObjectIdentifier
        /// The ref made for this type, handed out again on every registration.
        let target: AnyTarget
        /// `nil` when the message is not of this entry's type.
        let convert: @Sendable (any Sendable) throws -> To?
    }

    /// Oldest first. Protected by the box's lock.
    private let entries = LockedValueBox<[Entry]>([])

    /// Registers `transform` for `From` (replacing an earlier one for the same type, which then
    /// counts as the newest) and returns the ref target for `From`: the existing one, or one made
    /// by `makeTarget`.
    func register<From: Sendable>(
        _ transform: @escaping @Sendable (From) throws -> To,
        makeTarget: () -> AdapterTarget<From, To>
    ) -> AdapterTarget<From, To> {
        let type = ObjectIdentifier(From.self)
        let convert: @Sendable (any Sendable) throws -> To? = { message in
            guard let message = message as? From else { return nil }
            return try transform(message)
        }
        let existing = entries.withLockedValue { entries -> AnyTarget? in
            guard let index = entries.firstIndex(where: { $0.type == type }) else { return nil }
            let target = entries.remove(at: index).target
            entries.append(Entry(type: type, target: target, convert: convert))
            return target
        }
        if let existing {
            // Registered under `From`'s identifier, so it is an `AdapterTarget<From, To>`.
            return unsafeDowncast(existing, to: AdapterTarget<From, To>.self)
        }
        let target = makeTarget()
        entries.withLockedValue { $0.append(Entry(type: type, target: target, convert: convert)) }
        return target
    }

    /// `message` converted by the newest adapter whose type matches it.
    ///
    /// - Throws: what the adapter's function throws.
    func convert<From: Sendable>(_ message: From) throws -> To {
        let candidates = entries.withLockedValue { $0 }
        for entry in candidates.reversed() {
            if let converted = try entry.convert(message) { return converted }
        }
        // Unreachable: the ref exists only with its own entry, which matches its type.
        preconditionFailure("no message adapter for \(From.self)")
    }
}
