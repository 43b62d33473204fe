import Foundation

/// The restarts inside a sliding window, oldest first (times never decrease, so expired ones
/// leave from the front in amortised O(1)).
struct RestartWindow {
    private var times: [Date] = []
    private var head = 0

    /// Restarts recorded and not yet dropped (some may be older than the window until the next
    /// `admit`; see `count(at:window:)`).
    var count: Int { times.count - head }

    /// Counts a restart at `now` if, with the restarts at `t >= now - window`, it makes at most
    /// `limit`. Returns the restarts in the window including this one if it was counted, `nil`
    /// if it was refused.
    mutating func admit(at now: Date, window: Duration, limit: Int) -> Int? {
        let threshold = now.addingTimeInterval(-window.timeInterval)
        while head < times.count, times[head] < threshold { head += 1 }
        if head > 32, head * 2 > times.count {
            times.removeFirst(head)
            head = 0
        }
        guard count + 1 <= limit else { return nil }
        times.append(now)
        return count
    }

    /// The restarts at `t >= now - window`, without recording anything.
    ///
    /// - Complexity: O(k), k the restarts that left the window since the last `admit`.
    func count(at now: Date, window: Duration) -> Int {
        let threshold = now.addingTimeInterval(-window.timeInterval)
        var first = head
        while first < times.count, times[first] < threshold { first += 1 }
        return times.count - first
    }
}
