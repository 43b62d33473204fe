import Foundation

/// Erlang/OTP-style supervision trees: a supervisor actor starts children from specifications
/// and restarts them by a strategy, within an intensity/period limit.
///
/// ```swift
/// let tree = try system.spawn(
///     Supervisor.behavior(strategy: .oneForOne, intensity: 3, period: .seconds(5), children: [
///         ChildSpec(id: "db") { database() },
///         ChildSpec(id: "cache", restart: .transient) { cache() },
///     ]),
///     name: "app")
/// ```
///
/// - A child that fails and whose own `supervise` rules do not decide (or escalate) is
///   suspended: its mailbox keeps filling, nothing is handled. The supervisor then restarts it
///   *in place* (same ref, queued messages kept in order, the failing message dropped) together
///   with the set its strategy names:
///   - `oneForOne`: the failed child only;
///   - `allForOne`: every child;
///   - `restForOne`: the failed child and every child started after it.
///   The set is stopped one child at a time in reverse start order (each child's `preRestart`
///   runs and its own children stop), then started one at a time in start order (each child's
///   `setup` runs before the next child is started), as OTP does.
/// - Restart types: `permanent` children are always restarted, `transient` ones only after a
///   failure, `temporary` ones never (a temporary child that fails or is stopped, or that a
///   strategy would restart, is stopped and forgotten).
/// - Children start one at a time, in order: the supervisor spawns the next child once the
///   previous one's `setup` has run (for a child that is a supervisor, once its own children
///   have started).
/// - A child that *terminated* (it stopped itself, or was stopped from outside) and must be
///   restarted is spawned again from its specification: a new actor with the same name and a
///   new ref. Find it with `SupervisorMessage.whichChildren`.
/// - Intensity/period: more than `intensity` restarts within any `period` (a sliding window,
///   like `SupervisorStrategy.restart(limit:within:)`) fail the supervisor with
///   `SupervisorIntensityError`; its children stop, newest first, and the failure goes to the
///   supervisor's own supervision (its parent, or the guardian strategy).
///
/// Thread-safety: the supervisor is an actor; talk to it with `SupervisorMessage`s.
public enum Supervisor {
    /// Which children are restarted with a failed one.
    public enum Strategy: Sendable, Equatable {
        /// Only the failed child.
        case oneForOne
        /// Every child.
        case allForOne
        /// The failed child and every child started after it.
        case restForOne
    }

    /// A supervisor behavior: spawns `children` in order when it starts, then supervises them.
    ///
    /// - Parameters:
    ///   - intensity: restarts allowed within `period` (OTP's default: 1).
    ///   - period: the sliding window for `intensity` (OTP's default: 5 seconds), on the
    ///     supervisor's `DateScheduler`.
    /// - Precondition: child ids are unique valid actor names; `intensity >= 0`; `period > 0`.
    public static func behavior(
        strategy: Strategy, intensity: Int = 1, period: Duration = .seconds(5), children: [ChildSpec]
    ) -> Behavior<SupervisorMessage> {
        precondition(intensity >= 0, "intensity cannot be negative, not \(intensity)")
        precondition(period > .zero, "period must be positive, not \(period)")
        precondition(Set(children.map(\.id)).count == children.count, "child ids must be unique: \(children.map(\.id))")
        return .object { context in
            try SupervisorBehavior(context: context, strategy: strategy, intensity: intensity, period: period, specs: children)
        }
    }
}

/// What a `Supervisor` starts: an id (also the child's actor name), a restart type, and the
/// child's behavior.
public struct ChildSpec: Sendable {
    /// When a child is restarted.
    public enum Restart: Sendable, Equatable {
        /// Always.
        case permanent
        /// Only after a failure; a child that stops normally stays stopped.
        case transient
        /// Never.
        case temporary
    }

    /// The child's id and actor name.
    public let id: String
    /// When the child is restarted.
    public let restart: Restart
    /// Spawns the child; a one-for-one supervisor passes its shared intensity window.
    @usableFromInline
    let start: @Sendable (ActorContext<SupervisorMessage>, SharedRestartWindow?) throws -> AnyTarget

    /// A child started with `behavior()` (called again for each new actor, not for restarts in
    /// place, which rebuild the behavior's `setup`).
    ///
    /// Call it with a concrete message type where you can: the child's mailbox run is then
    /// compiled specialised for that type in your module.
    @inlinable
    public init<Message: Sendable>(
        id: String, restart: Restart = .permanent, props: Props = Props(),
        _ behavior: @escaping @Sendable () -> Behavior<Message>
    ) {
        self.id = id
        self.restart = restart
        self.start = { context, window in
            try context.spawnChild(behavior(), name: id, props: props, managed: true, delegatedWindow: window) { $0.runMailbox() }.target
        }
    }
}

