/// Channels: `JOIN`, `PART`, `TOPIC`, `NAMES`, `LIST`, `KICK`, `INVITE`. Each becomes a request
/// to the channel's actor (or, for a channel the client is not in, to the directory), which
/// answers the client and then the session.
extension Session {
    func runChannel(_ command: ChannelCommand, _ params: [String]) {
        switch command {
        case .join:
            join(params)
        case .part:
            part(params)
        case .topic:
            guard let name = params.first else { return needMoreParams("TOPIC") }
            ask(channel: name, .topic(params.count > 1 ? params[1] : nil), ifMissing: noSuchChannel(name))
        case .names:
            guard let names = params.first else {
                return send(Numeric.endOfNames, "*", "End of /NAMES list")
            }
            for name in names.split(separator: ",").map(String.init) {
                ask(channel: name, .names, ifMissing: replies.numeric(Numeric.endOfNames, identity.nick, name, "End of /NAMES list"))
            }
        case .list:
            directory.tell(.request(.list(names: params.first.map { $0.split(separator: ",").map(String.init) }, memberOf: Set(channels.keys)),
                                    from: identity, replyTo: expectAnswer(.command)))
        case .kick:
            guard params.count >= 2 else { return needMoreParams("KICK") }
            let nicks = params[1].split(separator: ",").map(String.init)
            ask(channel: params[0], .kick(nicks: nicks, reason: params.count > 2 ? params[2] : nil), ifMissing: noSuchChannel(params[0]))
        case .invite:
            guard params.count >= 2 else { return needMoreParams("INVITE") }
            ask(channel: params[1], .invite(nick: params[0]), ifMissing: noSuchChannel(params[1]))
        }
    }

    private func join(_ params: [String]) {
        guard let list = params.first else { return needMoreParams("JOIN") }
        if list == "0" {
            for (_, channel) in channels {
                let line = IRCMessage(prefix: identity.prefix, command: "PART", params: [channel.name, identity.nick]).serialized(alwaysTrailing: true)
                channel.ref.tell(.request(.part(line: line), from: identity, replyTo: expectAnswer(.command)))
            }
            channels.removeAll()
            return
        }
        let names = list.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        let keys = params.count > 1 ? params[1].split(separator: ",", omittingEmptySubsequences: false).map(String.init) : []
        for (position, name) in names.enumerated() {
            guard IRCNames.isValidChannel(name, maxLength: configuration.channelLength) else {
                send(Numeric.noSuchChannel, name, "No such channel")
                continue
            }
            if channels[IRCCaseMapping.fold(name)] != nil { continue }
            guard channels.count < configuration.channelsPerUser else {
                send(Numeric.tooManyChannels, name, "You have joined too many channels")
                continue
            }
            let key = position < keys.count && !keys[position].isEmpty ? keys[position] : nil
            directory.tell(.request(.join(name: name, key: key), from: identity, replyTo: expectAnswer(.command)))
        }
    }

    private func part(_ params: [String]) {
        guard let list = params.first else { return needMoreParams("PART") }
        for name in list.split(separator: ",").map(String.init) {
            var partParams = [name]
            if params.count > 1 { partParams.append(params[1]) }
            let key = IRCCaseMapping.fold(name)
            if let channel = channels.removeValue(forKey: key) {
                partParams[0] = channel.name
                let line = IRCMessage(prefix: identity.prefix, command: "PART", params: partParams).serialized(alwaysTrailing: true)
                channel.ref.tell(.request(.part(line: line), from: identity, replyTo: expectAnswer(.command)))
            } else {
                ask(channel: name, .part(line: []), ifMissing: noSuchChannel(name))
            }
        }
    }
}
