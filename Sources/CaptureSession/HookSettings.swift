#if canImport(Glibc)
import Glibc
#endif

/// Programs camd runs when something happens to a camera (`on_photo`, `on_camera_lost`,
/// `on_camera_back`, `on_recording` in its `[[camera]]` table). Each is a command line split
/// on whitespace into the program, an absolute path, and its arguments; it runs without a
/// shell, with the event in its environment (`CAMD_EVENT`, `CAMD_CAMERA`, ...).
public struct HookSettings: Sendable, Hashable {
    /// Each a command line as written: `split` gives the program and its arguments.
    /// After every photo saved (timelapse photos included).
    public var onPhoto: String?
    /// When the camera is lost (its state becomes waiting-for-device or failed).
    public var onCameraLost: String?
    /// When a lost camera runs again.
    public var onCameraBack: String?
    /// When a recording's file is finished and named.
    public var onRecording: String?
    /// A run longer than this is stopped: SIGTERM, then SIGKILL.
    public var timeoutSeconds: Double = HookSettings.defaultTimeoutSeconds

    public static let defaultTimeoutSeconds = 30.0

    public init() {}

    /// What `value` says is wrong with a hook's command line, or nil: the program must be an
    /// absolute path to an executable file, as camd runs it without a shell or $PATH.
    public static func commandProblem(_ value: String) -> String? {
        guard let program = split(value).first else { return "is empty; give the program's absolute path, or leave the key out" }
        guard program.hasPrefix("/") else {
            return "names \(program), which is not an absolute path: camd runs hooks without a shell or $PATH; write it in full, such as /usr/bin/\(program)"
        }
        var status = stat()
        guard stat(program, &status) == 0 else {
            return "names \(program), which does not exist: install it, or fix the path"
        }
        guard status.st_mode & S_IFMT == S_IFREG, access(program, X_OK) == 0 else {
            return "names \(program), which is not an executable file: chmod +x it, or name the program that runs it (/bin/sh \(program))"
        }
        return nil
    }

    /// A command line as camd runs it: split on spaces and tabs, no quoting.
    public static func split(_ value: String) -> [String] {
        value.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
    }
}
