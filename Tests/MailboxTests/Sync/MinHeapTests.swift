import Testing
@testable import Mailbox

@Suite("MinHeap")
struct MinHeapTests {
    @Test func emptyHeap_hasNoFirst() {
        let heap = MinHeap<Int>()
        #expect(heap.isEmpty)
        #expect(heap.count == 0)
        #expect(heap.first == nil)
    }

    @Test func first_isTheSmallestInserted() {
        var heap = MinHeap<Int>()
        for value in [5, 8, 2, 9, 2, 7] {
            heap.insert(value)
        }
        #expect(heap.first == 2)
        #expect(heap.count == 6)
    }

    @Test func removeFirst_yieldsAscendingOrderAgainstASortedReference() {
        let seed = testSeed()
        var random = SplitMix64(seed: seed)
        for size in [1, 2, 3, 7, 64, 1_000] {
            let values = (0..<size).map { _ in Int.random(in: -50...50, using: &random) }
            var heap = MinHeap<Int>()
            for value in values { heap.insert(value) }
            var drained: [Int] = []
            while !heap.isEmpty { drained.append(heap.removeFirst()) }
            #expect(drained == values.sorted(), "seed \(seed), size \(size)")
        }
    }

    @Test func interleavedInsertAndRemove_alwaysRemovesTheCurrentMinimum() {
        let seed = testSeed()
        var random = SplitMix64(seed: seed)
        var heap = MinHeap<Int>()
        var reference: [Int] = []
        for step in 0..<5_000 {
            if reference.isEmpty || Bool.random(using: &random) {
                let value = Int.random(in: 0...1_000, using: &random)
                heap.insert(value)
                reference.append(value)
            } else {
                let expected = reference.min()!
                reference.remove(at: reference.firstIndex(of: expected)!)
                #expect(heap.removeFirst() == expected, "seed \(seed), step \(step)")
            }
            #expect(heap.count == reference.count)
            #expect(heap.first == reference.min(), "seed \(seed), step \(step)")
        }
    }
}
