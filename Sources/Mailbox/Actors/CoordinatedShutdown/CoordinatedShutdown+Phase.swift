extension CoordinatedShutdown {
    /// A named step of a coordinated shutdown. Phases run one after the other, in the order of
    /// `CoordinatedShutdown.Configuration.phases`; the tasks of one phase run concurrently.
    ///
    /// The default phases are Akka's, without its cluster phases (there is no cluster here):
    ///
    /// | Phase | For |
    /// |---|---|
    /// | `before-service-unbind` | the application's first steps (announce, stop health checks) |
    /// | `service-unbind` | stop accepting new work: close listening sockets |
    /// | `service-requests-done` | finish or refuse work in flight: tell clients, flush, close connections |
    /// | `service-stop` | stop the service's own resources |
    /// | `before-actor-system-terminate` | the application's last steps while actors still run |
    /// | `actor-system-terminate` | the runtime stops every actor (children first), fails asks, joins its threads |
    ///
    /// Thread-safety: a value; `Sendable`.
    public struct Phase: Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
        /// The phase's name, as Akka spells it (`"service-unbind"`).
        public let name: String

        /// A phase with this name; add it to `Configuration.phases` to use it.
        public init(_ name: String) {
            self.name = name
        }

        public init(stringLiteral name: String) {
            self.init(name)
        }

        /// The first phase, for the application's own tasks.
        public static let beforeServiceUnbind = Phase("before-service-unbind")
        /// Stop accepting new connections or requests.
        public static let serviceUnbind = Phase("service-unbind")
        /// Wait for (or cut) the requests in flight; tell connected clients.
        public static let serviceRequestsDone = Phase("service-requests-done")
        /// Stop the services themselves.
        public static let serviceStop = Phase("service-stop")
        /// The application's last tasks while the actors still run.
        public static let beforeActorSystemTerminate = Phase("before-actor-system-terminate")
        /// The last phase: its tasks run, then the system stops every actor and its threads.
        public static let actorSystemTerminate = Phase("actor-system-terminate")

        /// The default phases, in the order they run.
        public static let defaultOrder: [Phase] = [
            .beforeServiceUnbind, .serviceUnbind, .serviceRequestsDone, .serviceStop,
            .beforeActorSystemTerminate, .actorSystemTerminate,
        ]

        public var description: String { name }
    }
}
