@testable import Mailbox

/// A disposable that counts its `dispose()` calls and records them in a shared log, so tests can
/// check "disposed exactly once" and disposal order. Unlike `AnyDisposable` it counts every
/// call, so a container that disposes an element twice is caught.
final class DisposalProbe: Disposable {
    let name: String
    private let calls = Locked(0)
    private let log: Locked<[String]>?
    /// Kept alive as long as the probe is; lets a test see when a container releases it.
    private let payload: Tracked?

    init(_ name: String = "", log: Locked<[String]>? = nil, payload: Tracked? = nil) {
        self.name = name
        self.log = log
        self.payload = payload
    }

    /// How many times `dispose()` was called.
    var disposeCount: Int { calls.snapshot }

    var isDisposed: Bool { disposeCount > 0 }

    func dispose() {
        calls.increment()
        log?.append(name)
    }
}
