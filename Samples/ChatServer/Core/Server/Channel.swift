import Foundation
import Mailbox

/// What a channel's actor is asked. Every request carries the requester's identity: the channel
/// answers it directly on the requester's connection (numerics), and fans lines out to its members.
enum ChannelMessage: Sendable {
    /// A client's request (from the client's session, from the directory, or from the registry):
    /// the channel writes the replies to `from`'s connection, then answers `replyTo` (or hands it on).
    case request(ChannelRequest, from: ClientIdentity, replyTo: ReplyTo)
    /// `NOTICE` to the channel: relayed as a PRIVMSG is, never answered, not even refused.
    case notice(line: [UInt8], from: ClientIdentity)
    /// The member quit: `line` goes to each other member not yet claimed in `once`.
    case quit(id: UInt64, line: [UInt8], once: DeliverOnce)
    /// The member's nick changed: `line` goes to each other member not yet claimed in `once`.
    case nickChanged(ClientIdentity, line: [UInt8], once: DeliverOnce)
    /// The member's record changed (away, invisible): for WHO and NAMES.
    case memberUpdated(ClientIdentity)
    /// A member's session terminated (death watch, a system message).
    case memberTerminated(id: UInt64)
    /// After `memberTerminated`, behind the messages the member sent before it terminated.
    case memberGone(id: UInt64)
    /// Another node changed the channel (cluster): applied here, its line shown to this node's
    /// members. Comes through the directory, from the node relay.
    case replica(ChannelReplicaEvent)
    /// A node came up (cluster): send it the channel as this node sees it.
    case sendState(to: ClusterNode)
    /// A message the directory forwarded (counted, so that the directory closes an empty
    /// channel only when nothing it forwarded is still on its way).
    indirect case forwarded(ChannelMessage)
}

/// A client's request to a channel (`ChannelMessage.request`). The client's session waits for
/// its answer before it runs the client's next command, so that the client sees the replies to
/// its commands in the order it sent them.
enum ChannelRequest: Sendable {
    /// `JOIN` with `key`, from the directory.
    case join(key: String?)
    /// `PRIVMSG` to the channel; `line` is already serialized, once, for every member.
    case privmsg(line: [UInt8])
    /// `PART`, echoed as `line`; with no line it comes from a non-member, through the directory,
    /// and is answered with 442.
    case part(line: [UInt8])
    case topic(String?)
    case names
    case who(operatorsOnly: Bool)
    case mode([String])
    case kick(nicks: [String], reason: String?)
    case invite(nick: String)
    /// From the registry, for an `invite`: `invitee` exists; record the invitation and tell both
    /// sides. (Boxed: a whole identity would make every request as large as two.)
    indirect case invitee(ClientIdentity)

    /// The answer the session waits for: a PRIVMSG's, or a command's.
    var answerKind: ReplyTo.Kind {
        if case .privmsg = self { return .message }
        return .command
    }
}

/// A channel's state: kept outside the behavior so that a restart after a failure keeps the
/// members, modes and topic (the failing request is dropped). Used only by the channel's actor.
final class ChannelState {
    struct Member {
        var identity: ClientIdentity
        var isOperator: Bool
        var hasVoice: Bool

        var prefixSymbol: String { isOperator ? "@" : hasVoice ? "+" : "" }
    }

    struct Ban {
        let mask: WildcardMask
        let setBy: String
        let setAt: Int
    }

    let name: String
    let key: String
    var createdAt: Int
    /// Members, this node's and (cluster) other nodes'; `index` maps a connection id (a local
    /// id for a remote user) to its position.
    var members: [Member] = []
    var index: [UInt64: Int] = [:]
    /// This node's members' connections and ids: the fan-out loop reads these instead of
    /// copying each member's whole record. `outputIndex` maps an id to its position.
    var outputs: [(id: UInt64, connection: any ClientConnection)] = []
    var outputIndex: [UInt64: Int] = [:]
    /// Other nodes with members here, and how many: a line goes once to each (cluster).
    var remoteNodes: [ClusterNode: Int] = [:]
    var topic: (text: String, setBy: String, setAt: Int)?
    /// When the topic and the modes were last set (several nodes: the later change wins).
    var topicStamp = ChannelStamp.zero
    var modesStamp = ChannelStamp.zero
    var inviteOnly = false, moderated = false, noExternal = true, topicLocked = true
    /// +s: hidden from LIST, NAMES and WHO of non-members.
    var secret = false
    var channelKey: String?
    var limit: Int?
    var bans: [Ban] = []
    /// Folded nicks invited (cleared when they join).
    var invited: Set<String> = []
    /// Requests received from the directory: the directory closes the channel only when it has
    /// forwarded nothing since the channel reported itself empty.
    var fromDirectory = 0
    /// Member count, topic and +s last reported to the directory (for LIST).
    var reported: (count: Int, topic: String?, secret: Bool) = (0, nil, false)

