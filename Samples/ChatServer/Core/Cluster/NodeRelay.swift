import Mailbox

/// One per chat node in a cluster: the actor the other nodes' syncs arrive at (through
/// `ChatClusterLink`). It keeps the table of remote users (`RemoteUsers`, the decisions) and
/// turns each sync into messages to this node's registry and channel directory (the effects):
///
/// ```
///  node B's channel ──.channel(#c, .line)──▶ node A's relay ──.replica(#c, .line)──▶ A's directory ──▶ A's #c ──▶ A's members
/// ```
///
/// Everything of one node arrives here in the order that node sent it, and goes on through the
/// directory (never straight to a channel), so one node's changes to a channel are applied in
/// order. A user of another node is, here, an entry in the registry and in the channels with an
/// id from the relay, a `RemoteClientConnection` and a sink for a session.
enum NodeRelay {
    static func behavior(server: ServerContext, link: any ChatClusterLink,
                         registry: ActorRef<RegistryMessage>, directory: ActorRef<DirectoryMessage>) -> Behavior<ChatRelayMessage> {
        .setup { context in
            // What channels and the registry tell a remote user's "session" (joined, left,
            // killed) concerns its own node, which hears of it through its own copy: dropped.
            let sink = try context.spawn(Behavior<SessionMessage>.receiveMessage { _ in .same }, name: "remote-sessions")
            var users = RemoteUsers()
            let me = link.node

            func identity(_ user: RemoteUsers.User) -> ClientIdentity {
                let record = user.record
                return ClientIdentity(id: user.localID, nick: record.nick, user: record.user, host: record.host, realName: record.realName,
                                      session: sink, connection: RemoteClientConnection(id: user.localID, host: record.host, user: user.ref, link: link),
                                      isOperator: record.isOperator, isInvisible: record.isInvisible, away: record.away, remote: user.ref)
            }

            /// Performs what a record changed; the user's identity here, unless it is late news.
            func perform(_ change: RemoteUsers.Change) -> ClientIdentity? {
                switch change {
                case .ignored:
                    return nil
                case let .unchanged(user):
                    return identity(user)
                case let .added(user):
                    let identity = identity(user)
                    registry.tell(.remoteUser(identity))
                    return identity
                case let .renamed(user, oldPrefix):
                    let identity = identity(user)
                    registry.tell(.remoteUser(identity))
                    let line = IRCMessage(prefix: oldPrefix, command: "NICK", params: [identity.nick]).serialized(alwaysTrailing: true)
                    directory.tell(.allChannels(.nickChanged(identity, line: line, once: DeliverOnce())))
                    return identity
                case let .updated(user):
                    let identity = identity(user)
                    registry.tell(.remoteUser(identity))
                    directory.tell(.allChannels(.memberUpdated(identity)))
                    return identity
                }
            }

            /// The user left: its channels here show its QUIT (each member once), its nick is free.
            func quit(_ user: RemoteUsers.User, reason: String) {
                let line = IRCMessage(prefix: user.prefix, command: "QUIT", params: [reason]).serialized(alwaysTrailing: true)
                directory.tell(.allChannels(.quit(id: user.localID, line: line, once: DeliverOnce())))
                registry.tell(.release(id: user.localID))
            }

            func bytes(_ line: String) -> [UInt8] { Array(line.utf8) }

            func channel(_ name: String, _ sync: ChannelSync, from node: ClusterNode) {
                // Not a channel this server could have: dropped whole (its users' records too).
                guard IRCNames.isValidChannel(name, maxLength: server.configuration.channelLength) else { return }
                let event: ChannelReplicaEvent
                switch sync {
                case let .joined(record, isOperator):
                    guard let identity = perform(users.seen(record, on: node)) else { return }
                    event = .joined(identity, isOperator: isOperator)
                case let .parted(ref, line):
                    guard let id = users.localID(of: ref, me: me) else { return }
                    event = .parted(id: id, line: bytes(line))
                case let .kicked(ref, line):
                    guard let id = users.localID(of: ref, me: me) else { return }
                    event = .kicked(id: id, line: bytes(line))
                case let .topic(topic, stamp, line):
                    event = .topic(topic, stamp: stamp, line: bytes(line))
                case let .modes(modes, statuses, line):
                    let local = statuses.compactMap { status in
                        users.localID(of: status.user, me: me).map { (id: $0, isOperator: status.isOperator, hasVoice: status.hasVoice) }
                    }
                    event = .modes(modes, statuses: local, line: bytes(line))
                case let .line(line):
                    event = .line(bytes(line))
                case let .state(modes, topic, topicStamp, createdAt, members):
                    let known = members.compactMap { member in
                        perform(users.seen(member.user, on: node)).map { (identity: $0, isOperator: member.isOperator, hasVoice: member.hasVoice) }
                    }
                    event = .state(modes: modes, topic: topic, topicStamp: topicStamp, createdAt: createdAt, members: known)
                }
                directory.tell(.replica(name: name, event))
            }

            return .receiveMessage { message in
                switch message {
                case let .sync(node, sync):
                    guard node != me else { return .same }
                    switch sync {
                    case let .user(record):
                        _ = perform(users.seen(record, on: node))
                    case let .quit(id, reason):
                        if let user = users.left(ChatUserRef(node: node, id: id)) { quit(user, reason: reason) }
                    case let .channel(name, sync):
                        channel(name, sync, from: node)
                    case let .deliver(id, line):
                        registry.tell(.deliver(id: id, line: bytes(line)))
                    }
                case let .peerUp(node):
                    guard node != me else { return .same }
                    server.publish(.peerUp(node.description))
                    registry.tell(.sendUsers(to: node))
                    directory.tell(.sendState(to: node))
                case let .peerDown(node):
                    guard node != me else { return .same }
                    let gone = users.nodeDown(node)
                    server.publish(.peerDown(node.description, users: gone.count))
                    // As IRC shows a netsplit: "<this server> <the server that split>".
                    for user in gone { quit(user, reason: "\(me.name) \(node.name)") }
                }
                return .same
            }
        }
    }
}
