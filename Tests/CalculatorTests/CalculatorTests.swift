@testable import CalculatorCore
import Testing
@testable import Mailbox

@Suite("Samples/Calculator")
struct CalculatorTests {
    private func press(_ keys: String, from state: CalculatorState = .initial) throws -> CalculatorState {
        try parseKeys(keys).reduce(state, CalculatorState.reduce)
    }

    @Test func reducer_arithmetic() throws {
        #expect(try press("12+3=").display == "15")
        #expect(try press("7-10=").display == "-3")
        #expect(try press("6*7=").display == "42")
        #expect(try press("1/4=").display == "0.25")
        #expect(try press("2*3+4=").display == "10")          // left to right, like the RxSwift example
        #expect(try press("2/3=").display == "0.666666666667")
        #expect(try press("0.1+0.2=").display == "0.3")
    }

    @Test func reducer_editingKeys() throws {
        #expect(try press("5s").display == "-5")
        #expect(try press("5ss").display == "5")
        #expect(try press("50%").display == "0.5")
        #expect(try press("1.2.3").display == "1.23")           // a second dot does nothing
        #expect(try press("123c").display == "0")
        #expect(try press("3+").display == "3")                 // the operand shows until typing
        #expect(try press("3+4").display == "4")
        #expect(try press("3++*2=").display == "6")             // the last operator wins
        #expect(try press("12+3=4").display == "4")             // a digit after = starts anew
        #expect(try press("12+3=+1=").display == "16")          // an operator continues from it
    }

    @Test func reducer_divisionByZero_showsError_andRecovers() throws {
        #expect(try press("1/0=").display == "Error")
        #expect(try press("1/0+").display == "Error")
        #expect(try press("1/0=7").display == "7")
        #expect(try press("1/0=c").display == "0")
    }

    @Test func parseKeys_rejectsAnythingElse_namingTheCharacter() {
        #expect(throws: CalculatorInputError(character: "h", position: 3)) { try parseKeys("1 hello") }
        #expect((try? parseKeys(" 1 + 2 = ")) == [.digit(1), .operation(.addition), .digit(2), .equal])
    }

    @Test func store_reducesKeys_onVirtualTime() throws {
        let scheduler = TestScheduler()
        let system = ActorSystem(name: "calc", configuration: .init(scheduler: scheduler, logHandler: nil))
        let store = try makeCalculatorStore(system: system)
        let displays = LockedValueBox<[String]>([])
        store.state.producer.map(\.display).skipRepeats().startWithValues { display in
            displays.withLockedValue { $0.append(display) }
        }
        for key in try parseKeys("12+3=") { store.dispatch(key) }
        scheduler.advance(by: .nanoseconds(0))  // runs everything due now
        #expect(displays.withLockedValue { $0 } == ["0", "1", "12", "3", "15"])
    }

    @Test func handleLine_printsTheDisplay_orAClearMessage() async throws {
        let system = ActorSystem(name: "calc", configuration: .init(logHandler: nil))
        let store = try makeCalculatorStore(system: system)
        #expect(await handleLine("12+3=", store: store) == "15")
        #expect(await handleLine("q", store: store).hasPrefix("invalid key 'q' at position 1"))
        #expect(await handleLine("q", store: store).hasSuffix("\n15"))
        #expect(await handleLine("", store: store) == "15")
        #expect(await handleLine("*2=", store: store) == "30")
        await system.shutdown()
    }
}
