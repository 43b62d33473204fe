/// Identifies a timer of an actor: starting a timer with a key already in use replaces it.
public struct TimerKey: Hashable, CustomStringConvertible {
    let value: AnyHashable
    private let text: String

    /// A key made of any hashable, sendable value (a string, an enum case, …).
    public init<Key: Hashable & Sendable>(_ key: Key) {
        value = AnyHashable(key)
        text = "\(key)"
    }

    public var description: String { text }

    public static func == (lhs: TimerKey, rhs: TimerKey) -> Bool { lhs.value == rhs.value }
    public func hash(into hasher: inout Hasher) { hasher.combine(value) }
}

extension TimerKey: ExpressibleByStringLiteral {
    public init(stringLiteral value: String) {
        self.init(value)
    }
}

// `AnyHashable` wraps only `Sendable` keys (enforced by the initialiser); `text` is a String.
extension TimerKey: @unchecked Sendable {}
