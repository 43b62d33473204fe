import Dispatch
import Testing
@testable import Mailbox

/// Rejects negative numbers, clamps numbers above 100.
@Sendable func validatePercent(_ value: Int) -> ValidatingProperty<Int, TestError>.Decision {
    if value < 0 { return .invalid(TestError(code: value)) }
    if value > 100 { return .coerced(100, TestError(code: 100)) }
    return .valid
}

extension Streams {
@Suite("ValidatingProperty")
struct ValidatingPropertyTests {
    @Test func validValue_isStored() {
        let property = ValidatingProperty(10, validatePercent)
        property.value = 20
        #expect(property.value == 20)
        guard case .valid(20) = property.result.value else { Issue.record("\(property.result.value)"); return }
    }

    @Test func invalidValue_isRejected_andReported() {
        let property = ValidatingProperty(10, validatePercent)
        let values = EventRecorder<Int, Never>()
        property.signal.observe(values.observer)
        property.value = -3
        #expect(property.value == 10)
        #expect(values.values.isEmpty)
        #expect(property.result.value.isInvalid)
        #expect(property.result.value.error == TestError(code: -3))
        #expect(property.result.value.value == nil)
    }

    @Test func coercedValue_storesTheReplacement() {
        let property = ValidatingProperty(10, validatePercent)
        property.value = 250
        #expect(property.value == 100)
        guard case let .coerced(replacement, proposed, error) = property.result.value else {
            Issue.record("\(property.result.value)")
            return
        }
        #expect(replacement == 100)
        #expect(proposed == 250)
        #expect(error == TestError(code: 100))
        #expect(property.result.value.value == 100)
    }

    @Test func directChangesToTheInnerProperty_areValidatedButNotRewritten() {
        let inner = MutableProperty(5)
        let property = ValidatingProperty(inner, validatePercent)
        inner.value = -1
        #expect(property.value == -1)
        #expect(property.result.value.isInvalid)
        inner.value = 7
        guard case .valid(7) = property.result.value else { Issue.record("\(property.result.value)"); return }
    }

    @Test func initialValue_isValidated() {
        let property = ValidatingProperty(-5, validatePercent)
        #expect(property.value == -5)
        #expect(property.result.value.isInvalid)
    }

    @Test func resultObservers_seeEachOutcomeInOrder() {
        let property = ValidatingProperty(0, validatePercent)
        let outcomes = Box<[String]>([])
        property.result.signal.observeValues { result in
            outcomes.modify { $0.append("\(result.value.map(String.init) ?? "invalid") stored=\(property.value)") }
        }
        property.value = 5
        property.value = -1
        property.value = 500
        #expect(outcomes.value == ["5 stored=5", "invalid stored=5", "100 stored=100"])
    }

    @Test func validatingWithAnotherProperty_revalidatesWhenItChanges() {
        let maximum = MutableProperty(10)
        let property = ValidatingProperty(5, with: maximum) { value, maximum in
            value <= maximum ? .valid : .invalid(TestError(code: maximum))
        }
        property.value = 20
        #expect(property.value == 5)
        #expect(property.result.value.isInvalid)
        // The last proposed value (20) is validated again against the new maximum.
        maximum.value = 30
        #expect(property.value == 20)
        #expect(!property.result.value.isInvalid)
    }

    @Test func validatingWithAnotherValidatingProperty_usesItsLastProposal() {
        let password = ValidatingProperty("secret") { $0.count >= 6 ? .valid : .invalid(TestError(code: 1)) }
        let confirmation = ValidatingProperty("", with: password) { value, password in
            value == password ? .valid : .invalid(TestError(code: 2))
        }
        confirmation.value = "secret"
        #expect(!confirmation.result.value.isInvalid)
        password.value = "short"
        // Validated against the proposal "short", though `password` rejected it.
        #expect(confirmation.result.value.isInvalid)
        password.value = "secret"
        #expect(!confirmation.result.value.isInvalid)
    }

    @Test func setFromInsideTheValidator_isQueuedNotDeadlocked() {
        let holder = Box<ValidatingProperty<Int, TestError>?>(nil)
        let property = ValidatingProperty(0) { value -> ValidatingProperty<Int, TestError>.Decision in
            // Re-entrant: proposes the next value from inside the validation of this one.
            if value == 1 { holder.value?.value = 2 }
            return .valid
        }
        holder.value = property
        property.value = 1
        #expect(property.value == 2)
        guard case .valid(2) = property.result.value else { Issue.record("\(property.result.value)"); return }
        holder.value = nil
    }

    @Test func setFromAResultObserver_isQueuedNotDeadlocked() {
        let property = ValidatingProperty(0, validatePercent)
        property.result.signal.observeValues { result in
            // An invalid value is replaced by 0, from inside the notification.
            if result.isInvalid { property.value = 0 }
        }
        property.value = 50
        property.value = -7
        #expect(property.value == 0)
        guard case .valid(0) = property.result.value else { Issue.record("\(property.result.value)"); return }
    }

    @Test func concurrentSets_leaveTheResultDescribingTheStoredValue() {
        let property = ValidatingProperty(0, validatePercent)
        let group = DispatchGroup()
        for thread in 0..<4 {
            DispatchQueue.global().async(group: group) {
                for value in 0..<200 { property.value = (value + thread) % 150 - 10 }
            }
        }
        #expect(group.waitBounded())
        // The last stored value is described by the last result, whichever thread won.
        if let stored = property.result.value.value {
            #expect(stored == property.value)
        }
    }

    @Test func validatingProperty_isReleased_andReleasesItsInnerProperty() {
        weak var weakInner: MutableProperty<Int>?
        weak var weakProperty: ValidatingProperty<Int, TestError>?
        do {
            let inner = MutableProperty(1)
            let property = ValidatingProperty(inner, validatePercent)
            property.value = 2
            weakInner = inner
            weakProperty = property
        }
        #expect(weakProperty == nil)
        #expect(weakInner == nil)
    }

    @Test func actionValidated_isEnabledOnlyForValidValues() {
        let amount = ValidatingProperty(5, validatePercent)
        let action = Action<Void, Int, Never>(validated: amount) { value in SignalProducer(value: value * 2) }
        #expect(action.isEnabled.value)
        #expect(action.apply().single().map { try? $0.get() } == 10)
        amount.value = -1
        #expect(!action.isEnabled.value)
        let withInput = Action<Int, Int, Never>(validated: amount) { value, input in SignalProducer(value: value + input) }
        amount.value = 7
        #expect(withInput.apply(1).single().map { try? $0.get() } == 8)
    }
}
}
