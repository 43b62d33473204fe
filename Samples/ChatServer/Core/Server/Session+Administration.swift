/// IRC operators: `OPER` and `KILL`.
extension Session {
    func runAdministration(_ command: AdministrationCommand, _ params: [String]) {
        switch command {
        case .oper:
            guard params.count >= 2 else { return needMoreParams("OPER") }
            guard let password = configuration.operators[params[0]], password == params[1] else {
                return send(Numeric.passwordMismatch, "Password incorrect")
            }
            if !identity.isOperator {
                identity.isOperator = true
                server.counters.operators.add(1, ordering: .relaxed)
                identityChanged()
            }
            send(Numeric.youreOper, "You are now an IRC operator")
            connection.send(IRCMessage(prefix: identity.prefix, command: "MODE", params: [identity.nick, "+o"]).serialized())
        case .kill:
            guard params.count >= 1 else { return needMoreParams("KILL") }
            guard identity.isOperator else { return send(Numeric.noPrivileges, "Permission Denied- You're not an IRC operator") }
            ask(registry: .kill(nick: params[0], reason: params.count > 1 ? params[1] : identity.nick))
        }
    }
}
