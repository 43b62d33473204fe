#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// DEBUG builds only: which actor's mailbox run the current thread is executing, so that the
/// cell's and the context's consumer-only operations can check they are called inside it
/// (`ActorCell.assertInMailboxRun()`, as swift-nio's `EventLoop.assertInEventLoop()`).
///
/// A thread-local pointer (the cell's identity, never dereferenced), set for the length of a
/// mailbox run and restored after it. Release builds compile none of it.
@usableFromInline
enum _MailboxRunMarker {
    #if DEBUG
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        let error = pthread_key_create(&key, nil)
        precondition(error == 0, "pthread_key_create failed with error \(error)")
        return key
    }()

    /// The cell whose mailbox run this thread is executing, if any.
    @usableFromInline
    static var current: UnsafeMutableRawPointer? {
        pthread_getspecific(key)
    }

    /// Marks the start of `cell`'s mailbox run on this thread; returns what to restore.
    @usableFromInline
    static func enter(_ cell: AnyObject) -> UnsafeMutableRawPointer? {
        let previous = pthread_getspecific(key)
        pthread_setspecific(key, Unmanaged.passUnretained(cell).toOpaque())
        return previous
    }

    /// Marks the end of a mailbox run on this thread.
    @usableFromInline
    static func leave(restoring previous: UnsafeMutableRawPointer?) {
        pthread_setspecific(key, previous)
    }
    #endif
}

extension ActorCell {
    /// DEBUG builds: crashes unless called inside this actor's mailbox run. Guards the
    /// consumer-only state: the behavior, the lifecycle, the context's children, watches, stash
    /// and timers.
    @inlinable
    @inline(__always)
    func assertInMailboxRun(_ function: StaticString = #function) {
        #if DEBUG
        precondition(
            _MailboxRunMarker.current == Unmanaged.passUnretained(self).toOpaque(),
            "\(function) of actor \(address.path) called outside its mailbox run (from another thread, or after its handler returned)")
        #endif
    }
}
