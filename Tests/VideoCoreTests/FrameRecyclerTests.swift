import Testing
import VideoCore

/// Frame storage is reused once no frame refers to it, and never while one does.
@Suite struct FrameRecyclerTests {
    @Test func aReleasedBoxIsFilledAgain() {
        var recycler = FrameRecycler()
        let first = ObjectIdentifier(recycler.storage(count: 16) { $0.initializeMemory(as: UInt8.self, repeating: 1) })
        let again = recycler.storage(count: 16) { $0.initializeMemory(as: UInt8.self, repeating: 2) }
        #expect(ObjectIdentifier(again) == first, "the first box was free, yet a new one was made")
        #expect(again.bytes == [UInt8](repeating: 2, count: 16))
    }

    @Test func aHeldFrameNeverChanges() {
        var recycler = FrameRecycler()
        var held: [FrameStorage] = []
        for value in 0..<UInt8(recycler.limit + 4) {
            held.append(recycler.storage(count: 8) { $0.initializeMemory(as: UInt8.self, repeating: value) })
        }
        #expect(Set(held.map(ObjectIdentifier.init)).count == held.count, "a box still held was handed out again")
        for (value, box) in held.enumerated() {
            #expect(box.bytes == [UInt8](repeating: UInt8(value), count: 8))
        }
    }

    @Test func anArrayStillHeldIsCopiedNotOverwritten() {
        var recycler = FrameRecycler()
        let kept = recycler.storage(count: 4) { $0.initializeMemory(as: UInt8.self, repeating: 7) }.bytes
        _ = recycler.storage(count: 4) { $0.initializeMemory(as: UInt8.self, repeating: 9) }
        #expect(kept == [7, 7, 7, 7], "bytes someone kept changed under them")
    }

    @Test func anotherSizeGetsNewBoxes() {
        var recycler = FrameRecycler()
        let small = recycler.storage(count: 4) { $0.initializeMemory(as: UInt8.self, repeating: 3) }
        let large = recycler.storage(count: 8) { $0.initializeMemory(as: UInt8.self, repeating: 0) }
        #expect(large !== small)
        #expect(large.bytes.count == 8)
        #expect(small.bytes == [3, 3, 3, 3])
    }
}

extension FrameRecyclerTests {
    @Test func keepsNoMoreThanItsLimit() {
        var recycler = FrameRecycler(limit: 2)
        var held = (0..<5).map { _ in recycler.storage(count: 8) { $0.initializeMemory(as: UInt8.self, repeating: 0) } }
        let ids = held.map(ObjectIdentifier.init)
        held.removeAll()
        // All five are free now; only the two kept come back, the others were never pooled.
        let again = (0..<2).map { _ in ObjectIdentifier(recycler.storage(count: 8) { $0.initializeMemory(as: UInt8.self, repeating: 1) }) }
        #expect(Set(again).isSubset(of: Set(ids.prefix(2))), "a box beyond the limit was kept")
    }
}
