/// An unordered-removal, insertion-ordered collection whose elements are removed by the token
/// handed out when they were inserted.
///
/// Used for observers of a signal and members of a composite disposable: iteration follows
/// insertion order, and a token removes exactly the element it was issued for even if equal
/// elements exist.
///
/// Not thread-safe: protect it with the owner's lock.
///
/// - Complexity: `insert` is amortised O(1); `remove(using:)` is O(n) in the worst case and
///   O(1) for the most recently inserted element.
@usableFromInline
struct Bag<Element> {
    /// Identifies one inserted element.
    @usableFromInline
    struct Token: Hashable, Sendable {
        @usableFromInline
        let value: UInt64

        @inlinable
        init(_ value: UInt64) { self.value = value }
    }

    @usableFromInline
    var elements: ContiguousArray<Element> = []

    @usableFromInline
    var tokens: ContiguousArray<UInt64> = []

    @usableFromInline
    var nextToken: UInt64 = 0

    @inlinable
    init() {}

    @inlinable
    var isEmpty: Bool { elements.isEmpty }

    @inlinable
    var count: Int { elements.count }

    /// Inserts `element` and returns the token that removes it.
    @inlinable
    @discardableResult
    mutating func insert(_ element: Element) -> Token {
        let token = nextToken
        nextToken &+= 1
        elements.append(element)
        tokens.append(token)
        return Token(token)
    }

    /// Removes the element `token` was issued for, if still present, and returns it.
    @inlinable
    @discardableResult
    mutating func remove(using token: Token) -> Element? {
        // Tokens are increasing, so search from the end: recent insertions are removed soonest.
        var index = tokens.count - 1
        while index >= 0 {
            if tokens[index] == token.value {
                tokens.remove(at: index)
                return elements.remove(at: index)
            }
            if tokens[index] < token.value { return nil }
            index -= 1
        }
        return nil
    }

    /// Removes every element and returns them in insertion order.
    @inlinable
    mutating func removeAll() -> ContiguousArray<Element> {
        let taken = elements
        elements = []
        tokens = []
        return taken
    }
}

extension Bag: Sequence {
    @inlinable
    func makeIterator() -> ContiguousArray<Element>.Iterator {
        elements.makeIterator()
    }
}

extension Bag: Sendable where Element: Sendable {}
