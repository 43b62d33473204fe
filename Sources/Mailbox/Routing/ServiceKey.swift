/// The name of a service that actors register with the `Receptionist`: an identifier and the
/// message type the service's actors take (Akka Typed's `ServiceKey[T]`).
///
/// Two keys are the same service when both their `id` and their message type are equal, so
/// `ServiceKey<Ping>("echo")` and `ServiceKey<String>("echo")` are two services.
///
/// ```
/// let workers = ServiceKey<Job>("workers")
/// system.receptionist.register(worker, with: workers)
/// ```
public struct ServiceKey<Message: Sendable>: Hashable, Sendable, CustomStringConvertible {
    /// The service's identifier, unique per message type.
    public let id: String

    /// A key named `id` for actors that take `Message`.
    public init(_ id: String) {
        self.id = id
    }

    /// A key named `id` for actors that take `Message`.
    public init(id: String) {
        self.id = id
    }

    public var description: String { "ServiceKey<\(Message.self)>(\(id))" }

    /// The key without its message type in the type system, for the receptionist's table.
    var erased: _AnyServiceKey { _AnyServiceKey(id: id, messageType: ObjectIdentifier(Message.self)) }
}

/// A `ServiceKey` with its message type as a value: what the receptionist's table is keyed by.
struct _AnyServiceKey: Hashable, Sendable {
    let id: String
    let messageType: ObjectIdentifier
}
