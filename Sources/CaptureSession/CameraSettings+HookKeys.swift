// The hooks' settings, declared once (see CameraSettings+Keys.swift).
extension CameraSettings {
    static let hookKeys: [Key] = [
        hook("on_photo", \.hooks.onPhoto, "Run this program after every photo saved (CAMD_PHOTO_PATH, CAMD_PHOTO_NAME, ...)."),
        hook("on_camera_lost", \.hooks.onCameraLost, "Run this program when the camera is lost (waiting for its device, or failed)."),
        hook("on_camera_back", \.hooks.onCameraBack, "Run this program when a lost camera runs again."),
        hook("on_recording", \.hooks.onRecording, "Run this program when a recording's file is finished (CAMD_RECORDING_PATH, ...)."),
        Key("hook_timeout", .duration("a duration from 1 s to 1 h, such as \"30s\"", { $0 >= 1 && $0 <= 3600 }),
            at: \.hooks.timeoutSeconds, default: HookSettings.defaultTimeoutSeconds, "30", restart: .none,
            "Stop a hook that runs longer than this (SIGTERM, then SIGKILL 5 s later)."),
    ]

    /// The hooks' keys: they run programs as camd's user, so only camd.toml sets them, never the API.
    public static let fileOnlyKeys: Set<String> = Set(hookKeys.map(\.key))

    private static func hook(_ key: String, _ path: any WritableKeyPath<CameraSettings, String?> & Sendable, _ summary: String) -> Key {
        Key(key, .string("an executable's absolute path and its arguments, split on spaces, such as \"/usr/local/bin/upload --fast\"",
                         problem: HookSettings.commandProblem),
            at: path, "none", restart: .none, summary)
    }
}
