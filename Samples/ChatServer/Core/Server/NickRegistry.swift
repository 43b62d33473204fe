import Foundation
import Mailbox

/// What the nick registry is asked. It owns the server's nick space: claims and changes are
/// atomic (one actor decides), and it routes what is addressed to a nick.
///
/// Sessions and channels reach it only through these messages, so a server on several nodes can
/// put a cluster-aware registry (nicks claimed cluster-wide) behind the same ref.
enum RegistryMessage: Sendable {
    /// Claims `nick` for the connection `id` (registering, or changing nick); answered with
    /// `SessionMessage.nickResult`. A connection holds one nick: a new claim frees the old one.
    case claim(nick: String, id: UInt64, replyTo: ActorRef<SessionMessage>)
    /// A client's request: the registry writes the replies to `from`'s connection, then answers
    /// `replyTo` (or hands it on).
    case request(RegistryRequest, from: ClientIdentity, replyTo: ReplyTo)
    /// `NOTICE` to a nick: `line` is sent to its client. Never answered, not even with an error.
    case notice(target: String, line: [UInt8])
    /// The client completed registration, or its record changed (away, modes).
    case update(ClientIdentity)
    /// The connection ended: its nick is free.
    case release(id: UInt64)
    /// From a channel: the client joined it or its status there changed (`status` "@", "+" or
    /// ""), or it left (`nil`). For WHOIS and for WHO of invisible users. Sent by the channel
    /// before it answers the join, so a WHOIS that follows sees it.
    case membership(id: UInt64, channel: String, status: String?)
    /// The cluster's answer to the claim of `nick` for `id` (`owned` nil: the claim failed).
    case claimSettled(nick: String, id: UInt64, owned: Bool?, replyTo: ActorRef<SessionMessage>)
    /// From the node relay (cluster): a user of another node, new or changed (its `id` is the
    /// relay's local id for it). A nick held here keeps its holder.
    case remoteUser(ClientIdentity)
    /// From the node relay (cluster): another node's line for this node's client `id`.
    case deliver(id: UInt64, line: [UInt8])
    /// From the node relay (cluster): send `node` the records of this node's registered users.
    case sendUsers(to: ClusterNode)
}

/// A client's request to the nick registry (`RegistryMessage.request`).
enum RegistryRequest: Sendable {
    /// `PRIVMSG` to a nick: `line` is sent to its client; 401 (no such nick) or 301 (away) to the
    /// sender.
    case privmsg(target: String, line: [UInt8])
    case whois(nick: String)
    case who(mask: String, operatorsOnly: Bool)
    case ison(nicks: [String])
    case userhost(nicks: [String])
    case kill(nick: String, reason: String)
    /// `INVITE`: the channel checked the inviter; the registry finds the target and hands the
    /// request back to the channel (`ChannelRequest.invitee`), or answers 401.
    case invite(nick: String, channel: ActorRef<ChannelMessage>)
    /// `WHOWAS`: the last `count` (0: all) clients that used `nick`, newest first.
    case whowas(nick: String, count: Int)
}

/// The registry's state: kept outside the behavior so that a restart (after a failure) keeps
/// every nick. Used only by the registry's actor.
final class RegistryState {
    struct Entry {
        let id: UInt64
        var nick: String
        var identity: ClientIdentity?
        /// Folded channel name → the channel's name with the client's status prefix ("@#chan").
        var channels: [String: String] = [:]
    }

    /// Folded nick → entry.
    var byNick: [String: Entry] = [:]
    /// Connection id → folded nick.
    var nickByID: [UInt64: String] = [:]
    /// Folded nick → the connection whose cluster claim of it is on its way (cluster).
    var pendingClaims: [String: UInt64] = [:]

    /// Who left, oldest first, for WHOWAS (at most `historyLimit`).
    struct Departed {
        let nick: String
        let user: String
        let host: String
        let realName: String
        let leftAt: String
    }

    var history: [Departed] = []
    let historyLimit = 1_000

