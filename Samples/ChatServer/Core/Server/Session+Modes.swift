/// `MODE` (a channel's goes to the channel; the client's own, `+i` and `-o`, are the session's)
/// and `AWAY`.
extension Session {
    func runModes(_ command: ModeCommand, _ params: [String]) {
        switch command {
        case .mode: mode(params)
        case .away: away(params)
        }
    }

    private func mode(_ params: [String]) {
        guard let target = params.first else { return needMoreParams("MODE") }
        if target.hasPrefix("#") {
            return ask(channel: target, .mode(Array(params.dropFirst())), ifMissing: noSuchChannel(target))
        }
        guard IRCCaseMapping.equal(target, identity.nick) else {
            return send(Numeric.usersDontMatch, "Can't change mode for other users")
        }
        guard params.count > 1 else { return send(Numeric.umodeIs, currentUserModes) }
        var adding = true
        var applied = ""
        var sign: Bool?
        var unknown = false
        for flag in params[1] {
            switch flag {
            case "+": adding = true
            case "-": adding = false
            case "i":
                guard identity.isInvisible != adding else { continue }
                identity.isInvisible = adding
                server.counters.invisibleUsers.add(adding ? 1 : -1, ordering: .relaxed)
                if sign != adding { applied += adding ? "+" : "-"; sign = adding }
                applied += "i"
            case "o":
                // +o comes only from OPER; a client may drop it.
                guard !adding, identity.isOperator else { continue }
                identity.isOperator = false
                server.counters.operators.add(-1, ordering: .relaxed)
                if sign != false { applied += "-"; sign = false }
                applied += "o"
            default:
                unknown = true
            }
        }
        if unknown { send(Numeric.umodeUnknownFlag, "Unknown MODE flag") }
        if !applied.isEmpty {
            identityChanged()  // before the client sees the change (see `away`)
            connection.send(IRCMessage(prefix: identity.prefix, command: "MODE", params: [identity.nick, applied]).serialized())
        }
    }

    private var currentUserModes: String {
        "+" + (identity.isInvisible ? "i" : "") + (identity.isOperator ? "o" : "")
    }

    private func away(_ params: [String]) {
        let isAway = params.first.map { !$0.isEmpty } ?? false
        identity.away = isAway ? params[0].truncated(toBytes: configuration.awayLength) : nil
        // The registry and the channels hear of it before the client does: a WHO another client
        // sends once this one has its 306 finds the new state (the tells are queued first).
        identityChanged()
        if isAway {
            send(Numeric.nowAway, "You have been marked as being away")
        } else {
            send(Numeric.unaway, "You are no longer marked as being away")
        }
    }
}
