import Mailbox

/// What `fillMailbox` did: how many messages were enqueued and how many dropped.
public struct MailboxFill: Sendable, Equatable, CustomStringConvertible {
    /// Each `tell`'s result, in order.
    public let results: [TellResult]
    /// Messages enqueued (`tell` returned `.enqueued`).
    public var enqueued: Int { results.count { $0.isEnqueued } }
    /// Messages dropped (`tell` returned `.dropped`; each was published as a dead letter).
    public var dropped: Int { results.count - enqueued }

    public var description: String { "MailboxFill(enqueued: \(enqueued), dropped: \(dropped))" }
}

/// Tells `ref` `count` copies of `message` at once, from the calling thread, to fill its
/// mailbox (a bounded mailbox then drops per its overflow policy).
///
/// Thread-safety: like `tell`, callable from any thread; on a `TestScheduler` nothing is
/// handled until the scheduler runs, so the mailbox holds them all.
@discardableResult
public func fillMailbox<Message: Sendable>(_ ref: ActorRef<Message>, with message: Message, count: Int) -> MailboxFill {
    fillMailbox(ref, count: count) { _ in message }
}

/// Tells `ref` the `count` messages `message(0)`, `message(1)`, … at once; see
/// `fillMailbox(_:with:count:)`.
@discardableResult
public func fillMailbox<Message: Sendable>(_ ref: ActorRef<Message>, count: Int, message: (Int) -> Message) -> MailboxFill {
    precondition(count >= 0, "fillMailbox needs a count of at least 0, not \(count)")
    return MailboxFill(results: (0 ..< count).map { ref.tell(message($0)) })
}

/// Stops `ref` from outside, unexpectedly — as if its parent had stopped it — to test how its
/// parent and watchers cope ("a child stops unexpectedly"). Its children stop first, its
/// post-stop runs, watchers receive `terminated`, and a parent that watches it is told.
///
/// Thread-safety: callable from any thread; the stop is a system message, handled on the
/// actor's scheduler. Stopping an actor that has terminated does nothing.
public func stopUnexpectedly<Message: Sendable>(_ ref: ActorRef<Message>) {
    ref.stopFromOutside()
}

/// Stops the actor behind `ref` from outside; see `stopUnexpectedly(_:)`. Useful with
/// `ActorContext.childRefs` and `ActorSystem.topLevelActors`.
public func stopUnexpectedly(_ ref: AnyActorRef) {
    ref.stopFromOutside()
}
