/// The failure of an actor that did not handle the `terminated` event of an actor it watched
/// (a death pact, as in Akka).
public struct DeathPactError: Error, Sendable, CustomStringConvertible {
    /// The watched actor that terminated.
    public let terminated: AnyActorRef

    public var description: String {
        "death pact: watched actor \(terminated.address.path) terminated and the termination was not handled"
    }
}
