/// Which queued user messages are timer messages: a timer's message travels in the actor's
/// ordinary mailbox (so it keeps mailbox order: it is handled after the messages queued before it
/// fired), and its mark — its queue position, timer key and generation — lets the mailbox run
/// recognise it when it is dequeued and discard it if its timer was cancelled or restarted in the
/// meantime (Akka: "a message from the previous timer is not received, even if it was already
/// enqueued").
///
/// The timer's thread enqueues and records the mark under `lock`, after setting the cell's
/// timer-message flag (`CellFlags.setTimerMessageQueued()`); the run, seeing the flag, takes
/// the lock to look the dequeued position up, so it never misses a mark being recorded for the
/// element it holds. The flag is cleared, under
/// the lock, once no mark is left, so an actor with no timer message queued pays one relaxed load
/// per message.
///
/// Thread-safety: every member takes `lock`.
final class TimerMarks: @unchecked Sendable {
    // `marks` is protected by `lock`.
    struct Mark {
        let position: Int
        let key: TimerKey
        let generation: UInt64
    }

    private let lock = Lock()
    /// Oldest first (positions increase: each is recorded under the lock right after its enqueue).
    private var marks: [Mark] = []
    private var head = 0

    /// Runs `enqueue` (which returns the queue position it used) and records its mark, holding
    /// the lock so that the consumer cannot look the position up before the mark is there.
    func record(key: TimerKey, generation: UInt64, _ enqueue: () -> Int) {
        lock.lock()
        defer { lock.unlock() }
        marks.append(Mark(position: enqueue(), key: key, generation: generation))
    }

    /// The mark of the element dequeued at `position`, if it is a timer message; marks of
    /// positions before it (timer messages consumed without a look-up: dropped or drained) are
    /// discarded. Calls `whenEmpty` (under the lock) once no mark is left, to clear the flag.
    func take(at position: Int, whenEmpty: () -> Void) -> Mark? {
        lock.lock()
        defer { lock.unlock() }
        while head < marks.count, marks[head].position < position { head += 1 }
        var found: Mark?
        if head < marks.count, marks[head].position == position {
            found = marks[head]
            head += 1
        }
        if head == marks.count {
            marks.removeAll(keepingCapacity: true)
            head = 0
            whenEmpty()
        }
        return found
    }
}
