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

extension FrameRecyclerTests {
    /// Stands in for the capture session's hub: it holds the newest frame until asked to let go.
    final class Newest: @unchecked Sendable {  // touched by one thread, the test's
        var box: FrameStorage?
        var asked = 0
    }

    @Test func whenEveryBoxIsHeldTheNewestIsTakenBackBeforeANewBoxIsMade() {
        let newest = Newest()
        var recycler = FrameRecycler(limit: 3)
        recycler.takeBackNewest = { newest.asked += 1; newest.box = nil }
        // An encoder holds frame 1 while frame 2 is the newest, as when an encode takes longer than a frame interval.
        let encoding = recycler.storage(count: 8) { $0.initializeMemory(as: UInt8.self, repeating: 1) }
        newest.box = recycler.storage(count: 8) { $0.initializeMemory(as: UInt8.self, repeating: 2) }
        let second = ObjectIdentifier(newest.box!)
        #expect(newest.asked == 1, "asked once, when frame 2 found frame 1 held and nothing newest to take back")
        let third = recycler.storage(count: 8) { $0.initializeMemory(as: UInt8.self, repeating: 3) }
        #expect(newest.asked == 2)
        #expect(ObjectIdentifier(third) == second, "frame 3 went into frame 2's box, not a third one")
        #expect(third.bytes == [UInt8](repeating: 3, count: 8))
        #expect(encoding.bytes == [UInt8](repeating: 1, count: 8), "the frame being encoded never changes")
    }

    @Test func aFreeBoxIsFilledWithoutTakingTheNewestBack() {
        let newest = Newest()
        var recycler = FrameRecycler(limit: 3)
        var encoded: FrameStorage? = recycler.storage(count: 8) { $0.initializeMemory(as: UInt8.self, repeating: 1) }
        newest.box = recycler.storage(count: 8) { $0.initializeMemory(as: UInt8.self, repeating: 2) }
        recycler.takeBackNewest = { newest.asked += 1; newest.box = nil }
        let first = ObjectIdentifier(encoded!)
        encoded = nil  // the encoder is done with frame 1
        let next = recycler.storage(count: 8) { $0.initializeMemory(as: UInt8.self, repeating: 3) }
        #expect(ObjectIdentifier(next) == first, "frame 3 went into frame 1's free box")
        #expect(newest.asked == 0)
        #expect(newest.box?.bytes == [UInt8](repeating: 2, count: 8), "the newest frame stays for whoever comes for it")
    }

    @Test func aNewestFrameSomeoneTookIsTheirsAndANewBoxIsMade() {
        let newest = Newest()
        var recycler = FrameRecycler(limit: 3)
        recycler.takeBackNewest = { newest.asked += 1; newest.box = nil }
        newest.box = recycler.storage(count: 8) { $0.initializeMemory(as: UInt8.self, repeating: 1) }
        let taken = newest.box!  // a render took the newest frame
        let next = recycler.storage(count: 8) { $0.initializeMemory(as: UInt8.self, repeating: 2) }
        #expect(newest.asked == 1)
        #expect(next !== taken)
        #expect(taken.bytes == [UInt8](repeating: 1, count: 8), "a frame a consumer holds never changes")
    }

    @Test func forgottenBoxesAreNotFilledAgainAndAHeldOneNeverChanges() {
        var recycler = FrameRecycler(limit: 3)
        var free: FrameStorage? = recycler.storage(count: 8) { $0.initializeMemory(as: UInt8.self, repeating: 1) }
        let held = recycler.storage(count: 8) { $0.initializeMemory(as: UInt8.self, repeating: 2) }
        weak var forgotten = free
        free = nil
        #expect(forgotten != nil && recycler.keptBoxes == 2, "a free box is kept for the next frame")
        recycler.forgetBoxes()
        #expect(forgotten == nil && recycler.keptBoxes == 0, "a forgotten free box is freed")
        let next = recycler.storage(count: 8) { $0.initializeMemory(as: UInt8.self, repeating: 3) }
        #expect(next !== held)
        #expect(held.bytes == [UInt8](repeating: 2, count: 8), "a frame a consumer holds never changes")
        #expect(recycler.keptBoxes == 1, "boxes made after are kept again")
    }

    @Test func aLentBufferIsReadInPlaceAndGivenBackWithItsLastFrame() {
        let given = Newest()
        let bytes: [UInt8] = [5, 6, 7, 8]
        bytes.withUnsafeBytes { lent in
            var storage: FrameStorage? = FrameStorage(lending: lent) { given.asked += 1 }
            let frame = Frame(layout: FrameLayout(format: .grey, size: FrameSize(width: 2, height: 2), bytesPerLine: 2, range: .full),
                              storage: storage!, sequence: 1, monotonicTime: 0, captureTime: 0)
            storage = nil
            #expect(frame.storage.isLent && frame.byteCount == 4 && frame.bytes == bytes)
            #expect(frame.withUnsafeBytes { $0.baseAddress } == lent.baseAddress, "read where it lies, not copied")
            #expect(given.asked == 0, "not given back while a frame refers to it")
            _ = consume frame
        }
        #expect(given.asked == 1, "given back once, when the last frame went")
    }
}
