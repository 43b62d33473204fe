import Mailbox

/// The answer a client's request owes the client's session, carried in the request as `ask`
/// carries its reply ref.
///
/// A client's replies come from several actors, so its session runs the next command only once
/// the actors handling the previous one have sent their replies (`SessionStateMachine.Wait`).
/// Every request the session waits for carries a `ReplyTo`, which the session makes as it sends
/// the request (`Session.expectAnswer(_:)`, which counts it), and the actor that sends the
/// request's last reply consumes it:
///
/// ```
///  Session ──.request(…, replyTo)──▶ ChannelDirectory ──handOn──▶ ChannelActor ──replies──▶ client
///     ▲                                                                │
///     └──────────────────────── .answered(kind) ◀── answered() ───────┘
/// ```
///
/// The handler of a request returns `Answered`, which only `answered()` and `handOn(_:)` make, so
/// the compiler checks that every path through it answers or hands the duty on; `answering(_:)`
/// answers when the handler fails instead. The replies themselves do not pass through it: they go
/// straight to the client's connection.
struct ReplyTo: Sendable {
    /// Which of the session's waits the answer settles.
    enum Kind: Sendable, Equatable {
        /// Any command but PRIVMSG: the client's next command waits for it.
        case command
        /// A PRIVMSG: the client's next PRIVMSGs and NOTICEs do not wait for it, other commands do.
        case message
    }

    /// The session that waits.
    let session: ActorRef<SessionMessage>
    let kind: Kind

    /// Tells the session that the request's last reply has been sent.
    func answered() -> Answered {
        session.tell(.answered(kind))
        return Answered()
    }

    /// Hands the duty to answer on to another actor: `send` puts this reply-to into the request
    /// it sends there.
    func handOn(_ send: (ReplyTo) -> Void) -> Answered {
        send(self)
        return Answered()
    }

    /// Runs the handler of the request this reply-to came with. If the handler throws (a
    /// failure, which supervision handles by dropping the request), answers before the error
    /// propagates, so the client's next commands do not wait for an answer that cannot come.
    func answering(_ handler: (ReplyTo) throws -> Answered) rethrows {
        do {
            _ = try handler(self)
        } catch {
            _ = answered()
            throw error
        }
    }
}

/// Proof that a request's `ReplyTo` was consumed: answered, or handed on to the actor that will
/// answer. Only `ReplyTo` makes one.
struct Answered {
    fileprivate init() {}
}
