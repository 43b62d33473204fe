// `SignalProtocol` and `SignalProducerProtocol`: the protocols ReactiveSwift code constrains
// its own operator extensions with (`extension SignalProducerProtocol where Value == Int`).

/// A signal, as a protocol: lets extensions be written once for `Signal` with constraints on
/// its `Value` and `Error` (`extension SignalProtocol where Value: Numeric { … }`).
///
/// `Signal` is the only conformer Mailbox declares.
public protocol SignalProtocol<Value, Error>: AnyObject {
    /// The type of values the signal sends.
    associatedtype Value

    /// The type of error the signal can fail with.
    associatedtype Error: Swift.Error

    /// The signal itself.
    var signal: Signal<Value, Error> { get }
}

extension Signal: SignalProtocol {
    /// `self`.
    @inlinable
    public var signal: Signal<Value, Error> { self }
}

/// A producer, as a protocol: lets extensions be written once for `SignalProducer` with
/// constraints on its `Value` and `Error`.
///
/// `SignalProducer` is the only conformer Mailbox declares.
public protocol SignalProducerProtocol<Value, Error> {
    /// The type of values the producer's runs send.
    associatedtype Value

    /// The type of error the producer's runs can fail with.
    associatedtype Error: Swift.Error

    /// The producer itself.
    var producer: SignalProducer<Value, Error> { get }
}

extension SignalProducer: SignalProducerProtocol {
    /// The type of the signals this producer's runs create.
    public typealias ProducedSignal = Signal<Value, Error>
}