/// Messages a `Supervisor` understands.
public enum SupervisorMessage: Sendable {
    /// Replies with the children in start order.
    case whichChildren(replyTo: ActorRef<[SupervisedChild]>)
    /// Replies with the live child with this id, if any.
    case child(id: String, replyTo: ActorRef<AnyActorRef?>)
}

/// A supervisor's child, as `whichChildren` reports it.
public struct SupervisedChild: Sendable, CustomStringConvertible {
    /// The child's id.
    public let id: String
    /// The running child, or `nil` if it is not running (a transient child that stopped).
    public let ref: AnyActorRef?
    /// Its restart type.
    public let restart: ChildSpec.Restart

    public var description: String { "\(id) (\(restart)): \(ref?.path ?? "not running")" }
}

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

extension AnyActorRef {
    /// This ref with its message type, if the actor takes `Message`s.
    public func typed<Message: Sendable>(as type: Message.Type) -> ActorRef<Message>? {
        (target as? ActorRefTarget<Message>).map(ActorRef.init)
    }
}

/// The `Supervisor` behavior. Runs inside its actor; the cell hands it its children's
/// failures, restart acknowledgements and terminations (`ActorCell.managingBehavior`).
final class SupervisorBehavior: AbstractBehavior<SupervisorMessage> {
    private struct Entry {
        let spec: ChildSpec
        var target: AnyTarget?
        /// Incremented each time the child is (re)started: an event from before that is stale.
        var epoch = 0
    }

    private enum Step {
        case stop(String)
        case start(String)
        /// A live child restarted alone: both halves in one exchange.
        case restartInPlace(String)
    }

    private enum Pending {
        case failed(AnyTarget, error: any Error, epoch: Int)
        case terminated(id: String, failure: (any Error)?, epoch: Int)
    }

    private let strategy: Supervisor.Strategy
    private let intensity: Int
    private let period: Duration
    private var entries: [Entry]
    /// Intensity/period, shared with one-for-one children (`delegatedWindow`).
    private let restartWindow: SharedRestartWindow
    /// One-for-one children restart themselves against `restartWindow` while it admits (no
    /// ordering to keep, nobody else to restart): only a refused restart comes here.
    private var delegatedWindow: SharedRestartWindow? { strategy == .oneForOne ? restartWindow : nil }
    /// The restart in progress: steps left, and the child whose acknowledgement is awaited.
    private var steps: [Step] = []
    private var awaiting: AnyTarget?
    /// Failures and terminations that arrived during a restart, handled after it.
    private var queued: [Pending] = []
    /// This supervisor is itself a `Supervisor`'s child: it tells its parent it has started
    /// once its own children have started.
    private var owesStartAcknowledgement: Bool
    /// Until every child has started, questions wait here (as OTP's `start_link` returns only
    /// then, nobody sees a half-started tree).
    private var isStarting = true
    private var questionsDuringStart: [SupervisorMessage] = []

    init(context: ActorContext<SupervisorMessage>, strategy: Supervisor.Strategy, intensity: Int, period: Duration, specs: [ChildSpec]) throws {
        self.strategy = strategy
        self.intensity = intensity
        self.period = period
        self.entries = specs.map { Entry(spec: $0) }
        self.restartWindow = SharedRestartWindow(intensity: intensity, period: period)
        self.owesStartAcknowledgement = context.cell.supervision?.isManaged == true
        super.init(context: context)
        context.cell.supervisionState().managing = self
        // One at a time, in order: each child's `setup` runs before the next child is spawned.
        steps = specs.map { .start($0.id) }
        try runSteps()
    }

    override func receive(_ message: SupervisorMessage) throws -> Behavior<SupervisorMessage> {
        if isStarting {
            questionsDuringStart.append(message)
            return .same
        }
        answer(message)
        return .same
    }

    private func answer(_ message: SupervisorMessage) {
        switch message {
        case let .whichChildren(replyTo):
            replyTo.tell(entries.map { SupervisedChild(id: $0.spec.id, ref: $0.target.map(AnyActorRef.init), restart: $0.spec.restart) })
        case let .child(id, replyTo):
            replyTo.tell(entries.first { $0.spec.id == id }?.target.map(AnyActorRef.init))
        }
    }

    private var isRestarting: Bool { awaiting != nil || !steps.isEmpty }

    private func index(of child: AnyTarget) -> Int? {
        entries.firstIndex { $0.target === child }
    }

    private func index(id: String) -> Int? {
        entries.firstIndex { $0.spec.id == id }
    }

    // MARK: Called by the cell

    func childFailed(_ child: AnyTarget, error: any Error) throws {
        guard let index = index(of: child) else {
            child.sendSystem(.stop)
            return
        }
        if isRestarting {
            queued.append(.failed(child, error: error, epoch: entries[index].epoch))
            return
        }
        try handle(index: index, failure: error, hasTerminated: false)
    }

