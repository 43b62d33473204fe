// on(...) and logEvents(...) for Signal and SignalProducer.

extension Signal {
    /// Runs side effects as events pass through, before they are forwarded: `event` first,
    /// then the closure for the event's kind, then `terminated` for any terminal event.
    /// `disposed` runs when the returned signal's work ends (it terminated, or was torn down
    /// unobserved).
    public func on(
        event: (@Sendable (Event) -> Void)? = nil,
        failed: (@Sendable (Error) -> Void)? = nil,
        completed: (@Sendable () -> Void)? = nil,
        interrupted: (@Sendable () -> Void)? = nil,
        terminated: (@Sendable () -> Void)? = nil,
        disposed: (@Sendable () -> Void)? = nil,
        value: (@Sendable (Value) -> Void)? = nil
    ) -> Signal<Value, Error> {
        Signal { downstream, lifetime in
            if let disposed { lifetime.observeEnded(disposed) }
            lifetime += self.observe { receivedEvent in
                event?(receivedEvent)
                switch receivedEvent {
                case let .value(v): value?(v)
                case let .failed(error): failed?(error)
                case .completed: completed?()
                case .interrupted: interrupted?()
                }
                if receivedEvent.isTerminating { terminated?() }
                downstream.send(receivedEvent)
            }
        }
    }
}

extension SignalProducer {
    /// Runs side effects around each run: `starting` before the run starts, `started` after
    /// its start handler returned — that is, after any events it sent synchronously — and the
    /// event closures as in `Signal.on(event:…)`. `disposed` runs when the run's work ends.
    public func on(
        starting: (@Sendable () -> Void)? = nil,
        started: (@Sendable () -> Void)? = nil,
        event: (@Sendable (Event) -> Void)? = nil,
        failed: (@Sendable (Error) -> Void)? = nil,
        completed: (@Sendable () -> Void)? = nil,
        interrupted: (@Sendable () -> Void)? = nil,
        terminated: (@Sendable () -> Void)? = nil,
        disposed: (@Sendable () -> Void)? = nil,
        value: (@Sendable (Value) -> Void)? = nil
    ) -> SignalProducer<Value, Error> {
        let producer = self
        return SignalProducer { observer, lifetime in
            starting?()
            producer.startWithSignal { signal, interrupter in
                lifetime += interrupter
                lifetime += signal.on(
                    event: event, failed: failed, completed: completed, interrupted: interrupted,
                    terminated: terminated, disposed: disposed, value: value
                ).observe(observer)
            }
            started?()
        }
    }
}

/// What `logEvents` can log.
public enum LoggingEvent {
    /// Signal events.
    public enum Signal: String, CaseIterable, Sendable {
        case value, completed, failed, terminated, disposed, interrupted
        /// Every event.
        public static let allEvents = Set(allCases)
    }

    /// Producer events: the signal events plus `starting` and `started`.
    public enum SignalProducer: String, CaseIterable, Sendable {
        case starting, started, value, completed, failed, terminated, disposed, interrupted
        /// Every event.
        public static let allEvents = Set(allCases)
    }
}

/// Receives what `logEvents` logs: identifier, event description, and the call site.
public typealias EventLogger = @Sendable (
    _ identifier: String, _ event: String, _ fileName: String, _ functionName: String, _ lineNumber: Int
) -> Void

/// Prints `[identifier] event fileName : functionName : lineNumber`, as ReactiveSwift's default
/// logger does. The default `logger` of `logEvents`.
public func defaultEventLog(identifier: String, event: String, fileName: String, functionName: String, lineNumber: Int) {
    print("[\(identifier)] \(event) \(fileName) : \(functionName) : \(lineNumber)")
}

extension Signal {
    /// Logs the selected events with `logger` as they pass through.
    public func logEvents(
        identifier: String = "",
        events: Set<LoggingEvent.Signal> = LoggingEvent.Signal.allEvents,
        fileName: String = #file,
        functionName: String = #function,
        lineNumber: Int = #line,
        logger: @escaping EventLogger = defaultEventLog
    ) -> Signal<Value, Error> {
        let log: @Sendable (LoggingEvent.Signal, String) -> Void = { kind, text in
            if events.contains(kind) { logger(identifier, text, fileName, functionName, lineNumber) }
        }
        return on(
            failed: { log(.failed, "failed \($0)") },
            completed: { log(.completed, "completed") },
            interrupted: { log(.interrupted, "interrupted") },
            terminated: { log(.terminated, "terminated") },
            disposed: { log(.disposed, "disposed") },
            value: { log(.value, "value \($0)") }
        )
    }
}

extension SignalProducer {
    /// Logs the selected events of each run with `logger`.
    public func logEvents(
        identifier: String = "",
        events: Set<LoggingEvent.SignalProducer> = LoggingEvent.SignalProducer.allEvents,
        fileName: String = #file,
        functionName: String = #function,
        lineNumber: Int = #line,
        logger: @escaping EventLogger = defaultEventLog
    ) -> SignalProducer<Value, Error> {
        let log: @Sendable (LoggingEvent.SignalProducer, String) -> Void = { kind, text in
            if events.contains(kind) { logger(identifier, text, fileName, functionName, lineNumber) }
        }
        return on(
            starting: { log(.starting, "starting") },
            started: { log(.started, "started") },
            failed: { log(.failed, "failed \($0)") },
            completed: { log(.completed, "completed") },
            interrupted: { log(.interrupted, "interrupted") },
            terminated: { log(.terminated, "terminated") },
            disposed: { log(.disposed, "disposed") },
            value: { log(.value, "value \($0)") }
        )
    }
}