    init(name: String, key: String, createdAt: Int) {
        self.name = name
        self.key = key
        self.createdAt = createdAt
    }

    func member(named nick: String) -> Int? {
        let folded = IRCCaseMapping.fold(nick)
        return members.firstIndex { IRCCaseMapping.fold($0.identity.nick) == folded }
    }

    func add(_ member: Member) {
        index[member.identity.id] = members.count
        members.append(member)
        if let remote = member.identity.remote {
            remoteNodes[remote.node, default: 0] += 1
        } else {
            outputIndex[member.identity.id] = outputs.count
            outputs.append((member.identity.id, member.identity.connection))
        }
    }

    /// Removes a member; the last one takes its place (order is not part of IRC's contract).
    @discardableResult
    func remove(id: UInt64) -> Member? {
        guard let position = index.removeValue(forKey: id) else { return nil }
        let removed = members[position]
        let last = members.removeLast()
        if position < members.count {
            members[position] = last
            index[last.identity.id] = position
        }
        if let remote = removed.identity.remote {
            let left = remoteNodes[remote.node, default: 1] - 1
            remoteNodes[remote.node] = left > 0 ? left : nil
        } else if let output = outputIndex.removeValue(forKey: id) {
            let lastOutput = outputs.removeLast()
            if output < outputs.count {
                outputs[output] = lastOutput
                outputIndex[lastOutput.id] = output
            }
        }
        return removed
    }

    /// The modes as they travel between nodes.
    var modesRecord: ChannelModesRecord {
        ChannelModesRecord(inviteOnly: inviteOnly, moderated: moderated, noExternal: noExternal, topicLocked: topicLocked,
                           secret: secret, key: channelKey, limit: limit,
                           bans: bans.map { ChannelModesRecord.Ban(mask: $0.mask.pattern, setBy: $0.setBy, setAt: $0.setAt) },
                           stamp: modesStamp)
    }

    /// Takes another node's modes (last writer wins).
    func adopt(_ modes: ChannelModesRecord) {
        inviteOnly = modes.inviteOnly
        moderated = modes.moderated
        noExternal = modes.noExternal
        topicLocked = modes.topicLocked
        secret = modes.secret
        channelKey = modes.key
        limit = modes.limit
        bans = modes.bans.map { Ban(mask: WildcardMask($0.mask), setBy: $0.setBy, setAt: $0.setAt) }
        modesStamp = modes.stamp
    }

    var topicRecord: ChannelTopicRecord? {
        topic.map { ChannelTopicRecord(text: $0.text, setBy: $0.setBy, setAt: $0.setAt) }
    }

    var modeString: String {
        var flags = "+"
        var params: [String] = []
        if inviteOnly { flags += "i" }
        if let channelKey { flags += "k"; params.append(channelKey) }
        if let limit { flags += "l"; params.append(String(limit)) }
        if moderated { flags += "m" }
        if secret { flags += "s" }
        if noExternal { flags += "n" }
        if topicLocked { flags += "t" }
        return ([flags] + params).joined(separator: " ")
    }
}

/// One actor per channel: its members, modes, topic, bans and invitations.
final class ChannelActor: AbstractBehavior<ChannelMessage> {
    private let server: ServerContext
    private let state: ChannelState
    private let directory: ActorRef<DirectoryMessage>
    private let registry: ActorRef<RegistryMessage>
    private var replies: Replies { server.replies }

    init(context: ActorContext<ChannelMessage>, server: ServerContext, state: ChannelState,
         directory: ActorRef<DirectoryMessage>, registry: ActorRef<RegistryMessage>) {
        self.server = server
        self.state = state
        self.directory = directory
        self.registry = registry
        super.init(context: context)
        // After a restart, watch the members again (the watches ended with the failed run).
        for member in state.members where member.identity.remote == nil {
            context.watch(member.identity.session, with: .memberTerminated(id: member.identity.id))
        }
    }

