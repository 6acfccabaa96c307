import CamdTestSupport
import Foundation
import Synchronization
@testable import CaptureSession
import Testing
import VideoCore

@Suite struct FrameHubTests {
    func frame(_ sequence: UInt32, at time: Double, size: FrameSize = FrameSize(width: 2, height: 2)) -> Frame {
        Frame(layout: FrameLayout(format: .yuyv, size: size, bytesPerLine: size.width * 2, range: .limited),
              bytes: [UInt8](repeating: 128, count: size.area * 2), sequence: sequence, monotonicTime: time, captureTime: time)
    }

    func encoded(_ frame: Frame) -> EncodedFrame {
        EncodedFrame(jpeg: [0xFF, 0xD8], sequence: frame.sequence, captureTime: frame.captureTime,
                     monotonicTime: frame.monotonicTime, size: frame.layout.size, sourceFormat: .yuyv, encodeSeconds: 0)
    }

    /// An encoder from before a restart that finishes late must neither block the new
    /// run's frames nor hand out a frame made with the old settings.
    @Test func aLateDeliveryFromAnEarlierRunIsIgnored() async throws {
        let hub = FrameHub()
        let first = hub.reopen()
        for n in 1...50 { hub.publish(frame(UInt32(n), at: Double(n))) }
        let stale = frame(50, at: 50, size: FrameSize(width: 4, height: 4))
        let second = hub.reopen()
        hub.deliver(encoded(stale), generation: 50, epoch: first)

        hub.publish(frame(1, at: 100))
        let waiter = Task { try await hub.frame(notBefore: 99, timeout: .seconds(5)) }
        // Until the waiter asks, `nextFrameToEncode` would wait, holding one of the few threads
        // of the cooperative pool the waiter's task needs.
        try await waitUntil { hub.wantsPlainJPEG() }
        guard let (next, generation) = hub.nextFrameToEncode(epoch: second) else {
            Issue.record("the new run's frame was never offered to the encoder"); return
        }
        #expect(next.monotonicTime == 100)
        hub.deliver(encoded(next), generation: generation, epoch: second)
        let got = try await waiter.value
        #expect(got.size == FrameSize(width: 2, height: 2))
        #expect(got.monotonicTime == 100)
    }

    /// Pixels are copied out of the driver's buffer only while someone may want them:
    /// a stream client, a snapshot waiting, or one within the warm window before.
    @Test func pixelsAreWantedOnlyAroundDemand() async throws {
        let hub = FrameHub()
        _ = hub.reopen()
        let now = FrameHub.monotonicNow()
        #expect(!hub.wantsPixels(now: now), "nobody asked, yet the hub wants pixels")

        var stream: AsyncStream<EncodedFrame>? = hub.subscribe()
        #expect(hub.wantsPixels(now: now + 3600), "a stream client wants every frame")
        let leaving = FrameHub.monotonicNow()
        stream = nil
        _ = stream
        for _ in 0..<200 where hub.subscriberCount > 0 { try await Task.sleep(for: .milliseconds(10)) }
        #expect(hub.subscriberCount == 0)
        #expect(hub.wantsPixels(now: leaving), "right after a client leaves, the next request may come")
        #expect(!hub.wantsPixels(now: FrameHub.monotonicNow() + FrameHub.warmSeconds + 0.1),
                "long after the last client, pixels are still copied")

