@testable import CaptureSession
import Foundation
import Testing

/// A folder of its own for one test, removed afterwards.
private func withRoot(_ body: (String) async throws -> Void) async throws {
    let folder = FileManager.default.temporaryDirectory
        .appendingPathComponent("camd-photos-\(getpid())-\(UInt32.random(in: 0...UInt32.max))").path
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    try await body(folder)
}

/// A small JPEG-shaped byte string: SOI, APP0, SOF0 with the size, SOS, padding, EOI.
private func fakeJPEG(width: Int = 64, height: Int = 48, bytes total: Int = 300) -> [UInt8] {
    var jpeg: [UInt8] = [0xFF, 0xD8]
    jpeg += [0xFF, 0xE0, 0x00, 0x10] + Array("JFIF".utf8) + [0, 1, 1, 0, 0, 1, 0, 1, 0, 0]
    jpeg += [0xFF, 0xC0, 0x00, 0x11, 0x08, UInt8(height >> 8), UInt8(height & 0xFF), UInt8(width >> 8), UInt8(width & 0xFF),
             0x03, 0x01, 0x22, 0x00, 0x02, 0x11, 0x01, 0x03, 0x11, 0x01]
    jpeg += [0xFF, 0xDA, 0x00, 0x0C, 0x03, 0x01, 0x00, 0x02, 0x11, 0x03, 0x11, 0x00, 0x3F, 0x00]
    jpeg += [UInt8](repeating: 0x55, count: max(0, total - jpeg.count - 2))
    return jpeg + [0xFF, 0xD9]
}

private func exists(_ path: String) -> Bool {
    var status = stat()
    return lstat(path, &status) == 0
}

private func temporaryFiles(in folder: String) -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter { $0.hasPrefix(AtomicFile.temporaryPrefix) }
}

/// Whether this process may mount a tmpfs (root with CAP_SYS_ADMIN), to fill a disk for real;
/// the photo, timelapse and recording tests share it.
let canMountTmpfs: Bool = {
    let probe = FileManager.default.temporaryDirectory.appendingPathComponent("camd-mount-probe-\(getpid())").path
    try? FileManager.default.createDirectory(atPath: probe, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: probe) }
    guard mount("tmpfs", probe, "tmpfs", 0, "size=64k") == 0 else { return false }
    umount(probe)
    return true
}()

@Suite struct PhotoOutputTests {
    let settings = PhotoSettings()

    // MARK: Names

