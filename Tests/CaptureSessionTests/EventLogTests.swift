import CaptureSession
import Foundation
import Testing
import VideoCore

/// The event log: ids in order, a bounded backlog to resume from, and bounded subscribers
/// that are dropped, not waited for.
@Suite struct EventLogTests {
    static func saved(_ n: Int) -> EventPayload {
        .photoSaved(.init(camera: "front", name: "p\(n).jpg", bytes: n, width: 320, height: 240))
    }

    /// Reads `count` events (fewer if the subscription ends first).
    /// Up to `count` events; fewer when the subscription ends or `limit` passes first (the
    /// subscription is then ended, so a test whose event never comes fails rather than hangs).
    static func read(_ subscription: EventSubscription, _ count: Int, limit: Duration = .seconds(60)) async -> [DaemonEvent] {
        let timer = Task {
            try await Task.sleep(for: limit)
            subscription.cancel()
        }
        defer { timer.cancel() }
        var events: [DaemonEvent] = []
        while events.count < count, let item = await subscription.next() {
            if case .event(let event) = item { events.append(event) }
        }
        return events
    }

    @Test func eventsHaveIncreasingIdsAndComeInOrder() async {
        let log = EventLog()
        let live = log.subscribe()
        for n in 1...5 { log.publish(Self.saved(n)) }
        let events = await Self.read(live, 5)
        #expect(events.map(\.id) == [1, 2, 3, 4, 5])
        #expect(events.map(\.payload) == (1...5).map(Self.saved))
        #expect(zip(events, events.dropFirst()).allSatisfy { $0.time <= $1.time })
        #expect(log.lastID == 5)
        live.cancel()
    }

    @Test func theBacklogKeepsOnlyTheNewestEvents() async {
        let log = EventLog(backlogCapacity: 10)
        for n in 1...25 { log.publish(Self.saved(n)) }
        let resumed = log.subscribe(after: 15)
        #expect(await Self.read(resumed, 10).map(\.id) == Array(16...25))
        resumed.cancel()
    }

    @Test func aClientResumesAfterAnIdAndThenGetsLiveEvents() async {
        let log = EventLog()
        for n in 1...8 { log.publish(Self.saved(n)) }
        let resumed = log.subscribe(after: 5)
        log.publish(Self.saved(9))
        let events = await Self.read(resumed, 4)
        #expect(events.map(\.id) == [6, 7, 8, 9])
        #expect(!events.contains { $0.type == .gap })
        resumed.cancel()
    }

    @Test func anIdOlderThanTheBacklogGivesAGapWithHowManyWereLost() async throws {
        let log = EventLog(backlogCapacity: 10)
        for n in 1...25 { log.publish(Self.saved(n)) }
        let resumed = log.subscribe(after: 3)
        let events = await Self.read(resumed, 11)
        let gap = try #require(events.first)
        guard case .gap(let info) = gap.payload else { Issue.record("first event is \(gap.type), not gap"); return }
        #expect(info.lost == 12, "events 4 to 15 are gone")
        #expect(gap.id == 3)
        #expect(events.dropFirst().map(\.id) == Array(16...25))
        resumed.cancel()
    }

    @Test func aSlowSubscriberIsDroppedWhilePublishingGoesOnAndAnotherGetsEverything() async throws {
        let log = EventLog(subscriberCapacity: 5)
        let slow = log.subscribe()
        let fast = log.subscribe()
        var fastGot: [DaemonEvent] = []
        for n in 1...20 {
            log.publish(Self.saved(n))  // returns at once: nobody is waited for
            fastGot += await Self.read(fast, 1)
        }
        #expect(fastGot.map(\.id) == Array(1...20))
        #expect(log.droppedSubscribers == 1)

        var slowItems: [DaemonEvent] = []
        while let item = await slow.next() {
            if case .event(let event) = item { slowItems.append(event) }
        }
        #expect(slowItems.dropLast().map(\.id) == [1, 2, 3, 4, 5])
        let last = try #require(slowItems.last)
        guard case .dropped(let info) = last.payload else { Issue.record("the slow queue ends with \(last.type), not dropped"); return }
        #expect(last.id == 5, "the id to resume from")
        #expect(info.message.contains("Last-Event-ID 5"))
        fast.cancel()
    }

    @Test func filtersKeepOneCameraAndSomeTypes() async {
        let log = EventLog()
        let filtered = log.subscribe(filter: EventFilter(camera: "back", types: [.photoSaved, .diskFull]))
        log.publish(Self.saved(1))
        log.publish(.photoSaved(.init(camera: "back", name: "b.jpg", bytes: 1, width: 1, height: 1)))
        log.publish(.cameraState(.init(camera: "back", state: .running, previous: .starting)))
        log.publish(.diskFull(.init(path: "/photos", message: "full")))
        let events = await Self.read(filtered, 2)
        #expect(events.map(\.id) == [2, 4])
        filtered.cancel()
    }

    @Test func theJSONIsFlatWithSnakeCaseFields() throws {
        let event = DaemonEvent(id: 7, time: 1, payload: .recordingFinished(.init(camera: "front", name: "a.mp4", durationSeconds: 2.5, bytes: 10)))
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        encoder.outputFormatting = .sortedKeys
        let json = String(decoding: try encoder.encode(event), as: UTF8.self)
        #expect(json == #"{"bytes":10,"camera":"front","duration_seconds":2.5,"id":7,"name":"a.mp4","time":1,"type":"recording_finished"}"#)
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        #expect(try decoder.decode(DaemonEvent.self, from: Data(json.utf8)) == event)
    }

    @Test func aTimelapseGivesOnePhotoSavedPerPhoto() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("camd-events-\(UUID().uuidString.prefix(8))").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        let log = EventLog()
        let photos = PhotoOutput(root: root, events: log)
        let settings = CameraSettings(id: "lapse", device: FrameSources.syntheticName, size: FrameSize(width: 320, height: 240),
                                      fps: 30, photos: PhotoSettings(intervalSeconds: 0.2, keepCount: 100))
        let session = CaptureSession(settings: settings, events: log)
        let watcher = log.subscribe(filter: EventFilter(types: [.photoSaved]))
        await session.start()
        let timelapse = Task { await IntervalCapture(session: session, photos: photos).run() }
        // Waits for three photos' events, however long a loaded machine takes.
        let first = await Self.read(watcher, 3)
        timelapse.cancel()
        await timelapse.value
        await session.stop()
        watcher.cancel()
        var events = first
        while let item = await watcher.next() { if case .event(let event) = item { events.append(event) } }

        let saved = await photos.list(camera: "lapse")
        #expect(saved.count >= 3)
        let names = events.compactMap { event -> String? in
            guard case .photoSaved(let photo) = event.payload else { return nil }
            #expect(photo.camera == "lapse" && photo.width == 320 && photo.height == 240)
            return photo.name
        }
        #expect(names.sorted() == saved.map(\.name).sorted())
    }
}