    func remember(_ identity: ClientIdentity, at time: String) {
        if history.count >= historyLimit { history.removeFirst(history.count - historyLimit + 1) }
        history.append(Departed(nick: identity.nick, user: identity.user, host: identity.host, realName: identity.realName, leftAt: time))
    }
}

enum NickRegistry {
    static func behavior(server: ServerContext, state: RegistryState) -> Behavior<RegistryMessage> {
        Behavior<RegistryMessage>.supervise(.setup { context in
            let myself = context.myself
            return .receiveMessage { message in
                if case let .request(request, from, replyTo) = message {
                    try replyTo.answering { replyTo in
                        try server.checkFault("registry")
                        return answer(request, from: from, replyTo: replyTo, server: server, state: state)
                    }
                } else {
                    try server.checkFault("registry")
                    record(message, myself: myself, server: server, state: state)
                }
                return .same
            }
        }).onFailure(.restart(limit: 10, within: .seconds(60)))
    }

    /// The messages that are not requests: claims, records and notices.
    private static func record(_ message: RegistryMessage, myself: ActorRef<RegistryMessage>, server: ServerContext, state: RegistryState) {
        switch message {
        case let .claim(nick, id, replyTo):
            let folded = IRCCaseMapping.fold(nick)
            if let holder = state.byNick[folded], holder.id != id {
                replyTo.tell(.nickResult(nick: nick, accepted: false))
                return
            }
            if let pending = state.pendingClaims[folded], pending != id {
                replyTo.tell(.nickResult(nick: nick, accepted: false))
                return
            }
            if let cluster = server.cluster, state.byNick[folded] == nil {
                // Free here: the cluster decides (a KV round trip); the answer comes back as a
                // message, and meanwhile the nick is held for `id` against this node's others.
                state.pendingClaims[folded] = id
                cluster.claim(folded) { owned in
                    myself.tell(.claimSettled(nick: nick, id: id, owned: owned, replyTo: replyTo))
                }
                return
            }
            accept(nick, id: id, replyTo: replyTo, server: server, state: state)

        case let .claimSettled(nick, id, owned, replyTo):
            let folded = IRCCaseMapping.fold(nick)
            guard state.pendingClaims[folded] == id else {
                // The client left while its claim was on its way: let the nick go again, unless
                // another client of this node holds or claims it by now.
                if owned == true, state.pendingClaims[folded] == nil, state.byNick[folded] == nil {
                    server.cluster?.release(folded)
                }
                return
            }
            state.pendingClaims[folded] = nil
            if owned == true, state.byNick[folded] == nil {
                accept(nick, id: id, replyTo: replyTo, server: server, state: state)
            } else {
                replyTo.tell(.nickResult(nick: nick, accepted: false))
            }

        case let .remoteUser(identity):
            let folded = IRCCaseMapping.fold(identity.nick)
            var channels: [String: String] = [:]
            if let old = state.nickByID[identity.id], old != folded {
                channels = state.byNick.removeValue(forKey: old)?.channels ?? [:]
                state.nickByID[identity.id] = nil
            }
            if let holder = state.byNick[folded], holder.id != identity.id {
                // Held here (a claim both nodes won, across a partition): the holder keeps it.
                return
            }
            if channels.isEmpty { channels = state.byNick[folded]?.channels ?? [:] }
            state.byNick[folded] = RegistryState.Entry(id: identity.id, nick: identity.nick, identity: identity, channels: channels)
            state.nickByID[identity.id] = folded

        case let .deliver(id, line):
            guard let folded = state.nickByID[id], let identity = state.byNick[folded]?.identity, identity.remote == nil else { return }
            identity.send(line)

        case let .sendUsers(node):
            guard let cluster = server.cluster else { return }
            for entry in state.byNick.values {
                guard let identity = entry.identity, identity.remote == nil else { continue }
                cluster.send(.user(ChatUserRecord(identity)), to: node)
            }

        case let .update(identity):
            guard let folded = state.nickByID[identity.id] else { return }
            state.byNick[folded]?.identity = identity
            if identity.remote == nil { server.cluster?.broadcast(.user(ChatUserRecord(identity))) }

        case let .membership(id, channel, status):
            guard let folded = state.nickByID[id] else { return }
            state.byNick[folded]?.channels[IRCCaseMapping.fold(channel)] = status.map { $0 + channel }

        case let .release(id):
            if state.pendingClaims.values.contains(id) {
                state.pendingClaims = state.pendingClaims.filter { $0.value != id }
            }
            if let folded = state.nickByID.removeValue(forKey: id), let entry = state.byNick.removeValue(forKey: folded) {
                if let identity = entry.identity { state.remember(identity, at: ServerContext.format(Date())) }
                if entry.identity?.remote == nil { server.cluster?.release(folded) }
            }

        case let .notice(target, line):
            guard let identity = state.byNick[IRCCaseMapping.fold(target)]?.identity else { return }
            identity.send(line)
            server.counters.messagesRelayed.add(1, ordering: .relaxed)

        case .request:
            preconditionFailure("NickRegistry: a request is answered by answer(_:from:replyTo:server:state:)")
        }
    }

