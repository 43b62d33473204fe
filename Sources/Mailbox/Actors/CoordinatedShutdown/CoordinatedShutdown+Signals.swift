#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
import Synchronization

extension CoordinatedShutdown {
    /// Opt-in: runs the coordinated shutdown (reason `.signal(number)`) when the process
    /// receives one of `signals` (Akka runs it from a JVM shutdown hook; OTP's `init` stops on
    /// `SIGTERM`).
    ///
    /// ```swift
    /// system.coordinatedShutdown.installSignalHandlers([SIGINT, SIGTERM])
    /// Task {
    ///     _ = await system.whenTerminated
    ///     exit(0)
    /// }
    /// dispatchMain()
    /// ```
    ///
    /// Each signal's disposition is set to *ignore* (so it no longer ends the process) and a
    /// dispatch signal source watches it instead. Later signals of the same kind while the
    /// shutdown runs do nothing more. The hook stays installed until it is disposed or the
    /// system terminates; either restores the dispositions found at installation. Install it
    /// once per process and signal: another hook (or `signal()` call) for the same signal
    /// meanwhile makes the restored disposition wrong.
    ///
    /// A signal sent to the process (`kill -TERM <pid>`, ^C in a terminal, a service manager)
    /// is seen. One sent to a single thread that blocks it is not: `raise()` from a Swift task
    /// (Dispatch's worker threads block signals) stays pending on that thread; send it with
    /// `kill(getpid(), …)` instead.
    ///
    /// Thread-safety: call from any thread. The process's signal dispositions are global:
    /// this changes them for every thread.
    ///
    /// - Parameter signals: Signal numbers; not `SIGKILL` or `SIGSTOP`, which cannot be caught
    ///   (a precondition).
    /// - Returns: The hook; `dispose()` uninstalls it. The system also keeps it until it
    ///   terminates, so the result may be ignored.
    @discardableResult
    public func installSignalHandlers(_ signals: [Int32] = [SIGINT, SIGTERM]) -> any Disposable {
        for number in signals {
            precondition(number != SIGKILL && number != SIGSTOP, "signal \(number) cannot be caught")
        }
        let hook = SignalHook(signals: signals, label: "\(systemName).signals") { [weak self] number in
            guard let self else { return }
            Task { await self.run(reason: .signal(number)) }
        }
        signalHookInstalled(hook)
        return hook
    }
}

/// Watches signals with dispatch sources after setting their disposition to ignore; disposing
/// cancels the sources and restores the dispositions found.
///
/// Thread-safety: `installed` is behind its lock; `fired` is atomic.
final class SignalHook: Disposable {
    fileprivate struct Installed {
        var entries: [(number: Int32, previous: PreviousDisposition, source: any DispatchSourceSignal)]
    }

    #if canImport(Darwin)
    typealias PreviousDisposition = sig_t?
    #else
    typealias PreviousDisposition = __sighandler_t?
    #endif

    private let installed: LockedValueBox<Installed?>
    private let fired = Atomic<Bool>(false)

    init(signals: [Int32], label: String, onSignal: @escaping @Sendable (Int32) -> Void) {
        let queue = DispatchQueue(label: label)
        var entries: [(number: Int32, previous: PreviousDisposition, source: any DispatchSourceSignal)] = []
        installed = LockedValueBox(nil)
        for number in Set(signals).sorted() {
            let previous = signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { [weak self] in
                guard let self, !fired.exchange(true, ordering: .acquiringAndReleasing) else { return }
                onSignal(number)
            }
            source.resume()
            entries.append((number, previous, source))
        }
        installed.withLockedValue { $0 = Installed(entries: entries) }
    }

    var isDisposed: Bool { installed.withLockedValue { $0 == nil } }

    func dispose() {
        guard let removed = installed.withLockedValue({ installed in
            defer { installed = nil }
            return installed
        }) else { return }
        for entry in removed.entries {
            entry.source.cancel()
            signal(entry.number, entry.previous)
        }
    }
}

// Only reached through the `installed` lock of its `SignalHook`: the dispatch sources and the C
// handler pointers in it are not marked `Sendable`, but are read and cancelled only there.
extension SignalHook.Installed: @unchecked Sendable {}