    @Test func theNamePatternIsExpandedInLocalTime() throws {
        let time = 1_700_000_000.123
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = .current
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second],
                                            from: Date(timeIntervalSince1970: time))
        let date = String(format: "%04d%02d%02d", parts.year!, parts.month!, parts.day!)
        let clock = String(format: "%02d%02d%02d", parts.hour!, parts.minute!, parts.second!)

        let name = try PhotoOutput.fileName(pattern: PhotoSettings.defaultPattern, camera: "front",
                                            captureTime: time, sequence: 42)
        #expect(name == "front-\(date)-\(clock)-123-000042.jpg")
        let custom = try PhotoOutput.fileName(pattern: "{date}_{time}.{ms}_{seq}_{camera}.jpg", camera: "c",
                                              captureTime: time + 0.876, sequence: 1_234_567)
        #expect(custom == "\(date)_\(clock).999_1234567_c.jpg")
    }

    @Test func badPatternsAreRefusedWithTheRuleBroken() {
        for (pattern, rule) in [("{camera}-{dat}.jpg", "{dat}"), ("{camera}/{seq}.jpg", "'/'"),
                                ("{camera}.png", ".jpg"), (".{seq}.jpg", "'.'")] {
            #expect {
                _ = try PhotoOutput.fileName(pattern: pattern, camera: "c", captureTime: 0, sequence: 0)
            } throws: { error in
                guard let error = error as? PhotoError, case .invalidName(let message) = error else { return false }
                return message.contains(rule) && message.contains("pattern")
            }
        }
    }

    @Test func aTakenNameGetsASuffix() async throws {
        try await withRoot { root in
            let output = PhotoOutput(root: root)
            let fixed = PhotoSettings(namePattern: "{camera}-shot.jpg")
            var names: [String] = []
            for sequence in 0..<3 {
                let record = try await output.save(fakeJPEG(), camera: "front", settings: fixed, captureTime: 100 + Double(sequence),
                                                   sequence: UInt32(sequence), width: 64, height: 48)
                names.append(record.name)
            }
            #expect(names == ["front-shot.jpg", "front-shot-2.jpg", "front-shot-3.jpg"])
            // Names are unique across cameras too, so a name alone finds a photo.
            let shared = PhotoSettings(namePattern: "shot.jpg")
            let a = try await output.save(fakeJPEG(), camera: "a", settings: shared, captureTime: 1, sequence: 0, width: 64, height: 48)
            let b = try await output.save(fakeJPEG(), camera: "b", settings: shared, captureTime: 1, sequence: 0, width: 64, height: 48)
            #expect([a.name, b.name] == ["shot.jpg", "shot-2.jpg"])
            #expect(exists(root + "/front/front-shot-3.jpg") && exists(root + "/b/shot-2.jpg"))
        }
    }

    @Test func concurrentSavesNeverShareAName() async throws {
        try await withRoot { root in
            let output = PhotoOutput(root: root)
            let fixed = PhotoSettings(namePattern: "same.jpg")
            let names = try await withThrowingTaskGroup(of: String.self) { group in
                for sequence in 0..<20 {
                    group.addTask {
                        try await output.save(fakeJPEG(), camera: "c\(sequence % 3)", settings: fixed, captureTime: 5,
                                              sequence: UInt32(sequence), width: 64, height: 48).name
                    }
                }
                return try await group.reduce(into: [String]()) { $0.append($1) }
            }
            #expect(Set(names).count == 20)
            #expect(await output.list().count == 20)
        }
    }

    // MARK: Listing

    @Test func listIsNewestFirstAndFilters() async throws {
        try await withRoot { root in
            let output = PhotoOutput(root: root)
            for (time, camera) in [(10.0, "a"), (20.0, "b"), (30.0, "a"), (40.0, "b"), (50.0, "a")] {
                _ = try await output.save(fakeJPEG(), camera: camera, settings: settings, captureTime: time,
                                          sequence: UInt32(time), width: 64, height: 48)
            }
            #expect(await output.list().map(\.captureTime) == [50, 40, 30, 20, 10])
            #expect(await output.list(camera: "a").map(\.captureTime) == [50, 30, 10])
            #expect(await output.list(camera: "nobody").isEmpty)
            #expect(await output.list(since: 20, until: 40).map(\.captureTime) == [30, 20])
            #expect(await output.list(camera: "b", since: 25).map(\.captureTime) == [40])
            #expect(await output.list(limit: 2).map(\.captureTime) == [50, 40])
            #expect(await output.list(until: 40, limit: 2).map(\.captureTime) == [30, 20])
            #expect(await output.list(limit: 0).isEmpty)

            let first = try #require(await output.list(limit: 1).first)
            #expect(first.camera == "a" && first.sequence == 50 && first.width == 64 && first.height == 48 && first.bytes == 300)
        }
    }

    @Test func aFreshOutputFindsThePhotosOnDisk() async throws {
        try await withRoot { root in
            let first = PhotoOutput(root: root)
            let saved = try await first.save(fakeJPEG(width: 640, height: 480, bytes: 1000), camera: "cam", settings: settings,
                                             captureTime: 1_700_000_000.25, sequence: 7, width: 640, height: 480)
            _ = try await first.save(fakeJPEG(), camera: "cam", settings: settings, captureTime: 1_700_000_100,
                                     sequence: 8, width: 64, height: 48)
            // What a killed run and other programs leave behind is not a photo.
            try Data([1, 2, 3]).write(to: URL(fileURLWithPath: root + "/cam/\(AtomicFile.temporaryPrefix)x.jpg.AbC123"))
            try Data([1]).write(to: URL(fileURLWithPath: root + "/cam/notes.txt"))
            try FileManager.default.createDirectory(atPath: root + "/cam/folder.jpg", withIntermediateDirectories: true)

            let second = PhotoOutput(root: root)
            let listed = await second.list()
            #expect(listed.map(\.name) == [(await first.list())[0].name, saved.name])
            let found = try #require(listed.last)
            #expect(found.camera == "cam" && found.bytes == 1000)
            #expect(abs(found.captureTime - saved.captureTime) < 0.001)
            #expect(found.width == 640 && found.height == 480)
            #expect(found.sequence == nil)
            #expect(await second.statistics.photosStored == 2)
        }
    }

    @Test func fileReturnsTheRecordAndPath() async throws {
        try await withRoot { root in
            let output = PhotoOutput(root: root)
            let bytes = fakeJPEG(bytes: 777)
            let saved = try await output.save(bytes, camera: "cam", settings: settings, captureTime: 3, sequence: 1, width: 64, height: 48)
            let (record, path) = try await output.file(named: saved.name)
            #expect(record == saved)
            #expect(path == root + "/cam/" + saved.name)
            #expect(FileManager.default.contents(atPath: path) == Data(bytes))
            let statistics = await output.statistics
            #expect(statistics.photosSaved == 1 && statistics.bytesWritten == 777 && statistics.bytesStored == 777)
        }
    }

    @Test func deleteRemovesTheFileAndTheListEntry() async throws {
        try await withRoot { root in
            let output = PhotoOutput(root: root)
            let keep = try await output.save(fakeJPEG(), camera: "cam", settings: settings, captureTime: 1, sequence: 1, width: 64, height: 48)
            let gone = try await output.save(fakeJPEG(), camera: "cam", settings: settings, captureTime: 2, sequence: 2, width: 64, height: 48)
            try await output.delete(named: gone.name)
            #expect(!exists(root + "/cam/" + gone.name))
            #expect(await output.list() == [keep])
            await #expect { try await output.delete(named: gone.name) } throws: { Self.isNotFound($0, naming: gone.name) }
            await #expect { _ = try await output.file(named: gone.name) } throws: { Self.isNotFound($0, naming: gone.name) }
            #expect(await output.statistics.photosDeleted == 1)

            // A file removed behind camd's back is reported as not found and leaves the list.
            try FileManager.default.removeItem(atPath: root + "/cam/" + keep.name)
            await #expect { _ = try await output.file(named: keep.name) } throws: { Self.isNotFound($0, naming: keep.name) }
            #expect(await output.list().isEmpty)
        }
    }

    static func isNotFound(_ error: any Error, naming name: String) -> Bool {
        guard let error = error as? PhotoError, case .notFound(let message) = error else { return false }
        return message.contains(name)
    }

    // MARK: Names that must be refused

    @Test func badNamesAreRefusedAndNothingIsTouched() async throws {
        try await withRoot { root in
            let output = PhotoOutput(root: root)
            _ = try await output.save(fakeJPEG(), camera: "cam", settings: settings, captureTime: 1, sequence: 1, width: 64, height: 48)
            // Files the bad names could reach if they were not refused.
            try FileManager.default.createDirectory(atPath: root + "/a", withIntermediateDirectories: true)
            try Data([9]).write(to: URL(fileURLWithPath: root + "/a/b.jpg"))
            try Data([9]).write(to: URL(fileURLWithPath: root + "/cam/.hidden.jpg"))

            let bad: [(name: String, rule: String)] = [
                ("..", "names a folder"), (".", "names a folder"), ("a/b.jpg", "'/'"), (".hidden.jpg", "starts with '.'"),
                ("x\0.jpg", "NUL"), ("x.png", ".jpg"), ("", "empty"), (".jpg", "starts with '.'"),
                (String(repeating: "a", count: 252) + ".jpg", "255 bytes"),
            ]
            for (name, rule) in bad {
                for attempt in 0..<2 {
                    do throws(PhotoError) {
                        if attempt == 0 { _ = try await output.file(named: name) } else { try await output.delete(named: name) }
                        Issue.record("\(name.debugDescription) was accepted")
                    } catch {
                        guard case .invalidName(let message) = error else { Issue.record("\(error)"); continue }
                        #expect(message.contains(rule), "\(message)")
                    }
                }
            }
            #expect(exists(root + "/a/b.jpg") && exists(root + "/cam/.hidden.jpg") && exists(root + "/cam"))
            await #expect(throws: PhotoError.self) { _ = try await output.file(named: "x.jpg", camera: "../etc") }
        }
    }

    @Test func symbolicLinksAreRefused() async throws {
        try await withRoot { root in
            let output = PhotoOutput(root: root)
            _ = try await output.save(fakeJPEG(), camera: "cam", settings: settings, captureTime: 1, sequence: 1, width: 64, height: 48)
            let passwd = FileManager.default.contents(atPath: "/etc/passwd")
            try FileManager.default.createSymbolicLink(atPath: root + "/cam/evil.jpg", withDestinationPath: "/etc/passwd")
            // A camera folder that is a link to a folder outside the root.
            let outside = root + "-outside"
            try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: outside) }
            try fakeJPEG().withUnsafeBytes { try Data($0).write(to: URL(fileURLWithPath: outside + "/x.jpg")) }
            try FileManager.default.createSymbolicLink(atPath: root + "/linked", withDestinationPath: outside)

            for name in ["evil.jpg", "x.jpg"] {
                await #expect { _ = try await output.file(named: name) } throws: { Self.isInvalidName($0, naming: name) }
                await #expect { try await output.delete(named: name) } throws: { Self.isInvalidName($0, naming: name) }
            }
            #expect(exists(root + "/cam/evil.jpg"))
            #expect(FileManager.default.contents(atPath: "/etc/passwd") == passwd)
            #expect(exists(outside + "/x.jpg"))

            // Saving into the linked folder would write outside the root.
            await #expect { _ = try await output.save(fakeJPEG(), camera: "linked", settings: settings, captureTime: 2,
                                                       sequence: 2, width: 64, height: 48) }
                throws: { "\($0)".contains("symbolic link") }
            try #expect(FileManager.default.contentsOfDirectory(atPath: outside) == ["x.jpg"])

            // Neither link is listed, by this output or by a fresh one.
            #expect(await output.list().map(\.name).allSatisfy { $0 != "evil.jpg" && $0 != "x.jpg" })
            #expect(await PhotoOutput(root: root).list().count == 1)
        }
    }

    static func isInvalidName(_ error: any Error, naming name: String) -> Bool {
        guard let error = error as? PhotoError, case .invalidName(let message) = error else { return false }
        return message.contains(name)
    }

    @Test func aBadCameraIDIsRefused() async throws {
        try await withRoot { root in
            let output = PhotoOutput(root: root)
            await #expect { _ = try await output.save(fakeJPEG(), camera: "../etc", settings: settings, captureTime: 1,
                                                       sequence: 1, width: 64, height: 48) }
                throws: { Self.isInvalidName($0, naming: "../etc") }
            try #expect(FileManager.default.contentsOfDirectory(atPath: root).isEmpty)
            #expect(await output.statistics.saveFailures == 1)
        }
    }

    // MARK: Retention

    @Test func retentionKeepsTheNewestByCount() async throws {
        try await withRoot { root in
            let output = PhotoOutput(root: root)
            let limited = PhotoSettings(keepCount: 3)
            var saved: [PhotoRecord] = []
            for sequence in 0..<5 {
                saved.append(try await output.save(fakeJPEG(), camera: "cam", settings: limited, captureTime: 100 + Double(sequence),
                                                   sequence: UInt32(sequence), width: 64, height: 48))
            }
            #expect(await output.list() == saved.suffix(3).reversed())
            #expect(!exists(root + "/cam/" + saved[0].name) && !exists(root + "/cam/" + saved[1].name))
            try #expect(FileManager.default.contentsOfDirectory(atPath: root + "/cam").count == 3)
            let statistics = await output.statistics
            #expect(statistics.retentionDeletions == 2 && statistics.retentionBytesRemoved == 600 && statistics.photosStored == 3)
        }
    }

    @Test func retentionKeepsTheNewestByBytes() async throws {
        try await withRoot { root in
            let output = PhotoOutput(root: root)
            let limited = PhotoSettings(keepBytes: 2_500)
            var saved: [PhotoRecord] = []
            for sequence in 0..<4 {
                saved.append(try await output.save(fakeJPEG(bytes: 1_000), camera: "cam", settings: limited,
                                                   captureTime: 100 + Double(sequence), sequence: UInt32(sequence), width: 64, height: 48))
            }
            #expect(await output.list() == saved.suffix(2).reversed())
            // A photo larger than the limit on its own is kept; everything older goes.
            let big = try await output.save(fakeJPEG(bytes: 5_000), camera: "cam", settings: limited, captureTime: 200,
                                            sequence: 9, width: 64, height: 48)
            #expect(await output.list() == [big])
            #expect(exists(root + "/cam/" + big.name))
        }
    }

    @Test func retentionDeletesPhotosOlderThanTheAgeLimit() async throws {
        try await withRoot { root in
            let output = PhotoOutput(root: root)
            let now = 1_000_000.0
            var saved: [PhotoRecord] = []
            for age in [100.0, 50.0, 10.0] {
                saved.append(try await output.save(fakeJPEG(), camera: "cam", settings: settings, captureTime: now - age,
                                                   sequence: UInt32(age), width: 64, height: 48))
            }
            _ = try await output.save(fakeJPEG(), camera: "other", settings: settings, captureTime: 0, sequence: 0, width: 64, height: 48)
            let result = await output.applyRetention(camera: "cam", settings: PhotoSettings(keepSeconds: 30), now: now)
            #expect(result.removedFiles == 2 && result.removedBytes == 600 && result.failures.isEmpty)
            #expect(await output.list(camera: "cam") == [saved[2]])
            #expect(await output.list(camera: "other").count == 1)  // another camera's limits are its own
            #expect(!exists(root + "/cam/" + saved[0].name))
        }
    }

    @Test func retentionNeverDeletesThePhotoJustSaved() async throws {
        try await withRoot { root in
            let output = PhotoOutput(root: root)
            // A clock far behind: by the age limit the new photo is already too old.
            let saved = try await output.save(fakeJPEG(), camera: "cam", settings: PhotoSettings(keepCount: 0, keepSeconds: 10),
                                              captureTime: 1, sequence: 1, width: 64, height: 48)
            #expect(await output.list() == [saved])
            #expect(exists(root + "/cam/" + saved.name))
        }
    }

    @Test func retentionPlansOldestFirst() {
        let records = (0..<6).map { PhotoRecord(name: "p\($0).jpg", camera: "c", bytes: 100, captureTime: Double($0) * 10,
                                                width: nil, height: nil, sequence: nil) }
        func victims(_ settings: PhotoSettings, now: Double = 50, protecting: String? = nil) -> [String] {
            PhotoOutput.retentionVictims(records, settings: settings, now: now, protecting: protecting).map(\.name)
        }
        #expect(victims(PhotoSettings()).isEmpty)
        #expect(victims(PhotoSettings(keepCount: 4)) == ["p0.jpg", "p1.jpg"])
        #expect(victims(PhotoSettings(keepBytes: 250)) == ["p0.jpg", "p1.jpg", "p2.jpg", "p3.jpg"])
        #expect(victims(PhotoSettings(keepBytes: 0)) == ["p0.jpg", "p1.jpg", "p2.jpg", "p3.jpg", "p4.jpg"])
        #expect(victims(PhotoSettings(keepSeconds: 25)) == ["p0.jpg", "p1.jpg", "p2.jpg"])
        #expect(victims(PhotoSettings(keepCount: 4, keepSeconds: 35)) == ["p0.jpg", "p1.jpg"])
        #expect(victims(PhotoSettings(keepCount: 2), protecting: "p0.jpg") == ["p1.jpg", "p2.jpg", "p3.jpg", "p4.jpg"])
    }

    // MARK: Leftovers and failures

    @Test func staleTemporaryFilesAreRemoved() async throws {
        try await withRoot { root in
            let output = PhotoOutput(root: root)
            let a = try await output.save(fakeJPEG(), camera: "a", settings: settings, captureTime: 1, sequence: 1, width: 64, height: 48)
            _ = try await output.save(fakeJPEG(), camera: "b", settings: settings, captureTime: 2, sequence: 2, width: 64, height: 48)
            try Data([1]).write(to: URL(fileURLWithPath: root + "/a/\(AtomicFile.temporaryPrefix)\(a.name).Xy12Zq"))
            try Data([1]).write(to: URL(fileURLWithPath: root + "/b/\(AtomicFile.temporaryPrefix)other.jpg.Qq99Rr"))
            try Data([1]).write(to: URL(fileURLWithPath: root + "/a/.keep"))

            let fresh = PhotoOutput(root: root)
            #expect(await fresh.removeStaleTemporaryFiles() == 2)
            #expect(temporaryFiles(in: root + "/a").isEmpty && temporaryFiles(in: root + "/b").isEmpty)
            #expect(exists(root + "/a/.keep") && exists(root + "/a/" + a.name))
            #expect(await fresh.list().count == 2)
            #expect(await fresh.statistics.staleTemporaryFilesRemoved == 2)
            #expect(await fresh.removeStaleTemporaryFiles() == 0)
        }
    }

    @Test func aRootThatIsAFileFailsClearlyAndLeavesNothing() async throws {
        try await withRoot { folder in
            let root = folder + "/photos"
            try Data([7]).write(to: URL(fileURLWithPath: root))
            let output = PhotoOutput(root: root)
            await #expect {
                _ = try await output.save(fakeJPEG(), camera: "cam", settings: settings, captureTime: 1, sequence: 1, width: 64, height: 48)
            } throws: { error in
                guard let error = error as? PhotoError, case .ioFailure(let message) = error else { return false }
                return message.contains(root) && message.contains("not a folder")
            }
            try #expect(FileManager.default.contentsOfDirectory(atPath: folder) == ["photos"])
            #expect(FileManager.default.contents(atPath: root) == Data([7]))
            #expect(await output.list().isEmpty)
            #expect(await output.statistics.saveFailures == 1)
        }
    }

    @Test func aMissingRootIsCreated() async throws {
        try await withRoot { folder in
            let output = PhotoOutput(root: folder + "/var/lib/photos/")
            let saved = try await output.save(fakeJPEG(), camera: "cam", settings: settings, captureTime: 1, sequence: 1, width: 64, height: 48)
            #expect(exists(folder + "/var/lib/photos/cam/" + saved.name))
        }
    }

    @Test(.enabled(if: canMountTmpfs, "needs root with CAP_SYS_ADMIN to mount a small tmpfs"))
    func aFullDiskFailsAndLeavesNothingHalfWritten() async throws {
        try await withRoot { root in
            guard mount("tmpfs", root, "tmpfs", 0, "size=64k") == 0 else {
                Issue.record("mounting a tmpfs on \(root) failed: errno \(errno)")
                return
            }
            defer { umount(root) }
            let events = EventLog()
            let output = PhotoOutput(root: root, events: events)
            for sequence: UInt32 in 1...2 {
                await #expect {
                    _ = try await output.save(fakeJPEG(bytes: 512 * 1024), camera: "cam", settings: settings, captureTime: 1,
                                              sequence: sequence, width: 64, height: 48)
                } throws: { error in
                    guard let error = error as? PhotoError, case .diskFull(let message) = error else { return false }
                    return message.contains(root + "/cam/")
                }
            }
            try #expect(FileManager.default.contentsOfDirectory(atPath: root + "/cam").isEmpty)
            #expect(await output.list().isEmpty)
            // With room again, saving works.
            let small = try await output.save(fakeJPEG(), camera: "cam", settings: settings, captureTime: 2, sequence: 2,
                                              width: 64, height: 48)
            #expect(await output.list() == [small])
            let statistics = await output.statistics
            #expect(statistics.saveFailures == 2 && statistics.photosSaved == 1)
            // One disk_full for the two failures (not one a frame), then disk_recovered before
            // the photo that was saved again.
            let subscription = events.subscribe(after: 0)
            var payloads: [EventPayload] = []
            while payloads.count < 3, let item = await subscription.next() {
                if case .event(let event) = item { payloads.append(event.payload) }
            }
            subscription.cancel()
            #expect(payloads.map(\.type) == [.diskFull, .diskRecovered, .photoSaved])
            if case .diskFull(let full) = payloads.first {
                #expect(full.path == root && full.message.contains("the disk is full"))
            }
            #expect(events.lastID == 3)
        }
    }

    @Test func theJPEGSizeIsReadPastALargeEXIFBlock() async throws {
        try await withRoot { root in
            var jpeg = fakeJPEG(width: 1920, height: 1080)
            // An APP1 segment of 60,000 bytes before the frame header, beyond the first read.
            let exif = [0xFF, 0xE1, UInt8(60_000 >> 8), UInt8(60_000 & 0xFF)] + [UInt8](repeating: 0, count: 59_998)
            jpeg.insert(contentsOf: exif, at: 2)
            let path = root + "/big.jpg"
            try jpeg.withUnsafeBytes { try Data($0).write(to: URL(fileURLWithPath: path)) }
            let size = try #require(PhotoRecord.jpegDimensions(atPath: path))
            #expect(size.width == 1920 && size.height == 1080)
            try Data([0xFF, 0xD8, 0xFF]).write(to: URL(fileURLWithPath: path))
            #expect(PhotoRecord.jpegDimensions(atPath: path) == nil)
        }
    }
}
