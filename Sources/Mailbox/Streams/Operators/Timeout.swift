import Foundation

// timeout(after:raising:on:) for streams that cannot fail: the time-out brings in the error
// type. (The time-out for streams that can fail is in Scheduling.swift.)

extension Signal where Error == Never {
    /// Forwards events until `interval` seconds have passed on `scheduler`, then fails with
    /// `error` (unless the signal terminated first); see `timeout(after:raising:on:)`.
    public func timeout<NewError>(after interval: TimeInterval, raising error: NewError, on scheduler: any DateScheduler) -> Signal<Value, NewError> {
        promoteError(NewError.self).timeout(after: interval, raising: error, on: scheduler)
    }
}

extension SignalProducer where Error == Never {
    /// See `Signal.timeout(after:raising:on:)`; the time starts with each run.
    public func timeout<NewError>(after interval: TimeInterval, raising error: NewError, on scheduler: any DateScheduler) -> SignalProducer<Value, NewError> {
        promoteError(NewError.self).timeout(after: interval, raising: error, on: scheduler)
    }
}