        let waiter = Task { try await hub.rawFrame(notBefore: 10, timeout: .seconds(5)) }
        var asked = false
        for _ in 0..<100 where !asked {
            try await Task.sleep(for: .milliseconds(10))
            asked = hub.wantsPixels(now: FrameHub.monotonicNow() + 3600)
        }
        #expect(asked, "a waiting snapshot wants the next frame's pixels")
        hub.publish(frame(1, at: 10))
        #expect(try await waiter.value.sequence == 1)
    }

    /// A frame left unread makes the one before it stale: it is never served as the newest.
    @Test func anUnreadFrameRetiresThePreviousOne() async throws {
        let hub = FrameHub()
        _ = hub.reopen()
        hub.publish(frame(1, at: 1))
        hub.publishUnread(monotonicTime: 2)
        #expect(hub.snapshot.framesCaptured == 2)
        let waiter = Task { try await hub.rawFrame(notBefore: 0, timeout: .seconds(5)) }
        try await Task.sleep(for: .milliseconds(50))
        hub.publish(frame(3, at: 3))
        #expect(try await waiter.value.sequence == 3, "frame 1 was served after a newer frame had come")
    }

    /// The capture thread takes the newest frame's box back to fill it with the next frame:
    /// until that one is published nobody is handed the box being written, and a frame
    /// someone took before stays as it was.
    @Test func theNewestFrameTakenBackIsServedToNobody() async throws {
        let hub = FrameHub()
        _ = hub.reopen()
        hub.publish(frame(1, at: 1))
        let taken = try await hub.rawFrame(notBefore: 0, timeout: .seconds(5))
        hub.releaseNewestRaw()
        let waiter = Task { try await hub.rawFrame(notBefore: 0, timeout: .seconds(5)) }
        try await Task.sleep(for: .milliseconds(50))
        hub.publish(frame(2, at: 2))
        #expect(try await waiter.value.sequence == 2, "a frame was served while its box was being filled")
        #expect(taken.sequence == 1 && taken.bytes == [UInt8](repeating: 128, count: 8), "a frame taken before is as it was")
    }

    /// A thumbnail rendered from the raw frame asks the encoders for nothing.
    @Test func aRawFrameWaiterWakesNoEncoder() async throws {
        let hub = FrameHub()
        let epoch = hub.reopen()
        let waiter = Task { try await hub.rawFrame(notBefore: 5, timeout: .seconds(5)) }
        try await Task.sleep(for: .milliseconds(50))
        hub.publish(frame(1, at: 5))
        #expect(try await waiter.value.sequence == 1)
        // It waits: on a thread of its own, not one of the cooperative pool's two.
        let encoder = Task { try await onOwnThread { hub.nextFrameToEncode(epoch: epoch)?.1 } }
        try await Task.sleep(for: .milliseconds(200))
        hub.close()  // the encoder, if it was rightly waiting, is released with nothing
        #expect(try await encoder.value == nil, "the encoder was offered a frame nobody wanted as JPEG")
    }

    /// A frame nobody will encode (pixels kept in the warm seconds after a snapshot, with no
    /// request waiting) wakes no encoder thread: each wake-up was a switch in and out of a
    /// thread that only looked and slept again, two of them at every frame of a polled camera.
    @Test func aFrameNobodyEncodesWakesNoEncoder() async throws {
        let hub = FrameHub()
        let epoch = hub.reopen()
        let thread = Mutex<String?>(nil), taken = Mutex<[UInt32]>([])
        Thread {
            thread.withLock { $0 = Self.threadID() }
            while let (frame, _) = hub.nextFrameToEncode(epoch: epoch) { taken.withLock { $0.append(frame.sequence) } }
        }.start()
        try await waitUntil { hub.encodersWaiting == [0] }
        let tid = try #require(thread.withLock { $0 })
        let before = try #require(Self.voluntarySwitches(tid))
        for sequence in UInt32(1)...40 {
            hub.publish(frame(sequence, at: Double(sequence)))
            try await Task.sleep(for: .milliseconds(2))  // time for a woken thread to run and wait again
        }
        let after = try #require(Self.voluntarySwitches(tid))
        #expect(after - before < 5, "the encoder thread was switched in \(after - before) times for 40 frames nobody encodes")
        #expect(taken.withLock { $0 }.isEmpty)
        // Frames a stream wants still wake it.
        let stream = hub.subscribe()
        try await waitUntil { taken.withLock { $0 } == [40] && hub.encodersWaiting == [0] }
        hub.publish(frame(41, at: 41))
        try await waitUntil { taken.withLock { $0 } == [40, 41] }
        #expect(taken.withLock { $0 } == [40, 41], "the newest frame, then the next one published, taken for the stream")
        _ = stream
        hub.close()
    }

    /// A poll answered from a ready JPEG that arms an encode ahead of the next poll wakes no
    /// encoder thread: the poll is answered on the listener's event loop, and a wake-up there
    /// came between reading the request and writing its answer. The capture thread's next frame
    /// wakes the encoder instead, which then waits until the encode is due and takes that frame.
    @Test func aPollThatArmsAnEncodeAheadWakesNoEncoderUntilTheNextFrame() async throws {
        let hub = FrameHub()
        let epoch = hub.reopen()
        let thread = Mutex<String?>(nil), taken = Mutex<[(sequence: UInt32, at: Double)]>([])
        Thread {
            thread.withLock { $0 = Self.threadID() }
            while let (frame, generation) = hub.nextFrameToEncode(epoch: epoch) {
                taken.withLock { $0.append((frame.sequence, FrameHub.monotonicNow())) }
                hub.deliver(encoded(frame), generation: generation, epoch: epoch)
            }
        }.start()
        try await waitUntil { hub.encodersWaiting == [0] }
        // A JPEG for the polls to be answered from.
        let first = Task { try await hub.frame(notBefore: 0, timeout: .seconds(30)) }
        try await waitUntil { hub.wantsPlainJPEG() }
        hub.publish(frame(1, at: FrameHub.monotonicNow()))
        _ = try await first.value
        try await waitUntil { taken.withLock { $0.count } == 1 && hub.encodersWaiting == [0] }
        try await Task.sleep(for: .milliseconds(50))  // asleep in its wait, that switch counted

        let tid = try #require(thread.withLock { $0 })
        let before = try #require(Self.voluntarySwitches(tid))
        // Three polls 0.5 s apart, the last now: the period is learned at the third, and the
        // encode ahead of the fourth armed for about 0.5 s from now.
        let now = FrameHub.monotonicNow()
        for poll in [now - 1, now - 0.5, now] {
            #expect(hub.readyFrame(maxAge: 3600, interval: 0.04, now: poll) != nil)
        }
        try await Task.sleep(for: .milliseconds(100))
        let afterPolls = try #require(Self.voluntarySwitches(tid))
        #expect(afterPolls == before, "the polls woke the encoder thread \(afterPolls - before) times")
        #expect(taken.withLock { $0.count } == 1)

        // The next frame wakes it, and it takes that frame when the encode is due.
        hub.publish(frame(2, at: FrameHub.monotonicNow()))
        try await waitUntil { taken.withLock { $0.count } == 2 }
        let second = try #require(taken.withLock { $0.last })
        #expect(second.sequence == 2, "the frame after the polls, made ahead of the next one")
        #expect(second.at >= now + 0.4, "taken \(second.at - now) s after the poll, before the encode ahead was due")
        hub.close()
    }

    /// A JPEG made ahead of a poll that comes later than its encode took (its encoder woke late
    /// after the deadline, or took long to hand it over) has the next ones started earlier: its
    /// time counts from when its encode was due to start, not from the encode alone, which here
    /// takes no time at all while each JPEG comes 60 ms after its frame was taken.
    @Test func aJPEGMadeAheadThatCameLateIsStartedEarlierNextTime() async throws {
        let hub = FrameHub()
        let epoch = hub.reopen()
        let takes = Mutex<[Double]>([])
        let late = 0.06
        Thread {
            while let (frame, generation) = hub.nextFrameToEncode(epoch: epoch) {
                takes.withLock { $0.append(FrameHub.monotonicNow()) }
                Thread.sleep(forTimeInterval: late)
                hub.deliver(encoded(frame), generation: generation, epoch: epoch)
            }
        }.start()
        // Frames every 20 ms, and the polls, on threads of their own: a task of the cooperative
        // pool can be held up for longer than a period while the whole suite runs, and a poll
        // recorded at its due time but made long after it is not a poll at that time.
        let stop = Mutex(false)
        Thread {
            var sequence: UInt32 = 0
            while !stop.withLock({ $0 }) {
                sequence += 1
                hub.publish(frame(sequence, at: FrameHub.monotonicNow()))
                Thread.sleep(forTimeInterval: 0.02)
            }
        }.start()
        _ = try await hub.frame(notBefore: 0, timeout: .seconds(30))  // a JPEG for the polls to be answered from

        // Twenty polls 0.25 s apart, each recorded at its due time.
        let period = 0.25, start = FrameHub.monotonicNow() + 0.1
        let dues = (0..<20).map { start + Double($0) * period }
        let answered = Mutex<[Bool]>([])
        Thread {
            for due in dues {
                let wait = due - FrameHub.monotonicNow()
                if wait > 0 { Thread.sleep(forTimeInterval: wait) }
                let ready = hub.readyFrame(maxAge: 3600, interval: 0.02, now: due) != nil
                answered.withLock { $0.append(ready) }
            }
        }.start()
        try await waitUntil(limit: .seconds(60), every: .milliseconds(20)) { answered.withLock { $0.count } >= dues.count }
        stop.withLock { $0 = true }
        #expect(answered.withLock { $0 } == Array(repeating: true, count: dues.count))
        let age = hub.defaultSnapshotAge(interval: 0.02)
        hub.close()
        // How long before each of the last polls its JPEG's frame was taken.
        let taken = takes.withLock { $0 }
        let leads = dues.indices.dropFirst(16).compactMap { index in
            taken.last { $0 > dues[index - 1] && $0 < dues[index] }.map { dues[index] - $0 }
        }
        // A `#require`: with none, the median below would index an empty array and stop every test.
        try #require(leads.count >= 3, "no frame taken ahead of the last polls: \(taken.map { $0 - start })")
        let median = leads.sorted()[leads.count / 2]
        #expect(median >= late / 2, "taken \(leads) s before the polls; each JPEG came \(late) s after its frame was taken; age \(age); takes \(taken.map { $0 - start })")
    }

    /// A poll whose requests come early now and then (each leaves when its client's timer fires
    /// and its machine lets it, so one due a period after a late one comes early) has its JPEGs
    /// made as much earlier, and a JPEG made that much earlier still answers it.
    @Test func aPollWhoseRequestsComeEarlyHasItsJPEGsMadeEarlier() async throws {
        let hub = FrameHub()
        let epoch = hub.reopen()
        let first = Task { try await hub.frame(notBefore: 0, timeout: .seconds(30)) }
        try await waitUntil { hub.wantsPlainJPEG() }
        hub.publish(frame(1, at: FrameHub.monotonicNow()))
        let (taken, generation) = try #require(hub.nextFrameToEncode(epoch: epoch))
        hub.deliver(encoded(taken), generation: generation, epoch: epoch)
        _ = try await first.value

        // A timer every 0.5 s; every other request leaves 20 ms late, so the one after it comes
        // 40 ms before the poll's period (0.52 s, the median gap) puts it.
        let interval = 0.04, start = FrameHub.monotonicNow()
        func poll(_ index: Int) { _ = hub.readyFrame(maxAge: 3600, interval: interval, now: start + Double(index) * 0.5 + (index % 2 == 1 ? 0.02 : 0)) }
        for index in 0..<6 { poll(index) }
        let learnedAge = hub.defaultSnapshotAge(interval: interval)
        for index in 6..<20 { poll(index) }
        let age = hub.defaultSnapshotAge(interval: interval)
        hub.close()
        // The encodes took no time: the lead is the margin, then what the requests taught.
        #expect(learnedAge < interval + 0.03, "\(learnedAge)")
        #expect(age >= interval + 0.035 + 0.02, "a frame as old as the requests come early, \(age) s, does not answer them")
    }

    /// The calling thread's id: `/proc/thread-self` links to `PID/task/TID`.
    static func threadID() -> String? {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self"))?.split(separator: "/").last.map(String.init)
    }

    /// A thread's voluntary context switches (`/proc/self/task/TID/status`).
    static func voluntarySwitches(_ tid: String) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/self/task/\(tid)/status", encoding: .utf8) else { return nil }
        return status.split(separator: "\n").first { $0.hasPrefix("voluntary_ctxt_switches:") }
            .flatMap { Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) }
    }

    /// A frame encoded for stream clients alone (overlay drawn in, no plain copy) goes to the
    /// stream but is never a snapshot: the snapshot waits for a frame with its plain JPEG,
    /// and asking for one makes the encoders add it for `warmSeconds`.
    @Test func aStreamOnlyFrameIsNeverASnapshot() async throws {
        let hub = FrameHub()
        let epoch = hub.reopen()
        let stream = hub.subscribe()
        let now = FrameHub.monotonicNow()
        #expect(!hub.wantsPlainJPEG(now: now), "nobody has asked for a frame as captured")
        hub.publish(frame(1, at: now))
        let (first, generation) = try #require(hub.nextFrameToEncode(epoch: epoch))
        var streamOnly = encoded(first)
        streamOnly.overlaidOnly = true
        hub.deliver(streamOnly, generation: generation, epoch: epoch)
        var frames = stream.makeAsyncIterator()
        #expect(await frames.next()?.overlaidOnly == true, "the stream gets it")

        let waiter = Task { try await hub.frame(notBefore: 0, timeout: .seconds(5)) }
        try await Task.sleep(for: .milliseconds(50))
        #expect(hub.wantsPlainJPEG(), "a snapshot is waiting")
        hub.publish(frame(2, at: now + 0.1))
        let (second, nextGeneration) = try #require(hub.nextFrameToEncode(epoch: epoch))
        hub.deliver(encoded(second), generation: nextGeneration, epoch: epoch)
        let shot = try await waiter.value
        #expect(shot.sequence == 2 && !shot.overlaidOnly, "the snapshot skipped the stream-only frame")
        // The demand came after `now` (however long a loaded machine took since): half the warm
        // window after `now` it is still warm.
        #expect(hub.wantsPlainJPEG(now: now + FrameHub.warmSeconds / 2), "warm after a snapshot")
        #expect(!hub.wantsPlainJPEG(now: FrameHub.monotonicNow() + FrameHub.warmSeconds + 0.5), "and cold again later")
        hub.close()
    }

    /// Encoders of a pool each take a different frame, and one that finishes late does not
    /// send a client back in time.
    @Test func aPoolEncodesEachFrameOnceAndDeliversInOrder() async throws {
        let hub = FrameHub()
        let epoch = hub.reopen()
        let stream = hub.subscribe()
        hub.publish(frame(1, at: 1))
        let first = try #require(hub.nextFrameToEncode(epoch: epoch))
        hub.publish(frame(2, at: 2))
        let second = try #require(hub.nextFrameToEncode(epoch: epoch))
        #expect(first.0.sequence == 1)
        #expect(second.0.sequence == 2, "a second encoder was given a frame already taken")

        hub.deliver(encoded(second.0), generation: second.1, epoch: epoch)
        hub.deliver(encoded(first.0), generation: first.1, epoch: epoch)  // finishes late
        hub.publish(frame(3, at: 3))
        let third = try #require(hub.nextFrameToEncode(epoch: epoch))
        hub.deliver(encoded(third.0), generation: third.1, epoch: epoch)

        var received: [UInt32] = []
        for await frame in stream {
            received.append(frame.sequence)
            if frame.sequence == 3 { break }
        }
        #expect(received == [2, 3])
        #expect(hub.snapshot.framesOutrun == 1)
    }

    /// A frame an encoder took before the device was lost, finished after, never reaches a
    /// stream: the client would see a picture from before the disconnect as new.
    @Test func anEncodeFinishedAfterALossIsNotDelivered() async throws {
        let hub = FrameHub()
        let epoch = hub.reopen()
        let stream = hub.subscribe()
        hub.publish(frame(1, at: 1))
        let taken = try #require(hub.nextFrameToEncode(epoch: epoch))
        hub.deviceLost(.waitingForDevice("gone"))
        hub.deliver(encoded(taken.0), generation: taken.1, epoch: epoch)  // the slow encode ends
        hub.publish(frame(2, at: 2))  // the device is back
        let next = try #require(hub.nextFrameToEncode(epoch: epoch))
        hub.deliver(encoded(next.0), generation: next.1, epoch: epoch)
        for await frame in stream {
            #expect(frame.sequence == 2, "frame \(frame.sequence), from before the loss, was streamed after it")
            break
        }
    }

    @Test func aLostDeviceFailsWaitersAtOnce() async {
        let hub = FrameHub()
        _ = hub.reopen()
        let waiter = Task { try await hub.frame(notBefore: 0, timeout: .seconds(30)) }
        try? await Task.sleep(for: .milliseconds(50))
        hub.deviceLost(.waitingForDevice("gone"))
        do {
            _ = try await waiter.value
            Issue.record("a waiter got a frame from a lost device")
        } catch {
            #expect(error as? SessionError == .waitingForDevice("gone"))
        }
        // Failed by the loss, not by its 30 s timeout (which would throw .timeout). How long
        // the waiter's task takes to run again is the machine's: a CI run once took 9 s.
    }

    /// Between being given an id and being added, a waiter lets the hub's lock go: what ends
    /// it meanwhile (a loss, its timeout) must end it once it is added, not leave it waiting.
    @Test(.timeLimit(.minutes(1)))
    func aWaiterEndedBeforeItIsAddedFailsAtOnce() async {
        let hub = FrameHub()
        _ = hub.reopen()
        func waitAfter(_ end: (UInt64) -> Void) async -> (any Error)? {
            guard case .wait(let id) = hub.freshFrame(notBefore: 0, poll: false) else { return nil }
            end(id)
            do {
                _ = try await withCheckedThrowingContinuation { hub.addWaiter(id, FrameHub.Waiter(notBefore: 0, continuation: $0)) }
                return nil
            } catch {
                return error
            }
        }
        let lost = await waitAfter { _ in hub.deviceLost(.waitingForDevice("gone")) }
        #expect(lost as? SessionError == .waitingForDevice("gone"))
        let timedOut = await waitAfter { hub.cancelWaiter($0, with: SessionError.timeout("late")) }
        #expect(timedOut as? SessionError == .timeout("late"))
    }

    /// A 30 fps camera whose timestamps jitter by up to ±12 ms around their slots
    /// (intervals from 9 to 57 ms): an average of per-frame rates reads well above 30,
    /// frames over time read 30.
    @Test func measuredFPSCountsFramesOverTimeSoJitterDoesNotInflateIt() {
        let hub = FrameHub()
        _ = hub.reopen()
        var random = SplitMix64(seed: 7)
        for n in 1...300 {
            let jitter = (Double(random.next() % 1001) / 1000 - 0.5) * 0.024
            hub.publish(frame(UInt32(n), at: 1000 + Double(n) / 30 + jitter))
        }
        let fps = hub.snapshot.measuredFPS
        #expect(abs(fps - 30) < 1, "measured \(fps) fps for frames 1/30 s apart on average")
    }

    @Test func theRateMeterFollowsAChangeAndStartsAgainAfterAReset() {
        var meter = FrameRateMeter()
        #expect(meter.rate == 0)
        var time = 50.0
        for _ in 0..<120 { time += 1.0 / 60; meter.record(time) }
        #expect(abs(meter.rate - 60) < 0.5)
        // Two seconds (the window) after the camera slows to 10 fps, only the new rate counts.
        for _ in 0..<25 { time += 0.1; meter.record(time) }
        #expect(abs(meter.rate - 10) < 0.5)
        meter.reset()
        #expect(meter.rate == 0)
        meter.record(1)  // an earlier time than before the reset: a new run
        #expect(meter.rate == 0)
        meter.record(1.5)
        #expect(meter.rate == 2)
    }
}

