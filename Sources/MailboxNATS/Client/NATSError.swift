import MailboxNet

/// Why a NATS operation failed.
///
/// A struct over a private code so that cases can be added without breaking users: compare
/// with the static members (`error.code == .noResponders`) or switch on `code`.
///
/// | code | when | final? |
/// |---|---|---|
/// | `authorizationViolation` | the server refused the credentials | yes: the connection closes, no reconnect |
/// | `authenticationExpired` | the user's credentials expired | yes |
/// | `serverError` | any other `-ERR` from the server (`text` has it) | the server closes after most |
/// | `permissionsViolation` | publish or subscribe not allowed for this user | no |
/// | `slowConsumer` | the server cut this client off (or a subscription dropped messages) | no |
/// | `noResponders` | a request's subject had no subscriber (status 503) | no |
/// | `timedOut` | no reply, no PONG, no connection in time | no |
/// | `connectionClosed` | the connection is closed (by `close()` or for good) | yes |
/// | `disconnected` | the operation needed the server and the connection was lost | no |
/// | `reconnectBufferExceeded` | a publish while disconnected found the buffer full | no |
/// | `outboundBufferExceeded` | a publish found the outbound buffer full (a slow server link) | no |
/// | `maxPayloadExceeded` | the message is larger than the server's `max_payload` | no |
/// | `invalidSubject` | the subject or queue group is empty or has whitespace | no |
/// | `protocolError` | the server sent a malformed frame (the client reconnects) | no |
/// | `socket` | connecting failed (`socketError` has the errno) | no |
/// | `noServers` | no server of the list could be reached | yes |
/// | `jetStream` | the JetStream API answered with an error (`text`, `jetStreamCode`) | no |
/// | `wrongLastRevision` | a key/value update's expected revision was not the last one | no |
/// | `keyExists` | a key/value `create` found the key present | no |
/// | `cancelled` | the waiting task was cancelled | no |
public struct NATSError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The kind of failure.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        fileprivate enum Value: String, Sendable {
            case authorizationViolation, authenticationExpired, serverError, permissionsViolation
            case slowConsumer, noResponders, timedOut, connectionClosed, disconnected
            case reconnectBufferExceeded, outboundBufferExceeded, maxPayloadExceeded, invalidSubject
            case protocolError, socket, noServers, jetStream, wrongLastRevision, keyExists, cancelled
        }
        fileprivate let value: Value

        public static let authorizationViolation = Code(value: .authorizationViolation)
        public static let authenticationExpired = Code(value: .authenticationExpired)
        public static let serverError = Code(value: .serverError)
        public static let permissionsViolation = Code(value: .permissionsViolation)
        public static let slowConsumer = Code(value: .slowConsumer)
        public static let noResponders = Code(value: .noResponders)
        public static let timedOut = Code(value: .timedOut)
        public static let connectionClosed = Code(value: .connectionClosed)
        public static let disconnected = Code(value: .disconnected)
        public static let reconnectBufferExceeded = Code(value: .reconnectBufferExceeded)
        public static let outboundBufferExceeded = Code(value: .outboundBufferExceeded)
        public static let maxPayloadExceeded = Code(value: .maxPayloadExceeded)
        public static let invalidSubject = Code(value: .invalidSubject)
        public static let protocolError = Code(value: .protocolError)
        public static let socket = Code(value: .socket)
        public static let noServers = Code(value: .noServers)
        public static let jetStream = Code(value: .jetStream)
        public static let wrongLastRevision = Code(value: .wrongLastRevision)
        public static let keyExists = Code(value: .keyExists)
        public static let cancelled = Code(value: .cancelled)

        public var description: String { value.rawValue }
    }

    /// The kind of failure.
    public var code: Code
    /// Details: the server's text, the subject, the time-out.
    public var text: String
    /// For `socket`: the failed call and its errno.
    public var socketError: SocketError?
    /// For `jetStream`: the API's `err_code` (10071 wrong last sequence, 10058 stream exists...).
    public var jetStreamCode: Int?

    /// An error of `code` with details (used by the client; public for tests and wrappers).
    public init(_ code: Code, _ text: String = "", socketError: SocketError? = nil, jetStreamCode: Int? = nil) {
        self.code = code
        self.text = text
        self.socketError = socketError
        self.jetStreamCode = jetStreamCode
    }

    /// "NATS noResponders: ..." with the socket error and JetStream code when there are.
    public var description: String {
        var text = "NATS \(code)"
        if !self.text.isEmpty { text += ": \(self.text)" }
        if let socketError { text += " (\(socketError))" }
        if let jetStreamCode { text += " [err_code \(jetStreamCode)]" }
        return text
    }

    /// True for errors after which the client does not reconnect (bad credentials).
    public var isFinal: Bool {
        code == .authorizationViolation || code == .authenticationExpired
    }

    /// The error a server's `-ERR 'text'` means.
    static func fromServer(_ text: String) -> NATSError {
        let lower = text.lowercased()
        if lower.hasPrefix("authorization violation") {
            return NATSError(.authorizationViolation, text)
        }
        if lower.contains("authentication timeout") || lower.contains("authorization timeout") {
            // The handshake was too slow (a loaded machine), not bad credentials: retried.
            return NATSError(.timedOut, text)
        }
        if lower.contains("authentication expired") || lower.contains("user authentication revoked") {
            return NATSError(.authenticationExpired, text)
        }
        if lower.hasPrefix("permissions violation") { return NATSError(.permissionsViolation, text) }
        if lower.hasPrefix("slow consumer") { return NATSError(.slowConsumer, text) }
        if lower.hasPrefix("maximum payload") { return NATSError(.maxPayloadExceeded, text) }
        return NATSError(.serverError, text)
    }
}