    /// The behavior of a channel, restarted in place (state kept) after a failure.
    static func behavior(server: ServerContext, state: ChannelState,
                         directory: ActorRef<DirectoryMessage>, registry: ActorRef<RegistryMessage>) -> Behavior<ChannelMessage> {
        Behavior<ChannelMessage>.supervise(.object { context in
            ChannelActor(context: context, server: server, state: state, directory: directory, registry: registry)
        }).onFailure(.restart(limit: 10, within: .seconds(60)))
    }

    override func receive(_ message: ChannelMessage) throws -> Behavior<ChannelMessage> {
        try handle(message)
        reportChanges()
        return .same
    }

    private func handle(_ message: ChannelMessage) throws {
        switch message {
        case let .forwarded(inner):
            state.fromDirectory += 1
            try handle(inner)
        case let .request(request, from, replyTo):
            try replyTo.answering { try answer(request, from: from, replyTo: $0) }
        case let .notice(line, from):
            try server.checkFault("channel:message")
            relay(line, isNotice: true, from: from)
        case let .quit(id, line, once):
            guard let member = removeMember(id: id) else { break }
            context.unwatch(member.identity.session)
            for output in state.outputs where once.claim(output.id) {
                output.connection.send(line)
            }
        case let .nickChanged(identity, line, once):
            guard let position = state.index[identity.id] else { break }
            state.members[position].identity = identity
            for output in state.outputs where once.claim(output.id) {
                output.connection.send(line)
            }
        case let .memberUpdated(identity):
            if let position = state.index[identity.id] { state.members[position].identity = identity }
        case let .memberTerminated(id):
            // Death watch overtakes the session's last messages (its PRIVMSGs, its QUIT): look
            // again once everything queued before now has been handled.
            context.myself.tell(.memberGone(id: id))
        case let .memberGone(id):
            // The session ended without leaving (it failed in a way that skipped its clean-up).
            guard let member = removeMember(id: id) else { break }
            let line = IRCMessage(prefix: member.identity.prefix, command: "QUIT", params: ["Connection closed"]).serialized(alwaysTrailing: true)
            broadcast(line)
        case let .replica(event):
            applyReplica(event)
        case let .sendState(node):
            sendState(to: node)
        }
    }

    /// Answers a client's request: its replies to `from`, then `replyTo`.
    private func answer(_ request: ChannelRequest, from: ClientIdentity, replyTo: ReplyTo) throws -> Answered {
        switch request {
        case let .join(key):
            try server.checkFault("channel:join")
            join(from, key: key)
        case let .privmsg(line):
            try server.checkFault("channel:message")
            relay(line, isNotice: false, from: from)
        case let .part(line):
            guard removeMember(id: from.id) != nil else {
                from.send(replies.numeric(Numeric.notOnChannel, from.nick, state.name, "You're not on that channel"))
                break
            }
            context.unwatch(from.session)
            from.send(line)
            broadcast(line)
            if let cluster = server.cluster {
                cluster.broadcast(.channel(name: state.name, .parted(cluster.ref(of: from), line: String(decoding: line, as: UTF8.self))))
            }
        case let .topic(text):
            topic(text, from: from)
        case .names:
            names(to: from)
        case let .who(operatorsOnly):
            let isMember = state.index[from.id] != nil
            for member in state.members where (isMember || !state.secret) && (!member.identity.isInvisible || isMember)
                && (!operatorsOnly || member.identity.isOperator) {
                from.send(NickRegistry.whoReply(member.identity, channel: state.name, status: member.prefixSymbol, to: from, replies: replies))
            }
            from.send(replies.numeric(Numeric.endOfWho, from.nick, state.name, "End of /WHO list"))
        case let .mode(params):
            try server.checkFault("channel:mode")
            mode(params, from: from)
        case let .kick(nicks, reason):
            kick(nicks, reason: reason, from: from)
        case let .invite(nick):
            return invite(nick, from: from, replyTo: replyTo)
        case let .invitee(target):
            state.invited.insert(IRCCaseMapping.fold(target.nick))
            target.send(IRCMessage(prefix: from.prefix, command: "INVITE", params: [target.nick, state.name]).serialized())
            from.send(replies.numeric(Numeric.inviting, from.nick, target.nick, state.name))
            if let away = target.away {
                from.send(replies.numeric(Numeric.away, from.nick, target.nick, away))
            }
        }
        return replyTo.answered()
    }

