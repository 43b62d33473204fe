import Dispatch
import Foundation
import Testing
@testable import Mailbox

// Issue #11, semantic 1: re-entrance into a property from inside its own observers. Each
// expected outcome is what ReactiveSwift 7.2.1 prints for the same program (see
// docs/StreamContracts.md, "Re-entrance"); the re-entrant work runs under a watchdog, so a
// deadlock fails the test instead of hanging the suite.

extension Streams {
@Suite("Property re-entrance")
struct PropertyReentranceTests {
    @Test func withValue_insideSignalObserver_readsTheValueBeingDelivered() {
        let log = Locked<[String]>([])
        let finished = finishesWithoutDeadlock {
            let property = MutableProperty(0)
            property.signal.observeValues { value in
                let read = property.withValue { $0 }
                log.append("got \(value), withValue \(read)")
            }
            property.value = 1
        }
        #expect(finished)
        #expect(log.snapshot == ["got 1, withValue 1"])
    }

    @Test func withValue_insideProducerObserver_readsTheValueBeingDelivered() {
        let log = Locked<[String]>([])
        let finished = finishesWithoutDeadlock {
            let property = MutableProperty(0)
            property.producer.startWithValues { value in
                log.append("got \(value), withValue \(property.withValue { $0 })")
            }
            property.value = 1
        }
        #expect(finished)
        #expect(log.snapshot == ["got 0, withValue 0", "got 1, withValue 1"])
    }

    @Test func startingTheProducer_insideAnObserver_sendsTheCurrentValueThenEveryChange() {
        let log = Locked<[String]>([])
        let finished = finishesWithoutDeadlock {
            let property = MutableProperty(0)
            let started = Locked(false)
            property.signal.observeValues { value in
                log.append("observer \(value)")
                let first = started.withLock { started -> Bool in
                    defer { started = true }
                    return !started
                }
                if first {
                    property.producer.startWithValues { log.append("inner \($0)") }
                }
            }
            property.value = 1
            property.value = 2
        }
        #expect(finished)
        #expect(log.snapshot == ["observer 1", "inner 1", "observer 2", "inner 2"])
    }