    /// Gives `nick` to `id` (free here, and in the cluster when there is one), freeing its old one.
    private static func accept(_ nick: String, id: UInt64, replyTo: ActorRef<SessionMessage>, server: ServerContext, state: RegistryState) {
        let folded = IRCCaseMapping.fold(nick)
        var identity: ClientIdentity?
        var channels: [String: String] = [:]
        if let old = state.nickByID[id], old != folded, let entry = state.byNick.removeValue(forKey: old) {
            identity = entry.identity
            channels = entry.channels
            server.cluster?.release(old)
        } else if let entry = state.byNick[folded] {
            identity = entry.identity
        }
        identity?.nick = nick
        if channels.isEmpty { channels = state.byNick[folded]?.channels ?? [:] }
        state.byNick[folded] = RegistryState.Entry(id: id, nick: nick, identity: identity, channels: channels)
        state.nickByID[id] = folded
        replyTo.tell(.nickResult(nick: nick, accepted: true))
    }

    /// Answers a client's request: its replies to `from`, then `replyTo`.
    private static func answer(_ request: RegistryRequest, from: ClientIdentity, replyTo: ReplyTo,
                               server: ServerContext, state: RegistryState) -> Answered {
        let replies = server.replies
        switch request {
        case let .privmsg(target, line):
            guard let identity = state.byNick[IRCCaseMapping.fold(target)]?.identity else {
                from.send(replies.numeric(Numeric.noSuchNick, from.nick, target, "No such nick/channel"))
                return replyTo.answered()
            }
            identity.send(line)
            server.counters.messagesRelayed.add(1, ordering: .relaxed)
            if let away = identity.away {
                from.send(replies.numeric(Numeric.away, from.nick, identity.nick, away))
            }

        case let .whois(nick):
            guard let entry = state.byNick[IRCCaseMapping.fold(nick)], let target = entry.identity else {
                from.send(replies.numeric(Numeric.noSuchNick, from.nick, nick, "No such nick/channel"))
                from.send(replies.numeric(Numeric.endOfWhois, from.nick, nick, "End of /WHOIS list"))
                return replyTo.answered()
            }
            let serverName = server.configuration.serverName
            from.send(replies.numeric(Numeric.whoisUser, from.nick, target.nick, target.user, target.host, "*", target.realName))
            if !entry.channels.isEmpty {
                from.send(replies.numeric(Numeric.whoisChannels, from.nick, target.nick, entry.channels.values.sorted().joined(separator: " ")))
            }
            from.send(replies.numeric(Numeric.whoisServer, from.nick, target.nick, target.remote?.node.name ?? serverName,
                                      server.configuration.networkName))
            if target.isOperator {
                from.send(replies.numeric(Numeric.whoisOperator, from.nick, target.nick, "is an IRC operator"))
            }
            if let away = target.away {
                from.send(replies.numeric(Numeric.away, from.nick, target.nick, away))
            }
            from.send(replies.numeric(Numeric.endOfWhois, from.nick, target.nick, "End of /WHOIS list"))

        case let .who(mask, operatorsOnly):
            let folded = IRCCaseMapping.fold(mask)
            if let exact = state.byNick[folded]?.identity {
                if !operatorsOnly || exact.isOperator {
                    from.send(whoReply(exact, channel: "*", status: "", to: from, replies: replies))
                }
            } else {
                let pattern = WildcardMask(mask)
                let mine = state.nickByID[from.id].flatMap { state.byNick[$0]?.channels } ?? [:]
                for entry in state.byNick.values {
                    guard let user = entry.identity else { continue }
                    // An invisible user is listed only to itself and to those sharing a channel.
                    if user.isInvisible && user.id != from.id && !entry.channels.keys.contains(where: { mine[$0] != nil }) {
                        continue
                    }
                    if operatorsOnly && !user.isOperator { continue }
                    if pattern.matches(user.nick) || pattern.matches(user.host) || pattern.matches(user.realName)
                        || pattern.matches(server.configuration.serverName) || pattern.matches(user.user) {
                        from.send(whoReply(user, channel: "*", status: "", to: from, replies: replies))
                    }
                }
            }
            from.send(replies.numeric(Numeric.endOfWho, from.nick, mask, "End of /WHO list"))

        case let .ison(nicks):
            let online = nicks.compactMap { state.byNick[IRCCaseMapping.fold($0)]?.identity?.nick }
            from.send(replies.numeric(Numeric.ison, from.nick, online.joined(separator: " ")))

        case let .userhost(nicks):
            let found = nicks.prefix(5).compactMap { nick -> String? in
                guard let user = state.byNick[IRCCaseMapping.fold(nick)]?.identity else { return nil }
                return "\(user.nick)\(user.isOperator ? "*" : "")=\(user.away == nil ? "+" : "-")\(user.user)@\(user.host)"
            }
            from.send(replies.numeric(Numeric.userhost, from.nick, found.joined(separator: " ")))

        case let .kill(nick, reason):
            guard let target = state.byNick[IRCCaseMapping.fold(nick)]?.identity else {
                from.send(replies.numeric(Numeric.noSuchNick, from.nick, nick, "No such nick/channel"))
                return replyTo.answered()
            }
            target.session.tell(.killed(by: from.nick, reason: reason))

        case let .invite(nick, channel):
            guard let target = state.byNick[IRCCaseMapping.fold(nick)]?.identity else {
                from.send(replies.numeric(Numeric.noSuchNick, from.nick, nick, "No such nick/channel"))
                return replyTo.answered()
            }
            return replyTo.handOn { channel.tell(.request(.invitee(target), from: from, replyTo: $0)) }

        case let .whowas(nick, count):
            let folded = IRCCaseMapping.fold(nick)
            let matches = state.history.reversed().filter { IRCCaseMapping.fold($0.nick) == folded }
            let shown = count > 0 ? Array(matches.prefix(count)) : matches
            if shown.isEmpty {
                from.send(replies.numeric(Numeric.wasNoSuchNick, from.nick, nick, "There was no such nickname"))
            }
            for user in shown {
                from.send(replies.numeric(Numeric.whowasUser, from.nick, user.nick, user.user, user.host, "*", user.realName))
                from.send(replies.numeric(Numeric.whoisServer, from.nick, user.nick, server.configuration.serverName, user.leftAt))
            }
            from.send(replies.numeric(Numeric.endOfWhowas, from.nick, nick, "End of WHOWAS"))
        }
        return replyTo.answered()
    }

    /// One 352 line: `<channel> <user> <host> <server> <nick> <H|G>[*][@|+] :0 <realname>`.
    static func whoReply(_ user: ClientIdentity, channel: String, status: String, to requester: ClientIdentity, replies: Replies) -> [UInt8] {
        let flags = (user.away == nil ? "H" : "G") + (user.isOperator ? "*" : "") + status
        return replies.numeric(Numeric.whoReply, requester.nick,
                               channel, user.user, user.host, replies.serverName, user.nick, flags, "0 \(user.realName)")
    }
}
