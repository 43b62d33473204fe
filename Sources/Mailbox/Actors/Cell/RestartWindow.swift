import Foundation

/// The restarts inside a sliding window, oldest first (times never decrease, so expired ones
/// leave from the front in amortised O(1)).
struct RestartWindow {
    private var times: [Date] = []
    private var head = 0

    var count: Int { times.count - head }

    /// Counts a restart at `now` if, with the restarts at `t >= now - window`, it makes at most
    /// `limit`; returns whether it was counted.
    mutating func admit(at now: Date, window: Duration, limit: Int) -> Bool {
        let threshold = now.addingTimeInterval(-window.timeInterval)
        while head < times.count, times[head] < threshold { head += 1 }
        if head > 32, head * 2 > times.count {
            times.removeFirst(head)
            head = 0
        }
        guard count + 1 <= limit else { return false }
        times.append(now)
        return true
    }
}
