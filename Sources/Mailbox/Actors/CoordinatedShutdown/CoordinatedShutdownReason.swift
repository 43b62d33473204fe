#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Why an actor system's coordinated shutdown ran (Akka's `CoordinatedShutdown.Reason`).
///
/// Tasks can read it (`system.coordinatedShutdown.reason`) to act differently, for example
/// to tell clients "restarting" rather than "shutting down".
///
/// A struct with a private value, so new reasons can be added without breaking users; compare
/// with `==` against the static members, and read `signalNumber` for `.signal(_:)`.
public struct ShutdownReason: Hashable, Sendable, CustomStringConvertible {
    private enum Value: Hashable, Sendable {
        case unknown
        case actorSystemTerminate
        case signal(Int32)
        case custom(String)
    }

    private let value: Value
    private init(_ value: Value) { self.value = value }

    /// No reason given (Akka's `UnknownReason`).
    public static let unknown = ShutdownReason(.unknown)

    /// `ActorSystem.terminate()` ran it (Akka's `ActorSystemTerminateReason`).
    public static let actorSystemTerminate = ShutdownReason(.actorSystemTerminate)

    /// The process received `number` (`SIGINT`, `SIGTERM`…) with the signal hook installed
    /// (`CoordinatedShutdown.installSignalHandlers(_:)`); the counterpart of Akka's
    /// `JvmExitReason`.
    public static func signal(_ number: Int32) -> ShutdownReason { ShutdownReason(.signal(number)) }

    /// A reason of the application's own, by name (Akka: an object extending `Reason`).
    public static func custom(_ name: String) -> ShutdownReason { ShutdownReason(.custom(name)) }

    /// The signal's number for `.signal(_:)`, else `nil`.
    public var signalNumber: Int32? {
        if case let .signal(number) = value { return number }
        return nil
    }

    public var description: String {
        switch value {
        case .unknown: return "unknown"
        case .actorSystemTerminate: return "actor system terminate"
        case let .signal(number): return "signal \(Self.signalName(number))"
        case let .custom(name): return name
        }
    }

    /// `SIGTERM` for 15, and so on for the signals a server is commonly stopped with.
    static func signalName(_ number: Int32) -> String {
        switch number {
        case SIGINT: return "SIGINT"
        case SIGTERM: return "SIGTERM"
        case SIGHUP: return "SIGHUP"
        case SIGQUIT: return "SIGQUIT"
        case SIGUSR1: return "SIGUSR1"
        case SIGUSR2: return "SIGUSR2"
        default: return "\(number)"
        }
    }
}
