/// Why a line is not an IRC message (`IRCMessage.init(parsing:)`).
///
/// Compare against the static members (`error == .invalidCommand`); the set may grow.
///
/// Thread-safety: an immutable value; `Sendable`.
public struct IRCParseError: Error, Sendable, Equatable, CustomStringConvertible {
    private enum Code: Sendable, Equatable {
        case emptyLine, missingCommand, invalidCommand, containsNUL, containsLineBreak
    }

    private let code: Code

    private init(_ code: Code) {
        self.code = code
    }

    /// The line is empty or only spaces.
    public static let emptyLine = IRCParseError(.emptyLine)
    /// The line has tags and/or a prefix but no command after them.
    public static let missingCommand = IRCParseError(.missingCommand)
    /// The command is neither ASCII letters only nor exactly three digits.
    public static let invalidCommand = IRCParseError(.invalidCommand)
    /// The line contains a NUL byte (RFC 1459 forbids it anywhere in a message).
    public static let containsNUL = IRCParseError(.containsNUL)
    /// The line contains a CR or LF byte: it was not framed (the parser takes one line without
    /// its terminator, as `LineFramer` gives them).
    public static let containsLineBreak = IRCParseError(.containsLineBreak)

    /// What is wrong, in words.
    public var description: String {
        switch code {
        case .emptyLine: "empty line"
        case .missingCommand: "missing command"
        case .invalidCommand: "invalid command (neither letters only nor three digits)"
        case .containsNUL: "line contains NUL"
        case .containsLineBreak: "line contains CR or LF"
        }
    }
}
