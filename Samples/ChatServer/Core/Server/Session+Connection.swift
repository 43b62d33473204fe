/// The connection itself: `PING`, `PONG`, `QUIT`. Allowed before registration.
extension Session {
    func runConnection(_ command: ConnectionCommand, _ params: [String]) {
        switch command {
        case .ping:
            guard let token = params.first, !token.isEmpty else { return send(Numeric.noOrigin, "No origin specified") }
            connection.send(IRCMessage(prefix: configuration.serverName, command: "PONG", params: [configuration.serverName, token])
                .serialized(alwaysTrailing: true))
        case .pong:
            // Any bytes count as an answer to the keep-alive's PING (`clientSpoke`).
            break
        case .quit:
            perform(machine.ended(.quit(params.first), connectionGone: false))
        }
    }
}
