import Mailbox

/// What the channel directory is asked. It owns the channel namespace: it creates a channel's
/// actor on its first join and stops it when it is empty, and it routes requests about channels
/// a client is not a member of.
///
/// Sessions reach it only through these messages, so a server on several nodes can put a
/// cluster-aware directory (channels spanning nodes) behind the same ref.
enum DirectoryMessage: Sendable {
    /// A client's request: answered by the directory, or handed on with `replyTo` to the channel.
    case request(DirectoryRequest, from: ClientIdentity, replyTo: ReplyTo)
    /// `NOTICE` to channel `name` from a non-member: relayed by the channel if there is one.
    case notice(name: String, line: [UInt8], from: ClientIdentity)
    /// From a channel: its member count and topic (for LIST), and how many forwarded requests it
    /// has handled.
    case summary(key: String, members: Int, topic: String?, secret: Bool, fromDirectory: Int)
    /// A channel's actor terminated (after too many failures, or closed).
    case channelTerminated(key: String, channel: ActorRef<ChannelMessage>)
    /// From the node relay (cluster): another node changed channel `name`. A join or a node's
    /// view of the channel creates it here if need be; anything else about a channel this node
    /// does not have is dropped.
    case replica(name: String, ChannelReplicaEvent)
    /// From the node relay (cluster): `message` goes to every channel (a remote user's QUIT or
    /// NICK; channels it is not in ignore it).
    case allChannels(ChannelMessage)
    /// From the node relay (cluster): every channel with members of this node sends `node` its
    /// view.
    case sendState(to: ClusterNode)
}

/// A client's request to the channel directory (`DirectoryMessage.request`).
enum DirectoryRequest: Sendable {
    /// `JOIN`: the channel (created if need be) answers.
    case join(name: String, key: String?)
    /// A request about channel `name` from a non-member: the channel answers; when there is no
    /// such channel, the directory sends `ifMissing` to the client and answers.
    case channel(name: String, ChannelRequest, ifMissing: [UInt8])
    /// `LIST`; secret channels are shown only to their members (`memberOf`: folded names).
    case list(names: [String]?, memberOf: Set<String>)
}

/// The directory's state, kept across a restart of its actor.
final class DirectoryState {
    struct Entry {
        let name: String
        let channel: ActorRef<ChannelMessage>
        /// Requests forwarded to the channel so far.
        var forwarded = 0
        var members = 0
        var topic: String?
        var secret = false
    }

    /// Folded channel name → entry.
    var channels: [String: Entry] = [:]
}

enum ChannelDirectory {
    static func behavior(server: ServerContext, state: DirectoryState, registry: ActorRef<RegistryMessage>) -> Behavior<DirectoryMessage> {
        Behavior<DirectoryMessage>.supervise(.receive { context, message in
            if case let .request(request, from, replyTo) = message {
                try replyTo.answering { replyTo in
                    try server.checkFault("directory")
                    return try answer(request, from: from, replyTo: replyTo, context: context, server: server, state: state, registry: registry)
                }
            } else if case let .replica(name, event) = message {
                let folded = IRCCaseMapping.fold(name)
                switch event {
                case .joined, .state:
                    guard IRCNames.isValidChannel(name, maxLength: server.configuration.channelLength) else { return .same }
                    try createIfMissing(name, folded: folded, context: context, server: server, state: state, registry: registry)
                default:
                    guard state.channels[folded] != nil else { return .same }
                }
                forward(.replica(event), to: folded, state: state)
            } else {
                try server.checkFault("directory")
                record(message, context: context, server: server, state: state)
            }
            return .same
        }
        .receiveLifecycle { _, event in
            if case .terminated = event { return .same }
            return .unhandled
        }).onFailure(.restart(limit: 10, within: .seconds(60)).keepingChildren())
    }