    override func receiveLifecycle(_ event: LifecycleEvent) throws -> Behavior<ChannelMessage> {
        switch event {
        case .postStop:
            // Closed by the directory (empty), or stopped after too many failures: members that
            // are left learn that they are no longer in it.
            for member in state.members {
                registry.tell(.membership(id: member.identity.id, channel: state.name, status: nil))
                // A user of another node is told by its own node's copy of the channel.
                guard member.identity.remote == nil else { continue }
                member.identity.send(IRCMessage(prefix: replies.serverName, command: "KICK",
                                                params: [state.name, member.identity.nick, "Channel closed"]).serialized(alwaysTrailing: true))
                member.identity.session.tell(.leftChannel(key: state.key))
            }
            return .same
        case .terminated:
            return .same
        default:
            return .unhandled
        }
    }

    // MARK: Requests

    private func join(_ identity: ClientIdentity, key: String?) {
        if state.index[identity.id] != nil { return }
        let folded = IRCCaseMapping.fold(identity.nick)
        let invited = state.invited.contains(folded)
        let isFirst = state.members.isEmpty
        if !isFirst {
            if let limit = state.limit, state.members.count >= limit {
                return identity.send(replies.numeric(Numeric.channelIsFull, identity.nick, state.name, "Cannot join channel (+l)"))
            }
            if state.inviteOnly && !invited {
                return identity.send(replies.numeric(Numeric.inviteOnlyChan, identity.nick, state.name, "Cannot join channel (+i)"))
            }
            if !invited && state.bans.contains(where: { $0.mask.matches(identity.prefix) }) {
                return identity.send(replies.numeric(Numeric.bannedFromChan, identity.nick, state.name, "Cannot join channel (+b)"))
            }
            if let channelKey = state.channelKey, key != channelKey {
                return identity.send(replies.numeric(Numeric.badChannelKey, identity.nick, state.name, "Cannot join channel (+k)"))
            }
        }
        state.invited.remove(folded)
        state.add(ChannelState.Member(identity: identity, isOperator: isFirst, hasVoice: false))
        context.watch(identity.session, with: .memberTerminated(id: identity.id))
        broadcast(IRCMessage(prefix: identity.prefix, command: "JOIN", params: [state.name]).serialized())
        server.cluster?.broadcast(.channel(name: state.name, .joined(ChatUserRecord(identity), isOperator: isFirst)))
        identity.session.tell(.joinedChannel(key: state.key, name: state.name, channel: context.myself))
        registry.tell(.membership(id: identity.id, channel: state.name, status: isFirst ? "@" : ""))
        if let topic = state.topic {
            identity.send(replies.numeric(Numeric.topic, identity.nick, state.name, topic.text))
            identity.send(replies.numeric(Numeric.topicWhoTime, identity.nick, state.name, topic.setBy, String(topic.setAt)))
        }
        names(to: identity)
    }

    private func relay(_ line: [UInt8], isNotice: Bool, from: ClientIdentity) {
        let position = state.index[from.id]
        let privileged = position.map { state.members[$0].isOperator || state.members[$0].hasVoice } ?? false
        func refuse(_ why: String) {
            if !isNotice { from.send(replies.numeric(Numeric.cannotSendToChan, from.nick, state.name, "Cannot send to channel (\(why))")) }
        }
        if position == nil && state.noExternal { return refuse("+n") }
        if state.moderated && !privileged { return refuse("+m") }
        if !privileged && !state.bans.isEmpty && state.bans.contains(where: { $0.mask.matches(from.prefix) }) {
            return refuse("+b")
        }
        var delivered = 0
        for output in state.outputs where output.id != from.id {
            output.connection.send(line)
            delivered += 1
        }
        server.counters.messagesRelayed.add(delivered, ordering: .relaxed)
        if !state.remoteNodes.isEmpty, let cluster = server.cluster {
            // One message per node with members here, fanned out there.
            let sync = ChatSync.channel(name: state.name, .line(String(decoding: line, as: UTF8.self)))
            for node in state.remoteNodes.keys { cluster.send(sync, to: node) }
        }
    }

