/// A binary min-heap: `first` is the smallest element by `<`.
///
/// Not thread-safe: protect it with the owner's lock.
///
/// - Complexity: `insert` and `removeFirst` are O(log n); `first` is O(1).
struct MinHeap<Element: Comparable> {
    private var storage: [Element] = []

    init() {}

    var count: Int { storage.count }
    var isEmpty: Bool { storage.isEmpty }
    var first: Element? { storage.first }

    mutating func insert(_ element: Element) {
        storage.append(element)
        var child = storage.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard storage[child] < storage[parent] else { break }
            storage.swapAt(child, parent)
            child = parent
        }
    }

    /// Removes and returns the smallest element.
    ///
    /// - Precondition: the heap is not empty.
    mutating func removeFirst() -> Element {
        precondition(!storage.isEmpty, "removeFirst() on an empty heap")
        storage.swapAt(0, storage.count - 1)
        let removed = storage.removeLast()
        var parent = 0
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < storage.count, storage[left] < storage[smallest] { smallest = left }
            if right < storage.count, storage[right] < storage[smallest] { smallest = right }
            if smallest == parent { break }
            storage.swapAt(parent, smallest)
            parent = smallest
        }
        return removed
    }
}

extension MinHeap: Sendable where Element: Sendable {}
