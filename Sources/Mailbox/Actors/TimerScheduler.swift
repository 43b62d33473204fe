/// An actor's timers: messages the actor sends itself after a delay, once or repeatedly.
///
/// Timers run on the actor's `DateScheduler` (virtual time on a `TestScheduler`). Each timer has
/// a key; starting a timer with a key in use cancels the old one, and a message of a cancelled
/// timer that is already in the mailbox is discarded, never delivered. All timers are cancelled
/// when the actor stops or restarts.
///
/// A timer's message keeps mailbox order: it is queued when the timer fires, behind the messages
/// already queued, like a message the actor sent itself (Akka's timers behave the same). A
/// bounded mailbox counts it but never refuses it.
///
/// ```
///  fixed delay:  |--delay--|msg delivered|--delay--|msg delivered|--delay--| ...
///  fixed rate:   |--interval--|--interval--|--interval--|   (ticks regardless of handling)
/// ```
///
/// Thread-safety: use only inside the owning actor's handlers.
public final class TimerScheduler<Message: Sendable> {
    private enum Mode {
        case single
        case fixedDelay(Duration)
        case fixedRate
    }

    private struct Timer {
        let generation: UInt64
        let mode: Mode
        let message: Message
        var cancellation: (any Disposable)?
    }

    private unowned let cell: ActorCell<Message>
    /// Recognises this actor's timer messages in its mailbox (shared with the timers' threads).
    let marks = TimerMarks()
    private var timers: [TimerKey: Timer] = [:]
    private var generation: UInt64 = 0

    init(cell: ActorCell<Message>) {
        self.cell = cell
    }

    /// Sends `message` to the actor once, after `delay`.
    public func startSingleTimer(key: TimerKey, message: Message, delay: Duration) {
        cell.assertInMailboxRun()
        start(key: key, message: message, mode: .single, firstDelay: delay)
    }

    /// Sends `message` after `delay`, and again `delay` after each time it is delivered (the
    /// timer re-arms as the message is taken from the mailbox, just before the handler runs).
    ///
    /// Failure modes: a `delay` under one nanosecond (the schedulers' resolution; zero or
    /// negative included) would deliver without end at one instant (on a `TestScheduler`,
    /// `advance` would never return). The timer is then not started (one with the same key is
    /// still cancelled) and the actor fails with an `ActorSystemError` of code `.invalidTimer`
    /// once the current handler returns, handled by its supervision like a thrown error.
    public func startTimerWithFixedDelay(key: TimerKey, message: Message, delay: Duration) {
        cell.assertInMailboxRun()
        guard delay >= Self.resolution else {
            refuse(key: key, "a fixed-delay timer needs a positive delay, not \(delay)")
            return
        }
        start(key: key, message: message, mode: .fixedDelay(delay), firstDelay: delay)
    }

    /// Sends `message` every `interval`, whether or not the previous one was handled yet.
    ///
    /// Failure modes: an `interval` under one nanosecond is refused as in
    /// `startTimerWithFixedDelay(key:message:delay:)`: the actor fails with `.invalidTimer`.
    public func startTimerAtFixedRate(key: TimerKey, message: Message, interval: Duration) {
        cell.assertInMailboxRun()
        guard interval >= Self.resolution else {
            refuse(key: key, "a fixed-rate timer needs a positive interval, not \(interval)")
            return
        }
        cancel(key: key)
        generation += 1
        let generation = self.generation
        let cell = self.cell
        let marks = self.marks
        let cancellation = cell.dateScheduler.schedule(after: interval, interval: interval) {
            cell.tellTimer(key: key, generation: generation, message: message, marks: marks)
        }
        timers[key] = Timer(generation: generation, mode: .fixedRate, message: message, cancellation: cancellation)
    }

    /// Whether a timer with `key` is active.
    public func isTimerActive(key: TimerKey) -> Bool {
        timers[key] != nil
    }

    /// Cancels the timer with `key`, if any; its message will not be delivered.
    public func cancel(key: TimerKey) {
        cell.assertInMailboxRun()
        timers.removeValue(forKey: key)?.cancellation?.dispose()
    }

    /// Cancels every timer.
    public func cancelAll() {
        cell.assertInMailboxRun()
        for timer in timers.values { timer.cancellation?.dispose() }
        timers = [:]
    }

    /// The shortest repeating interval: the schedulers count time in whole nanoseconds, so a
    /// shorter one is zero to them (and a repeating action with a zero interval never ends).
    static var resolution: Duration { .nanoseconds(1) }

    /// A timer that cannot run: cancel the key's timer and fail the actor once the handler
    /// returns, as if it had thrown (a usage error: the handler cannot be made to throw here).
    private func refuse(key: TimerKey, _ problem: String) {
        cancel(key: key)
        cell.context.recordUsageError(ActorSystemError.invalidTimer("timer \(key): \(problem)", actor: cell.address.path))
    }

    private func start(key: TimerKey, message: Message, mode: Mode, firstDelay: Duration) {
        cancel(key: key)
        generation += 1
        timers[key] = Timer(generation: generation, mode: mode, message: message, cancellation: nil)
        arm(key: key, generation: generation, message: message, delay: firstDelay)
    }

    private func arm(key: TimerKey, generation: UInt64, message: Message, delay: Duration) {
        let cell = self.cell
        let marks = self.marks
        let cancellation = cell.dateScheduler.schedule(after: delay) {
            cell.tellTimer(key: key, generation: generation, message: message, marks: marks)
        }
        timers[key]?.cancellation = cancellation
    }

    /// Called by the run loop for a timer message: whether to deliver it (its timer is still
    /// the current one), re-arming fixed-delay timers and retiring single ones.
    func shouldDeliver(key: TimerKey, generation: UInt64) -> Bool {
        guard let timer = timers[key], timer.generation == generation else { return false }
        switch timer.mode {
        case .single:
            timers[key] = nil
        case let .fixedDelay(delay):
            arm(key: key, generation: generation, message: timer.message, delay: delay)
        case .fixedRate:
            break
        }
        return true
    }
}
