/// A supervisor restarted its children more than its intensity allows within its period.
public struct SupervisorIntensityError: Error, Sendable, CustomStringConvertible {
    /// The supervisor.
    public let supervisor: ActorAddress
    /// Its intensity and period.
    public let intensity: Int
    public let period: Duration
    /// The failure that asked for one restart too many.
    public let lastFailure: any Error

    public var description: String {
        "supervisor \(supervisor.path) exceeded \(intensity) restart(s) in \(period); last failure: \(lastFailure)"
    }
}
