/// Registration: `CAP`, `PASS`, `NICK`, `USER`, and the welcome that completes it. The state
/// machine records what was given and decides when registration completes.
extension Session {
    func runRegistration(_ command: RegistrationCommand, _ params: [String]) {
        switch command {
        case .cap: capability(params)
        case .pass: password(params)
        case .nick: nick(params)
        case .user: user(params)
        }
    }

    private func capability(_ params: [String]) {
        guard let subcommand = params.first?.uppercased() else { return needMoreParams("CAP") }
        switch subcommand {
        case "LS":
            perform(machine.capabilitiesRequested())
            connection.send(replies.fromServer("CAP", identity.nick, "LS", ""))
        case "LIST":
            connection.send(replies.fromServer("CAP", identity.nick, "LIST", ""))
        case "REQ":
            perform(machine.capabilitiesRequested())
            connection.send(replies.fromServer("CAP", identity.nick, "NAK", params.count > 1 ? params[1] : ""))
        case "END":
            perform(machine.capabilitiesEnded())
        default:
            send(Numeric.invalidCapCommand, subcommand, "Invalid CAP command")
        }
    }

    private func password(_ params: [String]) {
        if machine.isRegistered { return send(Numeric.alreadyRegistered, "You may not reregister") }
        guard let password = params.first else { return needMoreParams("PASS") }
        perform(machine.passwordGiven(password))
    }

    private func nick(_ params: [String]) {
        guard let nick = params.first, !nick.isEmpty else { return send(Numeric.noNicknameGiven, "No nickname given") }
        guard IRCNames.isValidNick(nick, maxLength: configuration.nickLength) else {
            return send(Numeric.erroneousNickname, nick, "Erroneous nickname")
        }
        if machine.hasNick && nick == identity.nick { return }
        registry.tell(.claim(nick: nick, id: identity.id, replyTo: context.myself))
        // The client's next commands wait for the answer (at most `answerTimeout`).
        perform(machine.nickClaimSent(nick))
    }

    private func user(_ params: [String]) {
        if machine.isRegistered { return send(Numeric.alreadyRegistered, "You may not reregister") }
        guard params.count >= 4, !params[0].isEmpty, !params[3].isEmpty else { return needMoreParams("USER") }
        let name = params[0].filter { !" @!\r\n\0".contains($0) }.truncated(toBytes: 10)
        identity = ClientIdentity(id: identity.id, nick: identity.nick, user: "~" + (name.isEmpty ? "user" : name), host: identity.host,
                                  realName: params[3].truncated(toBytes: 100), session: identity.session, connection: connection)
        perform(machine.userGiven())
    }

    /// A nick claim ended (`SessionStateMachine.NickSettlement`).
    func nickClaimSettled(_ settlement: SessionStateMachine.NickSettlement) {
        switch settlement {
        case let .inUse(nick):
            send(Numeric.nicknameInUse, nick, "Nickname is already in use")
        case let .unavailable(nick):
            send(Numeric.nicknameInUse, nick, "Nickname is unavailable, try again")
        case let .changed(nick):
            let line = IRCMessage(prefix: identity.prefix, command: "NICK", params: [nick]).serialized(alwaysTrailing: true)
            let old = identity.nick
            identity.nick = nick
            connection.send(line)
            let once = DeliverOnce(excluding: [identity.id])
            for (_, channel) in channels {
                channel.ref.tell(.nickChanged(identity, line: line, once: once))
            }
            registry.tell(.update(identity))
            server.publish(.nickChanged(from: old, to: nick))
        case let .taken(nick, then: step):
            identity.nick = nick
            registrationStepped(step)
        }
    }

    /// Registration took a step (`SessionStateMachine.RegistrationStep`).
    func registrationStepped(_ step: SessionStateMachine.RegistrationStep) {
        switch step {
        case .waitForMore:
            break
        case .welcome:
            welcome()
        case .refusePassword:
            // The session is closing: it ends with "Bad password".
            send(Numeric.passwordMismatch, "Password incorrect")
        }
    }

    /// Registration is complete: 001 to 005, LUSERS, MOTD, and the keep-alive starts.
    private func welcome() {
        context.timers.cancel(key: Timers.registration)
        registry.tell(.update(identity))
        server.counters.userRegistered()
        server.publish(.registered(nick: identity.nick, host: identity.host))

        send(Numeric.welcome, "Welcome to the \(configuration.networkName) Internet Relay Chat Network \(identity.prefix)")
        send(Numeric.yourHost, "Your host is \(configuration.serverName), running version \(configuration.version)")
        send(Numeric.created, "This server was created \(server.createdText)")
        send(Numeric.myInfo, configuration.serverName, configuration.version, "io", "biklmnostv", "bklov")
        sendISupport()
        lusers()
        motd()
        context.timers.startTimerWithFixedDelay(key: Timers.keepAlive, message: .keepAlive, delay: configuration.pingInterval)
    }

    /// 005: what the server supports.
    func sendISupport() {
        let tokens = [
            "AWAYLEN=\(configuration.awayLength)", "CASEMAPPING=rfc1459", "CHANLIMIT=#:\(configuration.channelsPerUser)",
            "CHANMODES=b,k,l,imnst", "CHANNELLEN=\(configuration.channelLength)", "CHANTYPES=#", "KICKLEN=\(configuration.kickLength)",
            "MAXLIST=b:\(configuration.maxBans)", "MAXTARGETS=\(configuration.maxTargets)", "MODES=4",
            "NETWORK=\(configuration.networkName)", "NICKLEN=\(configuration.nickLength)", "PREFIX=(ov)@+",
            "TARGMAX=PRIVMSG:\(configuration.maxTargets),NOTICE:\(configuration.maxTargets),JOIN:,PART:,KICK:\(configuration.maxTargets)",
            "TOPICLEN=\(configuration.topicLength)",
        ]
        // At most 13 tokens a line: with the nick and the text, 15 parameters.
        for start in stride(from: 0, to: tokens.count, by: 13) {
            send(Numeric.isupport, params: Array(tokens[start..<min(start + 13, tokens.count)]) + ["are supported by this server"])
        }
    }
}
