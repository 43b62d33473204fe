/// One `supervise(_:).onFailure(_:)` rule: the behavior a restart rebuilds, and the strategy.
@usableFromInline
final class SupervisionRule<Message: Sendable> {
    let behavior: Behavior<Message>
    let strategy: SupervisorStrategy
    let matches: (any Error) -> Bool

    init(behavior: Behavior<Message>, strategy: SupervisorStrategy, matches: @escaping (any Error) -> Bool) {
        self.behavior = behavior
        self.strategy = strategy
        self.matches = matches
    }
}
