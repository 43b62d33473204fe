/// A message received on a subscription (or as the reply to a request).
///
/// A plain value (`Sendable`); `payload` is the message's own array, copied once from the read
/// buffer.
public struct NATSMessage: Sendable {
    /// The subject it was published to.
    public var subject: String
    /// Where a reply goes (set by a request), or nil.
    public var replyTo: String?
    /// The headers, if it was published with some (`HPUB`), or carried a status.
    public var headers: NATSHeaders?
    /// The payload bytes.
    public var payload: [UInt8]

    /// A message with these parts (for tests and for building replies).
    public init(subject: String, replyTo: String? = nil, headers: NATSHeaders? = nil, payload: [UInt8]) {
        self.subject = subject
        self.replyTo = replyTo
        self.headers = headers
        self.payload = payload
    }

    /// The payload decoded as UTF-8 (invalid bytes become U+FFFD).
    public var string: String { String(decoding: payload, as: UTF8.self) }

    /// The status code of the headers' version line (503 "no responders", 100 heartbeat), or nil.
    public var status: Int? { headers?.status }
}