    private func topic(_ text: String?, from: ClientIdentity) {
        let member = state.index[from.id].map { state.members[$0] }
        guard let text else {
            if let topic = state.topic {
                from.send(replies.numeric(Numeric.topic, from.nick, state.name, topic.text))
                from.send(replies.numeric(Numeric.topicWhoTime, from.nick, state.name, topic.setBy, String(topic.setAt)))
            } else {
                from.send(replies.numeric(Numeric.noTopic, from.nick, state.name, "No topic is set"))
            }
            return
        }
        guard let member else {
            return from.send(replies.numeric(Numeric.notOnChannel, from.nick, state.name, "You're not on that channel"))
        }
        if state.topicLocked && !member.isOperator {
            return from.send(replies.numeric(Numeric.chanOpPrivsNeeded, from.nick, state.name, "You're not channel operator"))
        }
        let topicText = text.truncated(toBytes: server.configuration.topicLength)
        state.topic = topicText.isEmpty ? nil : (topicText, from.prefix, now)
        let line = IRCMessage(prefix: from.prefix, command: "TOPIC", params: [state.name, topicText]).serialized(alwaysTrailing: true)
        broadcast(line)
        if let cluster = server.cluster {
            state.topicStamp = stamp(cluster)
            cluster.broadcast(.channel(name: state.name, .topic(state.topicRecord, stamp: state.topicStamp, line: String(decoding: line, as: UTF8.self))))
        }
    }

    private func names(to identity: ClientIdentity) {
        let isMember = state.index[identity.id] != nil
        guard isMember || !state.secret else {
            return identity.send(replies.numeric(Numeric.endOfNames, identity.nick, state.name, "End of /NAMES list"))
        }
        var batch: [String] = []
        var length = 0
        // 353 lines stay under 512 bytes: the fixed part is at most ~100 bytes.
        let budget = 400 - state.name.utf8.count - identity.nick.utf8.count
        func flush() {
            guard !batch.isEmpty else { return }
            identity.send(replies.numeric(Numeric.namReply, identity.nick, state.secret ? "@" : "=", state.name, batch.joined(separator: " ")))
            batch.removeAll(keepingCapacity: true)
            length = 0
        }
        for member in state.members where isMember || !member.identity.isInvisible {
            let entry = member.prefixSymbol + member.identity.nick
            if length + entry.utf8.count + 1 > budget { flush() }
            batch.append(entry)
            length += entry.utf8.count + 1
        }
        flush()
        identity.send(replies.numeric(Numeric.endOfNames, identity.nick, state.name, "End of /NAMES list"))
    }

    private func kick(_ nicks: [String], reason: String?, from: ClientIdentity) {
        guard let kicker = state.index[from.id].map({ state.members[$0] }) else {
            return from.send(replies.numeric(Numeric.notOnChannel, from.nick, state.name, "You're not on that channel"))
        }
        guard kicker.isOperator else {
            return from.send(replies.numeric(Numeric.chanOpPrivsNeeded, from.nick, state.name, "You're not channel operator"))
        }
        for nick in nicks {
            guard let position = state.member(named: nick) else {
                from.send(replies.numeric(Numeric.userNotInChannel, from.nick, nick, state.name, "They aren't on that channel"))
                continue
            }
            let target = state.members[position].identity
            let text = (reason ?? from.nick).truncated(toBytes: server.configuration.kickLength)
            let line = IRCMessage(prefix: from.prefix, command: "KICK", params: [state.name, target.nick, text]).serialized(alwaysTrailing: true)
            broadcast(line)
            if let cluster = server.cluster {
                cluster.broadcast(.channel(name: state.name, .kicked(cluster.ref(of: target), line: String(decoding: line, as: UTF8.self))))
            }
            removeMember(id: target.id)
            context.unwatch(target.session)
            target.session.tell(.leftChannel(key: state.key))
        }
    }

    /// Checks the inviter, then hands the request on to the registry, which finds the nick and
    /// hands it back (`invitee`), or answers 401.
    private func invite(_ nick: String, from: ClientIdentity, replyTo: ReplyTo) -> Answered {
        guard let inviter = state.index[from.id].map({ state.members[$0] }) else {
            from.send(replies.numeric(Numeric.notOnChannel, from.nick, state.name, "You're not on that channel"))
            return replyTo.answered()
        }
        if state.inviteOnly && !inviter.isOperator {
            from.send(replies.numeric(Numeric.chanOpPrivsNeeded, from.nick, state.name, "You're not channel operator"))
            return replyTo.answered()
        }
        if state.member(named: nick) != nil {
            from.send(replies.numeric(Numeric.userOnChannel, from.nick, nick, state.name, "is already on channel"))
            return replyTo.answered()
        }
        // Recorded only once the registry has found the nick (`invitee`): inviting a nick nobody
        // holds must not let whoever takes it later in.
        let channel = context.myself
        return replyTo.handOn { registry.tell(.request(.invite(nick: nick, channel: channel), from: from, replyTo: $0)) }
    }