    @Test func recursiveSet_insideASignalObserver_isDeliveredDepthFirst() {
        let log = Locked<[String]>([])
        let finalValue = Locked(-1)
        let finished = finishesWithoutDeadlock {
            let property = MutableProperty(0)
            property.signal.observeValues { value in
                log.append("first \(value)")
                if value == 1 {
                    property.value = 2
                    log.append("first, after the nested set: value \(property.value)")
                }
            }
            property.signal.observeValues { log.append("second \($0)") }
            property.producer.startWithValues { log.append("producer \($0)") }
            property.value = 1
            finalValue.withLock { $0 = property.value }
        }
        #expect(finished)
        // ReactiveSwift 7.2.1 prints exactly this: the nested value reaches every observer
        // before the outer delivery goes on to the observers it had not reached yet.
        #expect(log.snapshot == [
            "producer 0",
            "first 1",
            "first 2", "second 2", "producer 2",
            "first, after the nested set: value 2",
            "second 1", "producer 1",
        ])
        #expect(finalValue.snapshot == 2)
    }

    @Test func modify_insideASignalObserver_isDeliveredDepthFirst() {
        let log = Locked<[String]>([])
        let finished = finishesWithoutDeadlock {
            let property = MutableProperty([1])
            property.signal.observeValues { value in
                log.append("first \(value)")
                if value.count == 2 {
                    let count = property.modify { value -> Int in
                        value.append(3)
                        return value.count
                    }
                    log.append("modify returned \(count)")
                }
            }
            property.signal.observeValues { log.append("second \($0)") }
            property.modify { $0.append(2) }
        }
        #expect(finished)
        #expect(log.snapshot == [
            "first [1, 2]",
            "first [1, 2, 3]", "second [1, 2, 3]",
            "modify returned 3",
            "second [1, 2]",
        ])
    }

    @Test func swap_insideASignalObserver_returnsTheValueAtThatMoment() {
        let log = Locked<[String]>([])
        let finished = finishesWithoutDeadlock {
            let property = MutableProperty(0)
            property.signal.observeValues { value in
                log.append("got \(value)")
                if value == 1 { log.append("swap returned \(property.swap(5))") }
            }
            property.value = 1
        }
        #expect(finished)
        #expect(log.snapshot == ["got 1", "got 5", "swap returned 1"])
    }

    @Test func recursiveSet_insideAProducerObserver_isDeliveredAfterTheCurrentValue() {
        // The run of a started producer is a signal of its own, which queues a value sent to it
        // while it delivers: the observer that set the property sees the new value as soon as
        // it returns. (ReactiveSwift 7.2.1 never delivers it to that observer: its producer
        // attaches after sending the current value, and prints "0", "1".)
        let log = Locked<[Int]>([])
        let finalValue = Locked(-1)
        let finished = finishesWithoutDeadlock {
            let property = MutableProperty(0)
            property.producer.startWithValues { value in
                log.append(value)
                if value == 0 { property.modify { $0 += 10 } }
            }
            property.value = 1
            finalValue.withLock { $0 = property.value }
        }
        #expect(finished)
        #expect(log.snapshot == [0, 10, 1])
        #expect(finalValue.snapshot == 1)
    }

    @Test func withValue_bodyMaySetTheProperty() {
        let log = Locked<[Int]>([])
        let finished = finishesWithoutDeadlock {
            let property = MutableProperty(1)
            property.signal.observeValues { log.append($0) }
            property.withValue { value in property.value = value + 5 }
            log.append(property.value)
        }
        #expect(finished)
        #expect(log.snapshot == [6, 6])
    }

    @Test func twoProperties_whoseObserversUseEachOther_doNotDeadlock() {
        let log = Locked<[String]>([])
        let finished = finishesWithoutDeadlock {
            let a = MutableProperty(0)
            let b = MutableProperty(0)
            a.signal.observeValues { value in
                log.append("A \(value)")
                if value == 1 { b.value = 1 }
            }
            b.signal.observeValues { value in
                log.append("B \(value), A.withValue \(a.withValue { $0 })")
                a.producer.take(first: 1).startWithValues { log.append("A's producer from B's observer: \($0)") }
                if value == 1 { a.value = 2 }
            }
            a.value = 1
        }
        #expect(finished)
        #expect(log.snapshot == [
            "A 1",
            "B 1, A.withValue 1",
            "A's producer from B's observer: 1",
            "A 2",
        ])
    }

    @Test func composedProperty_observerSettingItsSource_seesTheNewValueNext() {
        let log = Locked<[Int]>([])
        let mappedValue = Locked(-1)
        let finished = finishesWithoutDeadlock {
            let source = MutableProperty(0)
            let mapped = source.map { $0 * 10 }
            mapped.signal.observeValues { value in
                log.append(value)
                if value == 10 { source.value = 2 }
            }
            source.value = 1
            mappedValue.withLock { $0 = mapped.value }
        }
        #expect(finished)
        #expect(log.snapshot == [10, 20])
        #expect(mappedValue.snapshot == 20)
    }

    @Test func bindingLoopBetweenTwoProperties_settlesInsteadOfDeadlocking() {
        // ReactiveSwift 7.2.1 traps here (EDEADLK in the filter's signal); Mailbox queues the
        // value the loop sends back into the filter while it delivers, and the loop settles.
        let values = Locked<(p: Int, q: Int)>((-1, -1))
        let finished = finishesWithoutDeadlock {
            let p = MutableProperty(0)
            let q = MutableProperty(0)
            q <~ p.signal
            p <~ q.signal.filter { $0 < 3 }.map { $0 + 1 }
            p.value = 1
            values.withLock { $0 = (p.value, q.value) }
        }
        #expect(finished)
        #expect(values.snapshot == (3, 3))
    }

    @Test func settingAPropertyFromAnotherThread_waitsForADeliveryUnderWay() {
        // Re-entrance is per thread: a set from another thread still waits for the delivery
        // in progress, so observers never run concurrently.
        let property = MutableProperty(0)
        let probe = ConcurrencyProbe()
        let gate = Gate()
        property.signal.observeValues { value in
            probe.run {
                if value == 1 { gate.hold() }
            }
        }
        let done = DispatchSemaphore(value: 0)
        Thread { property.value = 1; done.signal() }.start()
        #expect(gate.waitUntilHeld())
        Thread { property.value = 2; done.signal() }.start()
        gate.open()
        #expect(done.waitBounded(count: 2))
        #expect(probe.maximum == 1)
        #expect(property.value == 2)
    }

    // A precondition failure in every build (the checks do not depend on error-checking
    // mutexes).
    @Test func readingTheValue_insideItsOwnModifyAction_isAPreconditionFailure() async {
        // ReactiveSwift 7.2.1 traps too ("Simultaneous accesses"): the value is being modified.
        await #expect(processExitsWith: .failure) {
            let property = MutableProperty(1)
            property.modify { value in value += property.value }
        }
    }

    @Test func settingTheProperty_insideItsOwnModifyAction_isAPreconditionFailure() async {
        // ReactiveSwift 7.2.1: "Nested modifications violate exclusivity of access."
        await #expect(processExitsWith: .failure) {
            let property = MutableProperty(1)
            property.modify { _ in property.value = 2 }
        }
    }
}
}
