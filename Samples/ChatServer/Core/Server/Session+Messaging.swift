/// `PRIVMSG` and `NOTICE`, to a channel or a nick. A PRIVMSG is a request (its answer is the
/// delivery or a refusal: 404, 401, 301); a NOTICE is never answered, not even with an error.
extension Session {
    func runMessaging(_ command: MessagingCommand, _ params: [String]) {
        let isNotice = command == .notice
        guard let target = params.first, !target.isEmpty else {
            if !isNotice { send(Numeric.noRecipient, "No recipient given (\(command.rawValue))") }
            return
        }
        guard params.count > 1, !params[1].isEmpty else {
            if !isNotice { send(Numeric.noTextToSend, "No text to send") }
            return
        }
        // A list of targets was split into one command per target (`SessionCommand.splitByTarget`).
        guard !target.contains(Character(",")) else {
            if !isNotice { send(Numeric.tooManyTargets, target, "Too many recipients") }
            return
        }
        // Serialized once, for every recipient.
        let line = IRCMessage(prefix: identity.prefix, command: command.rawValue, params: [target, params[1]]).serialized(alwaysTrailing: true)
        switch (target.hasPrefix("#"), isNotice) {
        case (true, false):
            ask(channel: target, .privmsg(line: line), ifMissing: replies.numeric(Numeric.noSuchNick, identity.nick, target, "No such nick/channel"))
        case (true, true):
            if let channel = channels[IRCCaseMapping.fold(target)] {
                channel.ref.tell(.notice(line: line, from: identity))
            } else {
                directory.tell(.notice(name: target, line: line, from: identity))
            }
        case (false, false):
            ask(registry: .privmsg(target: target, line: line), .message)
        case (false, true):
            registry.tell(.notice(target: target, line: line))
        }
    }
}
