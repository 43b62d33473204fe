@testable import Mailbox
import Synchronization

/// Thread-safe event collector for stream tests: the observer closures are `@Sendable`, so
/// tests record into this instead of a captured `var`.
final class EventRecorder<Value, Error: Swift.Error> {
    private let lock = Lock()
    private var storage: [Event<Value, Error>] = []

    init() {}

    var events: [Event<Value, Error>] { lock.withLock { storage } }
    var values: [Value] { events.compactMap { $0.value } }
    var terminal: Event<Value, Error>? { events.last.flatMap { $0.isTerminating ? $0 : nil } }
    var isCompleted: Bool { if case .completed? = terminal { return true } else { return false } }
    var isInterrupted: Bool { if case .interrupted? = terminal { return true } else { return false } }
    var error: Error? { terminal?.error }

    func record(_ event: Event<Value, Error>) { lock.withLock { storage.append(event) } }

    var observer: Signal<Value, Error>.Observer {
        Signal<Value, Error>.Observer { [self] event in record(event) }
    }
}

/// A thread-safe counter / box for tests.
final class Box<T> {
    private let lock = Lock()
    private var _value: T
    init(_ value: T) { _value = value }
    var value: T {
        get { lock.withLock { _value } }
        set { lock.withLock { _value = newValue } }
    }
    func modify<R>(_ body: (inout T) -> R) -> R { lock.withLock { body(&_value) } }
}

struct TestError: Swift.Error, Equatable {
    var code: Int = 0
}

import Testing

/// Namespace for every stream suite, so `swift test --filter Streams` selects them all.
@Suite("Streams")
enum Streams {}

// `storage` is only touched with `lock` held.
extension EventRecorder: @unchecked Sendable {}

// `_value` is only touched with `lock` held.
extension Box: @unchecked Sendable {}