    func childTerminated(_ child: AnyTarget, failure: (any Error)?) throws {
        guard let index = index(of: child) else { return }
        entries[index].target = nil
        if child === awaiting {
            // It stopped instead of acknowledging: its step is done (a start step spawns it anew).
            awaiting = nil
            try runSteps()
            return
        }
        if isRestarting {
            queued.append(.terminated(id: entries[index].spec.id, failure: failure, epoch: entries[index].epoch))
            return
        }
        try handle(index: index, failure: failure, hasTerminated: true)
    }

    func childStepDone(_ child: AnyTarget) throws {
        guard child === awaiting else { return }
        awaiting = nil
        try runSteps()
    }

    // MARK: Deciding and restarting

    /// Applies the restart type and the strategy to the child at `index`, which failed
    /// (suspended, or terminated with `failure`) or terminated normally (`failure == nil`).
    private func handle(index: Int, failure: (any Error)?, hasTerminated: Bool) throws {
        let spec = entries[index].spec
        let restarts: Bool
        switch spec.restart {
        case .permanent: restarts = true
        case .transient: restarts = failure != nil
        case .temporary: restarts = false
        }
        guard restarts else {
            if !hasTerminated { entries[index].target?.sendSystem(.stop) }
            if spec.restart == .temporary {
                entries.remove(at: index)
            } else {
                entries[index].target = nil
            }
            return
        }
        try countRestart(failure: failure ?? ChildStoppedError(id: spec.id))
        let set: ArraySlice<Entry>
        switch strategy {
        case .oneForOne: set = entries[index...index]
        case .allForOne: set = entries[...]
        case .restForOne: set = entries[index...]
        }
        if set.count == 1, !hasTerminated, entries[index].target != nil {
            // Nothing to order: one exchange instead of two.
            steps = [.restartInPlace(spec.id)]
        } else {
            steps = set.reversed().map { .stop($0.spec.id) }
                + set.filter { $0.spec.restart != .temporary || $0.spec.id == spec.id }.map { .start($0.spec.id) }
        }
        try runSteps()
    }

    /// Counts a restart in the sliding window; throws when it is one too many.
    private func countRestart(failure: any Error) throws {
        if !restartWindow.admit(at: context.scheduler.currentDate) {
            steps = []
            throw SupervisorIntensityError(supervisor: context.address, intensity: intensity, period: period, lastFailure: failure)
        }
    }

    /// Runs the restart's steps until one waits for a child's acknowledgement; then the queued
    /// events, once the restart is over.
    private func runSteps() throws {
        while awaiting == nil, !steps.isEmpty {
            let step = steps.removeFirst()
            switch step {
            case let .stop(id):
                guard let index = index(id: id), let target = entries[index].target else { continue }
                if entries[index].spec.restart == .temporary {
                    // Never restarted: stopped for good.
                    target.sendSystem(.stop)
                    entries.remove(at: index)
                } else {
                    awaiting = target
                    target.sendSystem(.restartStop)
                }
            case let .restartInPlace(id):
                guard let index = index(id: id), let target = entries[index].target else { continue }
                entries[index].epoch += 1
                target.sendSystem(.restartNow)
                awaiting = target
            case let .start(id):
                guard let index = index(id: id) else { continue }
                entries[index].epoch += 1
                if let target = entries[index].target {
                    target.sendSystem(.restartStart)
                    awaiting = target
                } else {
                    let target = try entries[index].spec.start(context, entries[index].spec.restart == .temporary ? nil : delegatedWindow)
                    entries[index].target = target
                    awaiting = target
                }
            }
        }
        if isStarting, !isRestarting {
            isStarting = false
            if owesStartAcknowledgement {
                owesStartAcknowledgement = false
                context.cell.parent?.sendSystem(.restartStepDone(context.cell))
            }
            for question in questionsDuringStart { answer(question) }
            questionsDuringStart = []
        }
        while !isRestarting, !queued.isEmpty {
            switch queued.removeFirst() {
            case let .failed(child, error, epoch):
                guard let index = index(of: child), entries[index].epoch == epoch else { continue }
                try handle(index: index, failure: error, hasTerminated: false)
            case let .terminated(id, failure, epoch):
                // Stale if the restart spawned it again meanwhile.
                guard let index = index(id: id), entries[index].target == nil, entries[index].epoch == epoch else { continue }
                try handle(index: index, failure: failure, hasTerminated: true)
            }
        }
    }
}

/// The failure recorded for a permanent child that stopped normally and was restarted.
struct ChildStoppedError: Error, CustomStringConvertible {
    let id: String
    var description: String { "child \(id) stopped" }
}
