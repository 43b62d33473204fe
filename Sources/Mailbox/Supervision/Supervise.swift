/// The first half of `Behavior.supervise(_:).onFailure(_:)`: a behavior waiting for its rule.
public struct Supervise<Message: Sendable> {
    let behavior: Behavior<Message>

    /// The behavior, with every failure handled by `strategy`.
    public func onFailure(_ strategy: SupervisorStrategy) -> Behavior<Message> {
        Behavior(.supervised(SupervisionRule(behavior: behavior, strategy: strategy, matches: { _ in true })))
    }

    /// The behavior, with failures whose error is a `Failure` handled by `strategy`; other
    /// errors go to the enclosing rules (or the default: stop).
    public func onFailure<Failure: Error>(of type: Failure.Type, _ strategy: SupervisorStrategy) -> Behavior<Message> {
        Behavior(.supervised(SupervisionRule(behavior: behavior, strategy: strategy, matches: { $0 is Failure })))
    }

    /// The behavior, with the directive for each failure chosen by `decide`. Restarts chosen
    /// this way are unlimited; for limits or back-off use
    /// `onFailure(.restart(limit:within:).deciding { … })`.
    public func onFailure(decide: @escaping @Sendable (any Error) -> SupervisorDirective) -> Behavior<Message> {
        onFailure(SupervisorStrategy.restart.deciding(decide))
    }
}
