import Foundation
import Testing
@testable import LibCamera

/// A libcamera camera that stops sending frames is taken for removed when the process
/// holds one of its media-graph nodes after the device file went away (libcamera does not
/// always say so, and the stall bound is seconds).
@Suite struct RemovedNodeTests {
    @Test func onlyAMediaGraphNodeWhoseFileIsGoneCounts() {
        #expect(LibCameraStream.isRemovedNode("/dev/video0 (deleted)"))
        #expect(LibCameraStream.isRemovedNode("/dev/media1 (deleted)"))
        #expect(LibCameraStream.isRemovedNode("/dev/v4l-subdev3 (deleted)"))
        #expect(!LibCameraStream.isRemovedNode("/dev/video0"))
        #expect(!LibCameraStream.isRemovedNode("/tmp/photo.jpg (deleted)"), "a deleted file is no device")
        #expect(!LibCameraStream.isRemovedNode("socket:[12345]"))
    }

    /// A folder of links stands in for /proc/self/fd, whose entries read as their targets.
    @Test func theOpenFilesAreReadFromTheFdFolder() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("camd-fds-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try FileManager.default.createSymbolicLink(atPath: folder + "/3", withDestinationPath: "/dev/media0")
        try FileManager.default.createSymbolicLink(atPath: folder + "/4", withDestinationPath: "/tmp/x (deleted)")
        #expect(!LibCameraStream.holdsRemovedNodes(fdFolder: folder))
        try FileManager.default.createSymbolicLink(atPath: folder + "/5", withDestinationPath: "/dev/video2 (deleted)")
        #expect(LibCameraStream.holdsRemovedNodes(fdFolder: folder))
        #expect(!LibCameraStream.holdsRemovedNodes(fdFolder: folder + "/missing"))
        #expect(!LibCameraStream.holdsRemovedNodes(), "this test process holds no removed device")
    }
}
