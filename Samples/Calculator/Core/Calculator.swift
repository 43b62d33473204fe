import Mailbox

// The calculator of RxSwift's example app (RxExample/Examples/Calculator), as a Mailbox
// `Store`: the state is a pure function of the keys pressed so far.

/// An arithmetic operator key.
public enum CalculatorOperator: Sendable, Equatable {
    case addition, subtraction, multiplication, division

    /// Applies the operator.
    func perform(_ lhs: Double, _ rhs: Double) -> Double {
        switch self {
        case .addition: lhs + rhs
        case .subtraction: lhs - rhs
        case .multiplication: lhs * rhs
        case .division: lhs / rhs
        }
    }
}

/// A key of the calculator: the store's input.
public enum CalculatorKey: Sendable, Equatable {
    case clear
    case changeSign
    case percent
    case operation(CalculatorOperator)
    case equal
    case digit(Int)
    case dot
}

/// What the calculator holds: what is on the screen and the pending operation.
public enum CalculatorState: Sendable, Equatable {
    /// Typing the first operand.
    case oneOperand(screen: String)
    /// Showing the result of `=` (or "Error"): a digit or `.` starts a new number, an operator
    /// continues from the result. (RxSwift's example appends digits to a result; a console
    /// reads better this way.)
    case result(screen: String)
    /// An operator was pressed after the first operand; the screen shows the operand.
    case oneOperandAndOperator(operand: Double, operator: CalculatorOperator)
    /// Typing the second operand.
    case twoOperandsAndOperator(operand: Double, operator: CalculatorOperator, screen: String)

    /// The state of a calculator just switched on (or cleared).
    public static let initial = CalculatorState.oneOperand(screen: "0")

    /// The text on the screen.
    public var display: String {
        switch self {
        case let .oneOperand(screen), let .result(screen): screen
        case let .oneOperandAndOperator(operand, _): format(operand)
        case let .twoOperandsAndOperator(_, _, screen): screen
        }
    }

    /// The reducer: the state after pressing `key` in `state`. Pure and total — every key is
    /// valid in every state (an operator after "Error" continues from 0).
    public static func reduce(_ state: CalculatorState, _ key: CalculatorKey) -> CalculatorState {
        switch key {
        case .clear:
            return .initial
        case let .digit(digit):
            return state.appending(String(digit))
        case .dot:
            if case .result = state { return .oneOperand(screen: "0.") }
            return state.mapScreen { $0.contains(".") ? $0 : $0 + "." }
        case .changeSign:
            return state.mapScreen { screen in
                guard let value = Double(screen), value != 0 else { return screen }
                return screen.hasPrefix("-") ? String(screen.dropFirst()) : "-" + screen
            }
        case .percent:
            return state.mapScreen { format((Double($0) ?? 0) / 100) }
        case let .operation(next):
            switch state {
            case let .oneOperand(screen), let .result(screen):
                return .oneOperandAndOperator(operand: Double(screen) ?? 0, operator: next)
            case let .oneOperandAndOperator(operand, _):
                return .oneOperandAndOperator(operand: operand, operator: next)
            case let .twoOperandsAndOperator(operand, pending, screen):
                let result = pending.perform(operand, Double(screen) ?? 0)
                guard result.isFinite else { return .result(screen: errorScreen) }
                return .oneOperandAndOperator(operand: result, operator: next)
            }
        case .equal:
            guard case let .twoOperandsAndOperator(operand, pending, screen) = state else { return state }
            return .result(screen: format(pending.perform(operand, Double(screen) ?? 0)))
        }
    }

    /// Types `text` (a digit) onto the screen being edited.
    private func appending(_ text: String) -> CalculatorState {
        switch self {
        case let .oneOperand(screen):
            return .oneOperand(screen: screen == "0" ? text : screen + text)
        case .result:
            return .oneOperand(screen: text)
        case let .oneOperandAndOperator(operand, pending):
            return .twoOperandsAndOperator(operand: operand, operator: pending, screen: text)
        case let .twoOperandsAndOperator(operand, pending, screen):
            return .twoOperandsAndOperator(operand: operand, operator: pending, screen: screen == "0" ? text : screen + text)
        }
    }