extension FrameHubTests {
    /// Under a light load one encoder thread makes every JPEG, so the others never touch
    /// their buffers: a frame goes to the lowest-numbered encoder waiting. While that one is
    /// busy, the next takes the new frame, so the pool still keeps up under load.
    @Test func theLowestWaitingEncoderTakesEachFrameAndTheNextOneWhileItIsBusy() async throws {
        let hub = FrameHub()
        let epoch = hub.reopen()
        let stream = hub.subscribe()
        var delivered = stream.makeAsyncIterator()
        let encoders = EncoderThreads(hub, epoch: epoch, holding: [100], encoded: encoded)  // 100 holds encoder 0
        let busy = encoders.release
        func bothWaiting() async throws {
            try await waitUntil { hub.encodersWaiting == [0, 1] }
        }
        for sequence in UInt32(1)...20 {
            try await bothWaiting()
            hub.publish(frame(sequence, at: Double(sequence)))
            #expect(await delivered.next()?.sequence == sequence)
        }
        #expect(encoders.taken.filter { $0.value != 0 }.isEmpty, "frames taken by encoder 1: \(encoders.taken)")

        try await bothWaiting()
        hub.publish(frame(100, at: 100))
        try await waitUntil { hub.encodersWaiting == [1] }
        hub.publish(frame(101, at: 101))
        #expect(await delivered.next()?.sequence == 101, "encoder 1 took the frame while encoder 0 was busy")
        #expect(encoders.taken[101] == 1)
        busy.signal()
        hub.close()
    }
}

