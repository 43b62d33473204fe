import Mailbox
import MailboxNATS

/// What a cluster node needs of NATS, and no more: the seam between `_ClusterCore` and its
/// messaging engine. `NATSConnection` is the transport of every real cluster; the simulation
/// (`Tests/ClusterSimulation`) puts an in-memory one with seeded faults in its place.
///
/// The semantics the core relies on (a transport must keep them, or say which it breaks):
/// 1. Subjects are dot-separated tokens; a subscription's subject may use `*` (one token) and
///    `>` (the rest). Every subscription matching a published subject gets the message.
/// 2. A message goes to one member of each queue group among the matching subscriptions.
/// 3. Messages from one publisher on one subject reach each subscriber in the order published
///    (a simulated transport may reorder, drop or duplicate them: the core must cope).
/// 4. A request is answered by the first reply on its own inbox; when nobody subscribes to its
///    subject it fails at once with `noResponders`, and when no reply comes within its time-out,
///    with `timedOut`. A publication with a reply subject to a subject nobody subscribes to gets
///    a status-503 message on that reply subject (NATS's "no responders").
/// 5. `state` follows the link to the server (`connected`, `reconnecting`, `closed`).
///
/// Thread-safety: every member may be called from any thread. Handlers are called one message
/// at a time per subscription.
package protocol _ClusterTransport: AnyObject, Sendable {
    /// The link to the server: `connected`, `reconnecting`, `closed`.
    var state: Property<NATSConnectionState> { get }

    /// Publishes `payload` to `subject` (never blocks). `NATSConnection`'s own method: no
    /// adapter on the hot path of every remote tell.
    ///
    /// - Throws: when the publication was not accepted (nothing was sent).
    func publish(_ payload: [UInt8], to subject: String, replyTo: String?, headers: NATSHeaders?) throws(NATSError)

    /// Calls `handler` with each message on `subject` (wildcards allowed) until the returned
    /// disposable is disposed. In queue group `queue` (when not nil) each message goes to one
    /// member of the group.
    ///
    /// - Throws: `invalidSubject`, `connectionClosed`.
    func clusterSubscribe(to subject: String, queue: String?, handler: @escaping @Sendable (NATSMessage) -> Void) throws(NATSError) -> any Disposable

    /// Sends a request and waits for the first reply.
    ///
    /// - Throws: `noResponders` at once when nobody subscribes to `subject`; `timedOut`.
    func request(_ payload: [UInt8], to subject: String, headers: NATSHeaders?, timeout: Duration?) async throws(NATSError) -> NATSMessage

    /// Sends a request and calls `completion` once with its reply or why there is none (as
    /// the `async` form; no task in between on a simulated transport, so the outcome comes
    /// on its virtual clock).
    func request(_ payload: [UInt8], to subject: String, timeout: Duration, completion: @escaping @Sendable (Result<NATSMessage, NATSError>) -> Void)

    /// Answers `message` (publishes to its reply subject).
    func respond(to message: NATSMessage, with payload: [UInt8], headers: NATSHeaders?) throws(NATSError)

    /// Returns once the server has everything sent before.
    func flush(timeout: Duration) async throws(NATSError)

    /// Closes the link for good (idempotent).
    func close()

    /// Waits until the link is closed.
    func closed() async
}

extension NATSConnection: _ClusterTransport {
    package func clusterSubscribe(to subject: String, queue: String?, handler: @escaping @Sendable (NATSMessage) -> Void) throws(NATSError) -> any Disposable {
        let subscription = try subscribe(to: subject, queue: queue, observer: handler)
        return AnyDisposable { subscription.unsubscribe() }
    }

    package func request(
        _ payload: [UInt8], to subject: String, timeout: Duration, completion: @escaping @Sendable (Result<NATSMessage, NATSError>) -> Void
    ) {
        Task {
            do throws(NATSError) {
                completion(.success(try await request(payload, to: subject, headers: nil, timeout: timeout)))
            } catch {
                completion(.failure(error))
            }
        }
    }
}
