import Testing
@testable import Mailbox

@Suite("Bag")
struct BagTests {
    @Test func iteration_followsInsertionOrder() {
        var bag = Bag<Int>()
        for value in [5, 3, 9, 1, 7] { bag.insert(value) }
        #expect(Array(bag) == [5, 3, 9, 1, 7])
        #expect(bag.count == 5)
        #expect(!bag.isEmpty)
    }

    @Test func removeUsingToken_removesExactlyThatElementEvenAmongEqualOnes() {
        var bag = Bag<String>()
        let first = bag.insert("same")
        let second = bag.insert("same")
        let third = bag.insert("other")
        #expect(first != second)

        #expect(bag.remove(using: second) == "same")
        #expect(Array(bag) == ["same", "other"])
        #expect(bag.remove(using: first) == "same")
        #expect(Array(bag) == ["other"])
        #expect(bag.remove(using: third) == "other")
        #expect(bag.isEmpty)
    }

    @Test func removeUsingToken_keepsTheOrderOfTheRest() {
        var bag = Bag<Int>()
        let tokens = (0..<6).map { bag.insert($0) }
        bag.remove(using: tokens[0])
        bag.remove(using: tokens[3])
        bag.remove(using: tokens[5])
        #expect(Array(bag) == [1, 2, 4])
    }

    @Test func removeUsingTokenTwice_returnsNilTheSecondTime() {
        var bag = Bag<Int>()
        let token = bag.insert(1)
        bag.insert(2)
        #expect(bag.remove(using: token) == 1)
        #expect(bag.remove(using: token) == nil)
        #expect(Array(bag) == [2])
    }

    @Test func tokenFromBeforeRemoveAll_doesNotRemoveALaterElement() {
        var bag = Bag<Int>()
        let old = bag.insert(1)
        #expect(Array(bag.removeAll()) == [1])
        bag.insert(2)
        #expect(bag.remove(using: old) == nil)
        #expect(Array(bag) == [2])
    }

    @Test func removeAll_returnsElementsInInsertionOrderAndEmpties() {
        var bag = Bag<Int>()
        for value in [3, 1, 2] { bag.insert(value) }
        #expect(Array(bag.removeAll()) == [3, 1, 2])
        #expect(bag.isEmpty)
        #expect(bag.count == 0)
        #expect(Array(bag).isEmpty)
    }

    @Test func randomInsertionsAndRemovals_matchAReferenceModel() {
        let seed = testSeed()
        var random = SplitMix64(seed: seed)
        var bag = Bag<Int>()
        var model: [(token: Bag<Int>.Token, value: Int)] = []
        for step in 0..<2_000 {
            if model.isEmpty || Int.random(in: 0..<3, using: &random) != 0 {
                let token = bag.insert(step)
                model.append((token, step))
            } else {
                let index = Int.random(in: 0..<model.count, using: &random)
                let removed = model.remove(at: index)
                #expect(bag.remove(using: removed.token) == removed.value, "seed \(seed), step \(step)")
            }
        }
        #expect(Array(bag) == model.map(\.value), "seed \(seed)")
    }
}
