import CamdTestSupport
import Foundation
import JPEG
import Testing
import VideoCore

/// `camctl snapshot` opening the camera itself, as a user runs it without camd.
@Suite struct SnapshotCommandTests {
    /// Halved to 4:2:0 as camd's `image.chroma` default, or the camera's own with `--chroma
    /// camera` (4:2:2 of the synthetic source's YUYV); any other word is refused, naming the two.
    @Test func withoutCamdTheChromaIsHalvedUnlessTheCamerasOwnIsAskedFor() async throws {
        let folder = NSTemporaryDirectory() + "camctl-snapshot-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let cases: [(chroma: String?, expected: ChromaSubsampling)] = [(nil, .s420), ("4:2:0", .s420), ("camera", .s422)]
        for (index, (chroma, expected)) in cases.enumerated() {
            let path = folder + "/\(index).jpg"
            let result = try await onOwnThread {
                try RunningDaemon.camctl(["snapshot", "-d", "testsrc", "--size", "320x240", "--skip", "0", "-o", path]
                                         + (chroma.map { ["--chroma", $0] } ?? []))
            }
            #expect(result.status == 0, "\(result.stderr)")
            let jpeg = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
            #expect(try JPEGDecoder().header(jpeg).subsampling == expected, "--chroma \(chroma ?? "not given")")
        }
        let refused = try await onOwnThread {
            try RunningDaemon.camctl(["snapshot", "-d", "testsrc", "--chroma", "4:2:2", "-o", folder + "/refused.jpg"])
        }
        #expect(refused.status == 64)
        #expect(refused.stderr.contains("--chroma") && refused.stderr.contains("camera"), "\(refused.stderr)")
        #expect(!FileManager.default.fileExists(atPath: folder + "/refused.jpg"))
    }
}