    // MARK: Modes

    private func mode(_ params: [String], from: ClientIdentity) {
        let member = state.index[from.id].map { state.members[$0] }
        guard let modeText = params.first else {
            from.send(replies.numeric(Numeric.channelModeIs, from.nick, params: [state.name] + state.modeString.split(separator: " ").map(String.init)))
            from.send(replies.numeric(Numeric.creationTime, from.nick, state.name, String(state.createdAt)))
            return
        }
        var arguments = params.dropFirst().makeIterator()
        var adding = true
        var applied: [(sign: Bool, mode: Character, argument: String?)] = []
        var needsOperator = false
        var listedBans = false
        var statuses: [ChannelMemberStatus] = []
        var changes = 0
        for flag in modeText {
            switch flag {
            case "+": adding = true; continue
            case "-": adding = false; continue
            default: break
            }
            if flag == "b" {
                guard let mask = arguments.next() else {
                    if !listedBans {
                        listedBans = true
                        for ban in state.bans {
                            from.send(replies.numeric(Numeric.banList, from.nick, state.name, ban.mask.pattern, ban.setBy, String(ban.setAt)))
                        }
                        from.send(replies.numeric(Numeric.endOfBanList, from.nick, state.name, "End of channel ban list"))
                    }
                    continue
                }
                needsOperator = true
                guard member?.isOperator == true else { continue }
                changes += 1
                guard changes <= 4 else { continue }
                let normalized = WildcardMask.normalizedBanMask(mask)
                let folded = IRCCaseMapping.fold(normalized)
                if adding {
                    guard !state.bans.contains(where: { IRCCaseMapping.fold($0.mask.pattern) == folded }) else { continue }
                    guard state.bans.count < server.configuration.maxBans else {
                        from.send(replies.numeric(Numeric.banListFull, from.nick, state.name, "b", "Channel ban list is full"))
                        continue
                    }
                    state.bans.append(ChannelState.Ban(mask: WildcardMask(normalized), setBy: from.prefix, setAt: now))
                } else {
                    guard let position = state.bans.firstIndex(where: { IRCCaseMapping.fold($0.mask.pattern) == folded }) else { continue }
                    state.bans.remove(at: position)
                }
                applied.append((adding, "b", normalized))
                continue
            }
            guard "imnstklov".contains(flag) else {
                from.send(replies.numeric(Numeric.unknownMode, from.nick, String(flag), "is unknown mode char to me for \(state.name)"))
                continue
            }
            needsOperator = true
            let takesArgument = flag == "o" || flag == "v" || flag == "k" || (flag == "l" && adding)
            guard member?.isOperator == true else {
                if takesArgument { _ = arguments.next() }
                continue
            }
            // ISUPPORT MODES: at most 4 changes with an argument per command.
            if takesArgument {
                changes += 1
                guard changes <= 4 else { _ = arguments.next(); continue }
            }
            switch flag {
            case "i": if state.inviteOnly != adding { state.inviteOnly = adding; applied.append((adding, flag, nil)) }
            case "s": if state.secret != adding { state.secret = adding; applied.append((adding, flag, nil)) }
            case "m": if state.moderated != adding { state.moderated = adding; applied.append((adding, flag, nil)) }
            case "n": if state.noExternal != adding { state.noExternal = adding; applied.append((adding, flag, nil)) }
            case "t": if state.topicLocked != adding { state.topicLocked = adding; applied.append((adding, flag, nil)) }
            case "k":
                if adding {
                    guard let key = arguments.next() else {
                        from.send(replies.numeric(Numeric.needMoreParams, from.nick, "MODE", "Not enough parameters"))
                        continue
                    }
                    guard !key.isEmpty, !key.contains(Character(" ")), !key.contains(Character(",")), key.utf8.count <= 23 else {
                        from.send(replies.numeric(Numeric.invalidModeParam, from.nick, state.name, "k", "*", "Invalid key"))
                        continue
                    }
                    if state.channelKey != nil {
                        from.send(replies.numeric(Numeric.keySet, from.nick, state.name, "Channel key already set"))
                        continue
                    }
                    state.channelKey = key
                    applied.append((true, "k", key))
                } else {
                    _ = arguments.next()
                    if let key = state.channelKey { state.channelKey = nil; applied.append((false, "k", key)) }
                }
            case "l":
                if adding {
                    guard let text = arguments.next() else {
                        from.send(replies.numeric(Numeric.needMoreParams, from.nick, "MODE", "Not enough parameters"))
                        continue
                    }
                    guard let limit = Int(text), limit > 0 else {
                        from.send(replies.numeric(Numeric.invalidModeParam, from.nick, state.name, "l", text, "Invalid limit"))
                        continue
                    }
                    state.limit = limit
                    applied.append((true, "l", String(limit)))
                } else if state.limit != nil {
                    state.limit = nil
                    applied.append((false, "l", nil))
                }
            case "o", "v":
                guard let nick = arguments.next() else {
                    from.send(replies.numeric(Numeric.needMoreParams, from.nick, "MODE", "Not enough parameters"))
                    continue
                }
                guard let position = state.member(named: nick) else {
                    from.send(replies.numeric(Numeric.userNotInChannel, from.nick, nick, state.name, "They aren't on that channel"))
                    continue
                }
                if flag == "o" {
                    guard state.members[position].isOperator != adding else { continue }
                    state.members[position].isOperator = adding
                } else {
                    guard state.members[position].hasVoice != adding else { continue }
                    state.members[position].hasVoice = adding
                }
                applied.append((adding, flag, state.members[position].identity.nick))
                if let cluster = server.cluster {
                    let member = state.members[position]
                    statuses.append(ChannelMemberStatus(user: cluster.ref(of: member.identity), isOperator: member.isOperator, hasVoice: member.hasVoice))
                }
                registry.tell(.membership(id: state.members[position].identity.id, channel: state.name, status: state.members[position].prefixSymbol))
            default:
                break
            }
        }
        if needsOperator && member?.isOperator != true {
            if member == nil {
                from.send(replies.numeric(Numeric.notOnChannel, from.nick, state.name, "You're not on that channel"))
            } else {
                from.send(replies.numeric(Numeric.chanOpPrivsNeeded, from.nick, state.name, "You're not channel operator"))
            }
        }
        guard !applied.isEmpty else { return }
        var text = ""
        var sign: Bool?
        var changeArguments: [String] = []
        for change in applied {
            if sign != change.sign { text += change.sign ? "+" : "-"; sign = change.sign }
            text.append(change.mode)
            if let argument = change.argument { changeArguments.append(argument) }
        }
        let line = IRCMessage(prefix: from.prefix, command: "MODE", params: [state.name, text] + changeArguments).serialized()
        broadcast(line)
        if let cluster = server.cluster {
            state.modesStamp = stamp(cluster)
            cluster.broadcast(.channel(name: state.name, .modes(state.modesRecord, statuses: statuses, line: String(decoding: line, as: UTF8.self))))
        }
    }

