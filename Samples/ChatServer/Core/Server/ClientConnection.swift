import MailboxNet

/// What a session needs of its client's connection: the seam between the server's actors and
/// the socket layer (`TCPConnection` conforms; tests use an in-memory connection).
///
/// Thread-safety: every method may be called from any thread, concurrently.
public protocol ClientConnection: AnyObject, Sendable {
    /// Unique among the process's connections.
    var id: UInt64 { get }
    /// The peer's numeric address, used as the client's host name.
    var peerHost: String { get }
    /// Starts delivering what the client sends to `onRead`, and the end of the connection,
    /// once, to `onClose`. Called once, by the session manager.
    func open(sendQueueLimit: Int, farewell: [UInt8]?,
              onRead: @escaping @Sendable ([UInt8]) -> Void,
              onClose: @escaping @Sendable (TCPConnection.CloseReason) -> Void)
    /// Queues bytes for the client without blocking (see `TCPConnection.send`).
    @discardableResult func send(_ bytes: [UInt8]) -> TCPConnection.SendResult
    /// Sends what is queued and then `final`, and closes.
    func closeGracefully(final: [UInt8]?)
    /// Flow control of what the client sends.
    func pauseReading()
    func resumeReading()
}

extension TCPConnection: ClientConnection {
    public var peerHost: String { peer.host }

    public func open(sendQueueLimit: Int, farewell: [UInt8]?,
                     onRead: @escaping @Sendable ([UInt8]) -> Void,
                     onClose: @escaping @Sendable (TCPConnection.CloseReason) -> Void) {
        start(sendQueueLimit: sendQueueLimit, farewell: farewell, readChunkSize: 16 * 1024, onRead: onRead, onClose: onClose)
    }

    public func closeGracefully(final: [UInt8]?) {
        close(final: final, timeout: .seconds(2))
    }
}
