/// How `flatten` and `flatMap` combine the inner streams of a stream of streams.
///
/// In every strategy an inner stream that is *interrupted* counts as *completed* (it stops
/// contributing; the flattened stream goes on), an inner failure fails the flattened stream,
/// and the flattened stream completes once the outer stream has completed and no inner stream
/// is running or waiting.
public struct FlattenStrategy: Sendable, CustomStringConvertible {
    @usableFromInline
    enum Kind: Sendable, Equatable {
        case concurrent(limit: UInt)
        case latest
        case race
        case throttle
    }

    @usableFromInline
    let kind: Kind

    @inlinable
    init(_ kind: Kind) {
        self.kind = kind
    }

    /// Every inner stream runs as soon as it arrives; values are forwarded as they come.
    public static let merge = FlattenStrategy(.concurrent(limit: .max))

    /// One inner stream at a time, in arrival order: the next starts when the previous one
    /// has completed (inner streams wait in an unbounded queue).
    public static let concat = FlattenStrategy(.concurrent(limit: 1))

    /// At most `limit` inner streams at a time; the others wait, in arrival order.
    ///
    /// - Precondition: `limit > 0`.
    public static func concurrent(limit: UInt) -> FlattenStrategy {
        precondition(limit > 0, "FlattenStrategy.concurrent(limit:) requires a positive limit")
        return FlattenStrategy(.concurrent(limit: limit))
    }

    /// Only the latest inner stream: when a new one arrives the previous one is disposed at
    /// once (its run is interrupted) before the new one starts.
    public static let latest = FlattenStrategy(.latest)

    /// Every inner stream starts; the first to send a value wins and the others are disposed.
    /// Inner streams arriving after a winner is chosen are ignored, and the flattened stream
    /// terminates with the winner.
    public static let race = FlattenStrategy(.race)

    /// An inner stream arriving while another one runs is dropped (never started).
    public static let throttle = FlattenStrategy(.throttle)

    public var description: String {
        switch kind {
        case .concurrent(limit: .max): return "merge"
        case .concurrent(limit: 1): return "concat"
        case let .concurrent(limit): return "concurrent(limit: \(limit))"
        case .latest: return "latest"
        case .race: return "race"
        case .throttle: return "throttle"
        }
    }
}

/// A type that can be started as a `SignalProducer`: `SignalProducer` itself, `Signal`
/// (hot: started means observed) and the properties. What `flatten`/`flatMap` accept.
public protocol SignalProducerConvertible<Value, Error>: SendableMetatype {
    /// The value type.
    associatedtype Value
    /// The error type.
    associatedtype Error: Swift.Error
    /// A producer for `self`.
    var producer: SignalProducer<Value, Error> { get }
}

extension SignalProducer: SignalProducerConvertible {
    /// `self`.
    @inlinable
    public var producer: SignalProducer<Value, Error> { self }
}

extension Signal: SignalProducerConvertible {
    /// A producer that observes this signal when started.
    public var producer: SignalProducer<Value, Error> { SignalProducer(self) }
}
