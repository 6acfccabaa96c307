import Foundation
import JPEG
import VideoCore

/// Real JPEGs for tests that render saved photos (timelapse movies): one colour each,
/// so a frame read back shows which photo it came from and where bars were added.
public enum TestPhotos {
    /// A 4:2:0 JPEG of `size` filled with `color`.
    public static func jpeg(_ size: FrameSize, _ color: Geometry.Color, quality: Int = 90) throws -> [UInt8] {
        var image = YUVImage(size: size, subsampling: .s420)
        image.fill(color)
        return try JPEGEncoder().compress(image, quality: quality)
    }

    /// A folder of its own under the temporary directory.
    public static func temporaryFolder(_ label: String) throws -> String {
        let folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("camd-\(label)-\(getpid())-\(UInt32.random(in: 0...UInt32.max))").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        return folder
    }

    /// `ffprobe -count_frames`'s count of video frames in `path`, or nil when ffprobe is not
    /// installed; waited for on a thread of its own (`onOwnThread`), off the cooperative pool.
    public static func countFramesWithFFprobe(_ path: String) async -> Int? {
        (try? await onOwnThread { countFramesBlocking(path) }) ?? nil
    }

    private static func countFramesBlocking(_ path: String) -> Int? {
        guard let ffprobe = ["/usr/bin/ffprobe", "/usr/local/bin/ffprobe"].first(where: FileManager.default.isExecutableFile) else {
            return nil
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: ffprobe)
        process.arguments = ["-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries",
                             "stream=nb_read_frames", "-of", "csv=p=0", path]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return nil }
        let output = pipe.fileHandleForReading.readAll()
        process.waitUntilExit()
        return Int(String(decoding: output, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    }
}
