import Foundation

/// Look-ups: `WHO`, `WHOIS`, `WHOWAS`, `ISON`, `USERHOST` (requests to the registry, or to a
/// channel for `WHO #channel`), and what the session answers itself: `VERSION`, `TIME`, `INFO`,
/// `MOTD`, `LUSERS`.
extension Session {
    func runQuery(_ command: QueryCommand, _ params: [String]) {
        switch command {
        case .who:
            let mask = params.first ?? "*"
            let operatorsOnly = params.count > 1 && params[1].contains(Character("o"))
            if mask.hasPrefix("#") {
                ask(channel: mask, .who(operatorsOnly: operatorsOnly),
                    ifMissing: replies.numeric(Numeric.endOfWho, identity.nick, mask, "End of /WHO list"))
            } else {
                ask(registry: .who(mask: mask == "0" ? "*" : mask, operatorsOnly: operatorsOnly))
            }
        case .whowas:
            guard let nicks = params.first, !nicks.isEmpty else { return send(Numeric.noNicknameGiven, "No nickname given") }
            let count = params.count > 1 ? Int(params[1]) ?? 0 : 0
            ask(registry: .whowas(nick: String(nicks.split(separator: ",").first ?? ""), count: count))
        case .whois:
            guard let first = params.first, !first.isEmpty else { return send(Numeric.noNicknameGiven, "No nickname given") }
            let nicks = params.count > 1 ? params[1] : first
            for nick in nicks.split(separator: ",").prefix(configuration.maxTargets) {
                ask(registry: .whois(nick: String(nick)))
            }
        case .ison:
            guard !params.isEmpty else { return needMoreParams("ISON") }
            ask(registry: .ison(nicks: params.flatMap { $0.split(separator: " ").map(String.init) }))
        case .userhost:
            guard !params.isEmpty else { return needMoreParams("USERHOST") }
            ask(registry: .userhost(nicks: params.flatMap { $0.split(separator: " ").map(String.init) }))
        case .version:
            send(Numeric.version, "\(configuration.version).", configuration.serverName, "Mailbox IRC chat server sample")
            sendISupport()
        case .time:
            send(Numeric.time, configuration.serverName, ServerContext.format(now))
        case .info:
            for line in ["\(configuration.version): an IRC server on Mailbox actors", "One actor per connection and per channel, supervised."] {
                send(Numeric.info, line)
            }
            send(Numeric.endOfInfo, "End of /INFO list")
        case .motd:
            motd()
        case .lusers:
            lusers()
        }
    }

    /// 251–255, 265, 266: the server's counters.
    func lusers() {
        let statistics = server.counters.snapshot
        let visible = statistics.users - statistics.invisibleUsers
        send(Numeric.luserClient, "There are \(visible) users and \(statistics.invisibleUsers) invisible on 1 servers")
        send(Numeric.luserOp, String(statistics.operators), "operator(s) online")
        send(Numeric.luserUnknown, String(max(0, statistics.connections - statistics.users)), "unknown connection(s)")
        send(Numeric.luserChannels, String(statistics.channels), "channels formed")
        send(Numeric.luserMe, "I have \(statistics.users) clients and 0 servers")
        send(Numeric.localUsers, String(statistics.users), String(statistics.maxUsers),
             "Current local users \(statistics.users), max \(statistics.maxUsers)")
        send(Numeric.globalUsers, String(statistics.users), String(statistics.maxUsers),
             "Current global users \(statistics.users), max \(statistics.maxUsers)")
    }

    /// 375, 372…, 376, or 422 when there is no message of the day.
    func motd() {
        guard let lines = configuration.motd else { return send(Numeric.noMotd, "MOTD File is missing") }
        send(Numeric.motdStart, "- \(configuration.serverName) Message of the day - ")
        for line in lines { send(Numeric.motd, "- \(line)") }
        send(Numeric.endOfMotd, "End of /MOTD command.")
    }
}