    // MARK: Helpers

    /// Removes a member and tells the registry (WHOIS lists the channels a client is in).
    @discardableResult
    private func removeMember(id: UInt64) -> ChannelState.Member? {
        guard let member = state.remove(id: id) else { return nil }
        registry.tell(.membership(id: id, channel: state.name, status: nil))
        return member
    }

    private var now: Int { Int(context.scheduler.currentDate.timeIntervalSince1970) }

    /// A stamp for a change this node makes now (never below the last one it applied).
    private func stamp(_ cluster: any ChatClusterLink) -> ChannelStamp {
        let millis = Int64(context.scheduler.currentDate.timeIntervalSince1970 * 1000)
        return ChannelStamp(at: max(millis, max(state.topicStamp.at, state.modesStamp.at) + 1), node: cluster.node.name)
    }

    private func broadcast(_ line: [UInt8]) {
        for output in state.outputs { output.connection.send(line) }
    }

    /// Tells the directory what LIST shows, and that the channel is empty when it is.
    private func reportChanges() {
        let topic = state.topic?.text
        if state.members.isEmpty || state.reported.count != state.members.count || state.reported.topic != topic
            || state.reported.secret != state.secret {
            state.reported = (state.members.count, topic, state.secret)
            directory.tell(.summary(key: state.key, members: state.members.count, topic: topic, secret: state.secret,
                                    fromDirectory: state.fromDirectory))
        }
    }
}

