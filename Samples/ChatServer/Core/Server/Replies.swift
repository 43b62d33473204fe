/// Builds the server's own lines: numeric replies and server notices, with the server's name as
/// prefix and the client's nick (or `*` before it has one) as first parameter.
struct Replies: Sendable {
    let serverName: String

    /// `:server CODE target params…`
    func numeric(_ code: String, _ target: String, _ params: String...) -> [UInt8] {
        IRCMessage(prefix: serverName, command: code, params: [target] + params).serialized(alwaysTrailing: true)
    }

    /// `:server CODE target params…`, parameters as an array.
    func numeric(_ code: String, _ target: String, params: [String]) -> [UInt8] {
        IRCMessage(prefix: serverName, command: code, params: [target] + params).serialized(alwaysTrailing: true)
    }

    /// A line from the server itself (`PING`, `CAP`, `NOTICE`…).
    func fromServer(_ command: String, _ params: String...) -> [UInt8] {
        IRCMessage(prefix: serverName, command: command, params: params).serialized(alwaysTrailing: true)
    }

    /// `ERROR :text`, the last line a client gets before the server closes its connection.
    static func error(_ text: String) -> [UInt8] {
        IRCMessage(command: "ERROR", params: [text]).serialized(alwaysTrailing: true)
    }
}

/// Numeric reply codes (RFC 1459, RFC 2812 and the modern extensions clients expect).
enum Numeric {
    static let welcome = "001", yourHost = "002", created = "003", myInfo = "004", isupport = "005"
    static let umodeIs = "221", luserClient = "251", luserOp = "252", luserUnknown = "253"
    static let luserChannels = "254", luserMe = "255", localUsers = "265", globalUsers = "266"
    static let away = "301", userhost = "302", ison = "303", unaway = "305", nowAway = "306"
    static let whoisUser = "311", whoisServer = "312", whoisOperator = "313", endOfWho = "315"
    static let endOfWhois = "318", whoisChannels = "319"
    static let listStart = "321", list = "322", listEnd = "323", channelModeIs = "324", creationTime = "329"
    static let noTopic = "331", topic = "332", topicWhoTime = "333", inviting = "341", version = "351"
    static let whoReply = "352", namReply = "353", endOfNames = "366", banList = "367", endOfBanList = "368"
    static let whowasUser = "314", endOfWhowas = "369", info = "371", endOfInfo = "374", wasNoSuchNick = "406"
    static let motd = "372", motdStart = "375", endOfMotd = "376", youreOper = "381", time = "391"
    static let noSuchNick = "401", noSuchChannel = "403", cannotSendToChan = "404"
    static let tooManyChannels = "405", tooManyTargets = "407", noOrigin = "409", invalidCapCommand = "410"
    static let noRecipient = "411", noTextToSend = "412", unknownCommand = "421", noMotd = "422"
    static let inputTooLong = "417", noNicknameGiven = "431", erroneousNickname = "432", nicknameInUse = "433"
    static let userNotInChannel = "441", notOnChannel = "442", userOnChannel = "443", notRegistered = "451"
    static let needMoreParams = "461", alreadyRegistered = "462", passwordMismatch = "464"
    static let keySet = "467", channelIsFull = "471", unknownMode = "472", inviteOnlyChan = "473"
    static let bannedFromChan = "474", badChannelKey = "475", banListFull = "478"
    static let noPrivileges = "481", chanOpPrivsNeeded = "482"
    static let umodeUnknownFlag = "501", usersDontMatch = "502", invalidModeParam = "696"
}

extension String {
    /// The longest prefix of whole characters that fits in `limit` UTF-8 bytes.
    func truncated(toBytes limit: Int) -> String {
        guard utf8.count > limit else { return self }
        var result = ""
        var used = 0
        for character in self {
            used += character.utf8.count
            if used > limit { break }
            result.append(character)
        }
        return result
    }
}

extension Duration {
    /// The duration in seconds.
    var timeInterval: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
