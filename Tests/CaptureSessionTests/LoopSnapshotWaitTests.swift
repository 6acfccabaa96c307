@testable import CaptureSession
import CamdTestSupport
import Foundation
import Synchronization
import Testing
import VideoCore

/// A poll that found no JPEG new enough waits for its encode on the listener's event loop
/// (`CaptureSession.waitForSnapshot`, issue 16): called back once with the snapshot when it is
/// made, or with nil when the wait ends otherwise, and refused at once when only the router
/// can answer it.
@Suite struct LoopSnapshotWaitTests {
    /// What a wait's `done` was called with, each call.
    final class Calls: Sendable {
        private let stream: AsyncStream<RenderedSnapshot?>
        private let continuation: AsyncStream<RenderedSnapshot?>.Continuation
        let count = Atomic<Int>(0)

        init() { (stream, continuation) = AsyncStream.makeStream() }

        var done: @Sendable (RenderedSnapshot?) -> Void {
            { [self] shot in
                count.add(1, ordering: .relaxed)
                continuation.yield(shot)
            }
        }

        /// The first call's value; fails after `seconds`.
        func first(within seconds: Double = 10) async throws -> RenderedSnapshot? {
            let stream = stream
            return try await withThrowingTaskGroup(of: RenderedSnapshot??.self) { group in
                group.addTask { for await shot in stream { return .some(shot) }; return nil }
                group.addTask { try await Task.sleep(for: .seconds(seconds)); return nil }
                let first = try await group.next() ?? nil
                group.cancelAll()
                guard let first else { throw WaitFailure("done was not called within \(seconds) s") }
                return first
            }
        }
    }

    static func camera(_ id: String, fps: Double = 30, image: ImageSettings = ImageSettings()) -> CaptureSession {
        var settings = CameraSettings(id: id, device: FrameSources.syntheticName, size: FrameSize(width: 320, height: 240), fps: fps)
        settings.image = image
        return CaptureSession(settings: settings)
    }

    @Test func aPollIsCalledBackWithTheJPEGMadeForIt() async throws {
        let session = Self.camera("made")
        await session.start()
        let asked = Date().timeIntervalSince1970
        let calls = Calls()
        // A frame captured after the request: none is ready, so it waits.
        guard case .waiting = session.waitForSnapshot(maxAge: 0, done: calls.done) else {
            await session.stop()
            throw WaitFailure("a poll of a frame captured after it did not wait")
        }
        let shot = try await calls.first()
        let status = await session.status()
        await session.stop()

        let made = try #require(shot, "the wait ended without a snapshot")
        #expect(made.captureTime >= asked - 0.05, "a frame captured before the request: \(made.captureTime) < \(asked)")
        #expect(made.size == FrameSize(width: 320, height: 240) && !made.fromRawFrame)
        #expect(made.jpeg.starts(with: [0xFF, 0xD8]) && made.jpeg.suffix(2) == [0xFF, 0xD9])
        #expect(EXIFReadBack.entries(in: made.jpeg)[0x9003] != nil, "no capture time in the EXIF")
        #expect(status.snapshots.waitedOnEventLoop == 1 && status.snapshots.answeredReady == 0, "\(status.snapshots)")
        #expect(calls.count.load(ordering: .relaxed) == 1)
    }

    /// A JPEG new enough already made answers at once, with nothing to call back.
    @Test func aPollAJPEGAnswersIsReadyAtOnce() async throws {
        let session = Self.camera("ready")
        await session.start()
        _ = try await session.snapshot(maxAge: 0)
        let calls = Calls()
        let found = session.waitForSnapshot(maxAge: 600, done: calls.done)
        await session.stop()
        guard case .ready(let shot) = found else { throw WaitFailure("a JPEG new enough did not answer at once: \(found)") }
        #expect(shot.jpeg.starts(with: [0xFF, 0xD8]))
        #expect(calls.count.load(ordering: .relaxed) == 0)
    }

    /// A cancelled wait (the connection went, or it waited too long) is called back with
    /// nil, once: the JPEG made after it goes to nobody through it. A frame every second, one
    /// just taken: the next comes long after the cancel.
    @Test func aCancelledWaitIsCalledBackWithNilOnce() async throws {
        let session = Self.camera("cancelled", fps: 1)
        await session.start()
        _ = try await session.snapshot(maxAge: 0)
        let calls = Calls()
        guard case .waiting(let wait) = session.waitForSnapshot(maxAge: 0, done: calls.done) else {
            await session.stop()
            throw WaitFailure("a poll of a frame captured after it did not wait")
        }
        wait.cancel()
        let shot = try await calls.first()
        _ = try await session.snapshot(maxAge: 0)  // a JPEG made after the cancel
        wait.cancel()
        let status = await session.status()
        await session.stop()
        #expect(shot == nil, "a cancelled wait was given a snapshot")
        #expect(calls.count.load(ordering: .relaxed) == 1)
        #expect(status.snapshots.waitedOnEventLoop == 0)
    }

    /// A camera stopped during the wait ends it with nil: the router answers the poll. A
    /// frame every second, one just taken: the stop comes long before the next.
    @Test func aCameraStoppedDuringTheWaitEndsIt() async throws {
        let session = Self.camera("stopped", fps: 1)
        await session.start()
        _ = try await session.snapshot(maxAge: 0)
        let calls = Calls()
        guard case .waiting = session.waitForSnapshot(maxAge: 0, done: calls.done) else {
            await session.stop()
            throw WaitFailure("a poll of a frame captured after it did not wait")
        }
        await session.stop()
        let shot = try await calls.first()
        try await Task.sleep(for: .milliseconds(100))
        #expect(shot == nil, "a wait the stop ended was given a snapshot")
        #expect(calls.count.load(ordering: .relaxed) == 1)
    }

    /// Only the router answers a camera not running, and one whose image settings change the
    /// frame (turned, scaled, stamped): refused at once, nothing called back.
    @Test func whatOnlyTheRouterAnswersIsRefusedAtOnce() async throws {
        var turned = ImageSettings()
        turned.geometry.longestSide = 160
        let stopped = Self.camera("idle"), rendered = Self.camera("turned", image: turned)
        await rendered.start()
        let calls = Calls()
        let whenStopped = stopped.waitForSnapshot(maxAge: 0, done: calls.done)
        let whenRendered = rendered.waitForSnapshot(maxAge: 0, done: calls.done)
        await rendered.stop()
        guard case .unavailable = whenStopped else { throw WaitFailure("a stopped camera's poll: \(whenStopped)") }
        guard case .unavailable = whenRendered else { throw WaitFailure("a rendered camera's poll: \(whenRendered)") }
        #expect(calls.count.load(ordering: .relaxed) == 0)
    }
}

struct WaitFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