    /// Answers a client's request, or hands it on to the channel concerned.
    private static func answer(_ request: DirectoryRequest, from: ClientIdentity, replyTo: ReplyTo,
                               context: ActorContext<DirectoryMessage>, server: ServerContext,
                               state: DirectoryState, registry: ActorRef<RegistryMessage>) throws -> Answered {
        let replies = server.replies
        switch request {
        case let .join(name, key):
            let folded = IRCCaseMapping.fold(name)
            try createIfMissing(name, folded: folded, context: context, server: server, state: state, registry: registry)
            return replyTo.handOn { forward(.request(.join(key: key), from: from, replyTo: $0), to: folded, state: state) }

        case let .channel(name, request, ifMissing):
            let folded = IRCCaseMapping.fold(name)
            guard state.channels[folded] != nil else {
                from.send(ifMissing)
                return replyTo.answered()
            }
            return replyTo.handOn { forward(.request(request, from: from, replyTo: $0), to: folded, state: state) }

        case let .list(names, memberOf):
            from.send(replies.numeric(Numeric.listStart, from.nick, "Channel", "Users  Name"))
            let entries: [DirectoryState.Entry]
            if let names {
                entries = names.compactMap { state.channels[IRCCaseMapping.fold($0)] }
            } else {
                entries = Array(state.channels.values)
            }
            for entry in entries where entry.members > 0 && (!entry.secret || memberOf.contains(IRCCaseMapping.fold(entry.name))) {
                from.send(replies.numeric(Numeric.list, from.nick, entry.name, String(entry.members), entry.topic ?? ""))
            }
            from.send(replies.numeric(Numeric.listEnd, from.nick, "End of /LIST"))
            return replyTo.answered()
        }
    }

    /// Spawns channel `name`'s actor unless there is one.
    private static func createIfMissing(_ name: String, folded: String, context: ActorContext<DirectoryMessage>, server: ServerContext,
                                        state: DirectoryState, registry: ActorRef<RegistryMessage>) throws {
        guard state.channels[folded] == nil else { return }
        let channelState = ChannelState(name: name, key: folded, createdAt: Int(context.scheduler.currentDate.timeIntervalSince1970))
        let channel = try context.spawnAnonymous(ChannelActor.behavior(server: server, state: channelState,
                                                                       directory: context.myself, registry: registry))
        context.watch(channel, with: .channelTerminated(key: folded, channel: channel))
        state.channels[folded] = DirectoryState.Entry(name: name, channel: channel)
        server.counters.channels.add(1, ordering: .relaxed)
        server.publish(.channelCreated(name))
    }

    /// Hands `message` to the channel `key` (which exists), counted.
    private static func forward(_ message: ChannelMessage, to key: String, state: DirectoryState) {
        state.channels[key]!.forwarded += 1
        state.channels[key]!.channel.tell(.forwarded(message))
    }

    /// The messages that are not requests: notices and the channels' reports.
    private static func record(_ message: DirectoryMessage, context: ActorContext<DirectoryMessage>, server: ServerContext,
                               state: DirectoryState) {
        switch message {
        case let .notice(name, line, from):
            let folded = IRCCaseMapping.fold(name)
            guard state.channels[folded] != nil else { return }
            forward(.notice(line: line, from: from), to: folded, state: state)

        case let .summary(key, members, topic, secret, fromDirectory):
            guard var entry = state.channels[key] else { return }
            entry.members = members
            entry.topic = topic
            entry.secret = secret
            if members == 0 && entry.forwarded == fromDirectory {
                // Empty, and nothing forwarded is on its way: close it.
                state.channels.removeValue(forKey: key)
                context.unwatch(entry.channel)
                try? context.stop(entry.channel)
                server.counters.channels.add(-1, ordering: .relaxed)
                server.publish(.channelClosed(entry.name))
            } else {
                state.channels[key] = entry
            }

        case let .channelTerminated(key, channel):
            guard state.channels[key]?.channel == channel else { return }
            let entry = state.channels.removeValue(forKey: key)!
            server.counters.channels.add(-1, ordering: .relaxed)
            server.publish(.channelClosed(entry.name))

        case let .allChannels(message):
            for key in Array(state.channels.keys) { forward(message, to: key, state: state) }

        case let .sendState(node):
            for key in Array(state.channels.keys) { forward(.sendState(to: node), to: key, state: state) }

        case .request, .replica:
            preconditionFailure("ChannelDirectory: \(message) is handled by the behavior")
        }
    }
}
