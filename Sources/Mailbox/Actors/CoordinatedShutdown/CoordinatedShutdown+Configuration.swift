extension CoordinatedShutdown {
    /// The phases of a coordinated shutdown, in order, and how long each may take
    /// (`ActorSystem.Configuration.coordinatedShutdown`).
    ///
    /// ```swift
    /// var shutdown = CoordinatedShutdown.Configuration()
    /// shutdown.phaseTimeouts[.serviceRequestsDone] = .seconds(30)   // long flushes
    /// let system = ActorSystem(name: "app", configuration: .init(coordinatedShutdown: shutdown))
    /// ```
    ///
    /// Every phase *recovers* (Akka's `recover = on`): a task that fails or is still running at
    /// the phase's time-out is logged, listed in the report, and the next phase starts.
    public struct Configuration: Sendable {
        /// The phases in the order they run. Names are unique, and the last one is
        /// `.actorSystemTerminate`, the step that stops the actors. Default:
        /// `Phase.defaultOrder`. (Akka orders phases as a graph of `depends-on`; a list is that
        /// graph sorted.)
        public var phases: [Phase]
        /// How long a phase's tasks may run, for phases not in `phaseTimeouts`. Default: 5 s,
        /// as Akka's `default-phase-timeout`.
        public var defaultPhaseTimeout: Duration
        /// Per-phase time-outs. Default: 10 s for `.actorSystemTerminate` (as Akka), which is
        /// also how long the system waits for its actors to stop.
        public var phaseTimeouts: [Phase: Duration]

        /// The default configuration described on each property.
        public init(
            phases: [Phase] = Phase.defaultOrder,
            defaultPhaseTimeout: Duration = .seconds(5),
            phaseTimeouts: [Phase: Duration] = [.actorSystemTerminate: .seconds(10)]
        ) {
            self.phases = phases
            self.defaultPhaseTimeout = defaultPhaseTimeout
            self.phaseTimeouts = phaseTimeouts
        }

        /// How long `phase`'s tasks may run.
        public func timeout(of phase: Phase) -> Duration {
            phaseTimeouts[phase] ?? defaultPhaseTimeout
        }

        /// What is wrong with this configuration, or `nil`.
        func problem() -> String? {
            guard phases.last == .actorSystemTerminate else {
                return "the last phase must be \(Phase.actorSystemTerminate), not \(phases.last.map(\.name) ?? "none")"
            }
            if Set(phases).count != phases.count {
                var seen = Set<Phase>()
                let repeated = phases.first { !seen.insert($0).inserted }!
                return "phase \(repeated) is listed twice"
            }
            if defaultPhaseTimeout <= .zero {
                return "defaultPhaseTimeout must be positive, not \(defaultPhaseTimeout)"
            }
            if let (phase, timeout) = phaseTimeouts.first(where: { $0.value <= .zero }) {
                return "the time-out of \(phase) must be positive, not \(timeout)"
            }
            return nil
        }
    }
}
