import Mailbox

/// What the channel directory is asked. It owns the channel namespace: it creates a channel's
/// actor on its first join and stops it when it is empty, and it routes requests about channels
/// a client is not a member of.
enum DirectoryMessage: Sendable {
    case join(name: String, key: String?, from: ClientIdentity)
    /// A request about channel `name`; `ifMissing` is sent to `from` when no such channel exists.
    case forward(name: String, ChannelMessage, ifMissing: [UInt8]?, from: ClientIdentity)
    /// From a channel: its member count and topic (for LIST), and how many forwarded requests it
    /// has handled.
    case summary(key: String, members: Int, topic: String?, secret: Bool, fromDirectory: Int)
    /// `LIST`; secret channels are shown only to their members (`memberOf`: folded names).
    case list(names: [String]?, memberOf: Set<String>, from: ClientIdentity)
    /// A channel's actor terminated (after too many failures, or closed).
    case channelTerminated(key: String, channel: ActorRef<ChannelMessage>)
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
            try server.checkFault("directory")
            try handle(message, context: context, server: server, state: state, registry: registry)
            return .same
        }
        .receiveLifecycle { _, event in
            if case .terminated = event { return .same }
            return .unhandled
        }).onFailure(.restart(limit: 10, within: .seconds(60)).keepingChildren())
    }

    private static func handle(_ message: DirectoryMessage, context: ActorContext<DirectoryMessage>, server: ServerContext,
                               state: DirectoryState, registry: ActorRef<RegistryMessage>) throws {
        let replies = server.replies
        switch message {
        case let .join(name, key, from):
            let folded = IRCCaseMapping.fold(name)
            if state.channels[folded] == nil {
                let channelState = ChannelState(name: name, key: folded, createdAt: Int(context.scheduler.currentDate.timeIntervalSince1970))
                let channel = try context.spawnAnonymous(ChannelActor.behavior(server: server, state: channelState,
                                                                               directory: context.myself, registry: registry))
                context.watch(channel, with: .channelTerminated(key: folded, channel: channel))
                state.channels[folded] = DirectoryState.Entry(name: name, channel: channel)
                server.counters.channels.add(1, ordering: .relaxed)
                server.publish(.channelCreated(name))
            }
            state.channels[folded]!.forwarded += 1
            state.channels[folded]!.channel.tell(.forwarded(.join(from, key: key)))

        case let .forward(name, request, ifMissing, from):
            let folded = IRCCaseMapping.fold(name)
            guard state.channels[folded] != nil else {
                if let ifMissing { from.send(ifMissing) }
                if request.expectsAnswer { from.session.tell(request.isMessage ? .messageAnswered : .answered) }
                return
            }
            state.channels[folded]!.forwarded += 1
            state.channels[folded]!.channel.tell(.forwarded(request))

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

        case let .list(names, memberOf, from):
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
            from.session.tell(.answered)

        case let .channelTerminated(key, channel):
            guard state.channels[key]?.channel == channel else { return }
            let entry = state.channels.removeValue(forKey: key)!
            server.counters.channels.add(-1, ordering: .relaxed)
            server.publish(.channelClosed(entry.name))
        }
    }
}
