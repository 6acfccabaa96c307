import Foundation

/// What FFmpeg's command-line tools, the players people use, make of a video: ffprobe's
/// frames and ffmpeg's decode errors, each waited for on a thread of its own (`onOwnThread`),
/// so no caller holds one of the cooperative pool's threads, which every test running beside
/// it needs, for a player's run. `run` blocks: call it off the cooperative pool.
public enum Players {
    public struct ProbedFrame: Sendable, Equatable {
        public var time: Double
        public var isKeyframe: Bool
    }

    /// Each video frame of `path` as ffprobe decodes it, in presentation order.
    public static func frames(_ path: String) async throws -> [ProbedFrame] {
        let out = try await onOwnThread {
            try run("/usr/bin/ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries", "frame=pts_time,key_frame",
                                         "-of", "csv=p=0", path]).output
        }
        return out.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: ",")
            guard fields.count >= 2, let key = Int(fields[0]), let time = Double(fields[1]) else { return nil }
            return ProbedFrame(time: time, isKeyframe: key == 1)
        }
    }

    /// What `ffmpeg -v error -i PATH -f null -` prints: empty for a video that decodes clean.
    public static func decodeErrors(_ path: String) async throws -> String {
        let result = try await onOwnThread { try run("/usr/bin/ffmpeg", ["-nostdin", "-v", "error", "-i", path, "-f", "null", "-"]) }
        return result.status == 0 ? result.errors : "exit \(result.status): \(result.errors)"
    }

    public static func run(_ tool: String, _ arguments: [String]) throws -> (output: String, errors: String, status: Int32) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        // Errors go to a file: a tool that filled a second pipe while this read the first would wait forever.
        let errorPath = NSTemporaryDirectory() + "camd-players-\(UUID().uuidString).txt"
        FileManager.default.createFile(atPath: errorPath, contents: nil)
        defer { try? FileManager.default.removeItem(atPath: errorPath) }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle(forWritingAtPath: errorPath)
        try process.run()
        let out = output.fileHandleForReading.readAll()
        process.waitUntilExit()
        let errors = (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? ""
        return (String(decoding: out, as: UTF8.self), errors.trimmingCharacters(in: .whitespacesAndNewlines), process.terminationStatus)
    }
}
