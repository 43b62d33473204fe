/// A client's input on its way to the session's handlers: bytes framed into lines, lines parsed
/// and decoded into commands, queued in order until the session may run them.
///
/// A pure value, touched only by the session's actor.
struct SessionInput {
    /// One line of input.
    enum Item {
        /// A line that parses: its command, decoded (`nil`: unknown, answered with 421).
        case message(IRCMessage, SessionCommand?)
        /// A line longer than 512 bytes (answered with 417).
        case tooLong
        /// A line that does not parse; answered with 421 when it names a command.
        case malformed([UInt8])

        /// A PRIVMSG or NOTICE: it need not wait for earlier PRIVMSGs' answers.
        var isMessage: Bool {
            if case let .message(_, command?) = self { return command.isMessage }
            return false
        }
    }

    private var framer = LineFramer()
    private var pending: [Item] = []
    /// `pending[..<head]` has been taken.
    private var head = 0

    /// Frames, parses and queues `bytes`. Returns false when a line overflowed the framer's
    /// buffer: the client must be cut (the lines before it are queued).
    mutating func append(_ bytes: [UInt8]) -> Bool {
        var overflow = false
        // The queue is moved out while the framer (another part of `self`) calls back.
        var queue: [Item] = []
        swap(&queue, &pending)
        framer.append(bytes) { output in
            switch output {
            case let .line(line):
                switch IRCMessage.parse(line) {
                case let .success(message): queue.append(.message(message, SessionCommand(message.command)))
                case .failure: queue.append(.malformed(line))
                }
            case .tooLong:
                queue.append(.tooLong)
            case .overflow:
                overflow = true
            }
        }
        swap(&queue, &pending)
        return !overflow
    }

    /// The next item, if any.
    var first: Item? {
        head < pending.count ? pending[head] : nil
    }

    /// Drops the next item (there is one), once `first` has been run.
    mutating func removeFirst() {
        head += 1
    }

    /// Puts `messages` before everything queued, in order (a command split by target).
    mutating func prepend(_ messages: [IRCMessage]) {
        pending.insert(contentsOf: messages.map { .message($0, SessionCommand($0.command)) }, at: head)
    }

    /// Items queued and not taken.
    var backlog: Int { pending.count - head }

    /// Frees what was taken (after a run of commands).
    mutating func compact() {
        if head == pending.count {
            pending.removeAll(keepingCapacity: pending.count <= 64)
            head = 0
        } else if head > 256 {
            pending.removeFirst(head)
            head = 0
        }
    }
}