/// A change another node made to a channel, as this node's relay hands it to this node's copy
/// of the channel: users named by their local ids (a remote user's is the relay's), lines as
/// this node's members see them.
enum ChannelReplicaEvent: Sendable {
    case joined(ClientIdentity, isOperator: Bool)
    case parted(id: UInt64, line: [UInt8])
    case kicked(id: UInt64, line: [UInt8])
    case topic(ChannelTopicRecord?, stamp: ChannelStamp, line: [UInt8])
    case modes(ChannelModesRecord, statuses: [(id: UInt64, isOperator: Bool, hasVoice: Bool)], line: [UInt8])
    case line([UInt8])
    /// A node's whole view (it just came up, or this node did): its members are added without
    /// a JOIN line; its topic and modes are taken if they are later than this copy's.
    case state(modes: ChannelModesRecord, topic: ChannelTopicRecord?, topicStamp: ChannelStamp, createdAt: Int,
               members: [(identity: ClientIdentity, isOperator: Bool, hasVoice: Bool)])
}

// MARK: Several nodes

extension ChannelActor {
    /// Applies another node's change: no checks (the other node made them), this node's members
    /// see the line, the registry hears of memberships (WHOIS).
    fileprivate func applyReplica(_ event: ChannelReplicaEvent) {
        switch event {
        case let .joined(identity, isOperator):
            if let position = state.index[identity.id] {
                state.members[position].identity = identity
                return
            }
            state.invited.remove(IRCCaseMapping.fold(identity.nick))
            state.add(ChannelState.Member(identity: identity, isOperator: isOperator, hasVoice: false))
            broadcast(IRCMessage(prefix: identity.prefix, command: "JOIN", params: [state.name]).serialized())
            registry.tell(.membership(id: identity.id, channel: state.name, status: isOperator ? "@" : ""))
        case let .parted(id, line):
            guard removeMember(id: id) != nil else { return }
            broadcast(line)
        case let .kicked(id, line):
            guard let position = state.index[id] else { return }
            let target = state.members[position].identity
            broadcast(line)
            removeMember(id: id)
            if target.remote == nil {
                context.unwatch(target.session)
                target.session.tell(.leftChannel(key: state.key))
            }
        case let .topic(topic, stamp, line):
            // Every node shows the line; the later change is the topic on every node.
            if stamp >= state.topicStamp {
                state.topic = topic.map { ($0.text, $0.setBy, $0.setAt) }
                state.topicStamp = stamp
            }
            broadcast(line)
        case let .modes(modes, statuses, line):
            if modes.stamp >= state.modesStamp { state.adopt(modes) }
            for status in statuses {
                guard let position = state.index[status.id] else { continue }
                state.members[position].isOperator = status.isOperator
                state.members[position].hasVoice = status.hasVoice
                registry.tell(.membership(id: status.id, channel: state.name, status: state.members[position].prefixSymbol))
            }
            broadcast(line)
        case let .line(line):
            broadcast(line)
            server.counters.messagesRelayed.add(state.outputs.count, ordering: .relaxed)
        case let .state(modes, topic, topicStamp, createdAt, members):
            if modes.stamp > state.modesStamp { state.adopt(modes) }
            if topicStamp > state.topicStamp {
                state.topic = topic.map { ($0.text, $0.setBy, $0.setAt) }
                state.topicStamp = topicStamp
            }
            state.createdAt = min(state.createdAt, createdAt)
            for member in members where state.index[member.identity.id] == nil {
                state.add(ChannelState.Member(identity: member.identity, isOperator: member.isOperator, hasVoice: member.hasVoice))
                let status = member.isOperator ? "@" : member.hasVoice ? "+" : ""
                registry.tell(.membership(id: member.identity.id, channel: state.name, status: status))
            }
        }
    }

    /// Sends `node` this channel as this node sees it, with this node's own members.
    fileprivate func sendState(to node: ClusterNode) {
        guard let cluster = server.cluster, !state.outputs.isEmpty else { return }
        let members = state.members.compactMap { member -> ChannelSnapshotMember? in
            guard member.identity.remote == nil else { return nil }
            return ChannelSnapshotMember(user: ChatUserRecord(member.identity), isOperator: member.isOperator, hasVoice: member.hasVoice)
        }
        cluster.send(.channel(name: state.name, .state(modes: state.modesRecord, topic: state.topicRecord, topicStamp: state.topicStamp,
                                                       createdAt: state.createdAt, members: members)), to: node)
    }
}