extension FrameHubTests {
    /// A snapshot that the encode in flight will answer starts no second encode on the next
    /// frame (one request, one encode); one that needs a newer frame than the one in flight
    /// has the next encoder take the next frame at once.
    @Test func aSnapshotWaitsForTheEncodeInFlightWhenThatFrameIsFreshEnough() async throws {
        let hub = FrameHub()
        let epoch = hub.reopen()
        let encoders = EncoderThreads(hub, epoch: epoch, holding: [1, 2], encoded: encoded)  // held in a long encode
        let release = encoders.release
        try await waitUntil { hub.encodersWaiting == [0, 1] }
        hub.publish(frame(1, at: 1))
        let first = Task { try await hub.frame(notBefore: 0, timeout: .seconds(30)) }
        try await waitUntil { encoders.taken[1] != nil && hub.encodersWaiting == [1] }
        hub.publish(frame(2, at: 2))
        try await Task.sleep(for: .milliseconds(300))
        #expect(encoders.taken[2] == nil, "a second encoder started for a snapshot the first one answers")
        release.signal()
        #expect(try await first.value.sequence == 1)

        // Frame 2 (captured at 2) is too old for this one: while it is encoded, frame 3 is taken too.
        try await waitUntil { hub.encodersWaiting == [0, 1] }
        let second = Task { try await hub.frame(notBefore: 2.5, timeout: .seconds(30)) }
        try await waitUntil { encoders.taken[2] != nil && hub.encodersWaiting == [1] }
        hub.publish(frame(3, at: 3))
        #expect(try await second.value.sequence == 3)
        #expect(encoders.taken[3] == 1)
        release.signal()
        hub.close()
    }
}

/// Two encoder threads on a hub, as the capture session runs them, that note which took each
/// frame and hold the frames in `holding` (a long encode) until `release` is signalled.
final class EncoderThreads: Sendable {
    let release = DispatchSemaphore(value: 0)
    private let takers = Mutex<[UInt32: Int]>([:])

    init(_ hub: FrameHub, epoch: UInt64, holding: Set<UInt32>, encoded: @escaping @Sendable (Frame) -> EncodedFrame) {
        for worker in 0..<2 {
            Thread { [self] in
                while let (frame, generation) = hub.nextFrameToEncode(epoch: epoch, worker: worker) {
                    takers.withLock { $0[frame.sequence] = worker }
                    if holding.contains(frame.sequence) { release.wait() }
                    hub.deliver(encoded(frame), generation: generation, epoch: epoch)
                }
            }.start()
        }
    }

    /// Which encoder took each frame, by sequence.
    var taken: [UInt32: Int] { takers.withLock { $0 } }
}