    /// Edits the screen being typed; after an operator, starts the second operand from "0".
    private func mapScreen(_ transform: (String) -> String) -> CalculatorState {
        switch self {
        case let .oneOperand(screen):
            return .oneOperand(screen: transform(screen))
        case let .result(screen):
            return .result(screen: screen == errorScreen ? screen : transform(screen))
        case let .oneOperandAndOperator(operand, pending):
            return .twoOperandsAndOperator(operand: operand, operator: pending, screen: transform("0"))
        case let .twoOperandsAndOperator(operand, pending, screen):
            return .twoOperandsAndOperator(operand: operand, operator: pending, screen: transform(screen))
        }
    }
}

/// What the screen shows after a division by zero (or another non-finite result).
public let errorScreen = "Error"

/// `value` as the screen shows it: whole numbers without a fraction, others with at most 12
/// significant digits, non-finite ones as `errorScreen`.
func format(_ value: Double) -> String {
    guard value.isFinite else { return errorScreen }
    if value == value.rounded(), abs(value) < 1e15 {
        return String(Int64(value))
    }
    var text = String(value)
    if text.contains("e") { return text }
    // Trim binary noise such as 0.30000000000000004.
    let rounded = (value * 1e12).rounded() / 1e12
    text = String(rounded)
    return text
}

/// A line of input that holds something other than keys.
public struct CalculatorInputError: Error, Equatable, CustomStringConvertible {
    /// The first character that is not a key.
    public let character: Character
    /// Its position in the line, from 1.
    public let position: Int

    public var description: String {
        "invalid key '\(character)' at position \(position); keys are 0-9 . + - * / = c (clear) s (change sign) % (percent)"
    }
}

/// The keys in `line`, in order; spaces are ignored.
///
/// - Throws: `CalculatorInputError` naming the first character that is not a key; then no key
///   of the line counts.
public func parseKeys(_ line: String) throws(CalculatorInputError) -> [CalculatorKey] {
    var keys: [CalculatorKey] = []
    for (index, character) in line.enumerated() {
        switch character {
        case " ", "\t", "\r": continue
        case "0"..."9": keys.append(.digit(character.wholeNumberValue!))
        case ".": keys.append(.dot)
        case "+": keys.append(.operation(.addition))
        case "-": keys.append(.operation(.subtraction))
        case "*", "x", "×": keys.append(.operation(.multiplication))
        case "/", "÷": keys.append(.operation(.division))
        case "=": keys.append(.equal)
        case "c", "C": keys.append(.clear)
        case "s", "S": keys.append(.changeSign)
        case "%": keys.append(.percent)
        default: throw CalculatorInputError(character: character, position: index + 1)
        }
    }
    return keys
}

/// A calculator store: `CalculatorState.reduce` on an actor of `system`.
///
/// - Throws: What `Store.init` throws (a duplicate name, a system shutting down).
public func makeCalculatorStore(system: ActorSystem, name: String = "calculator") throws -> Store<CalculatorState, CalculatorKey> {
    try Store(system: system, name: name, initialState: .initial, reducer: CalculatorState.reduce)
}

/// Handles one line of keys: dispatches them to `store` and returns what to print — the
/// display once every key was reduced, or a message saying which character is not a key
/// (the line is then ignored, and the display shown unchanged).
public func handleLine(_ line: String, store: Store<CalculatorState, CalculatorKey>) async -> String {
    let keys: [CalculatorKey]
    do {
        keys = try parseKeys(line)
    } catch {
        return "\(error)\n\(store.state.value.display)"
    }
    guard let last = keys.last else { return store.state.value.display }
    for key in keys.dropLast() { store.dispatch(key) }
    do {
        return try await store.dispatchAndWait(last).display
    } catch {
        return "calculator not responding: \(error)"
    }
}
