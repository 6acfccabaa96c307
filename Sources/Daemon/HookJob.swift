import CaptureSession
import Foundation

/// One run of a camera's hook for one event: which key, the command line, its environment.
struct HookJob: Sendable, Equatable {
    /// The key that named it ("on_photo") and the camera: how the log names the run.
    var key: String
    var camera: String
    var argv: [String]
    var environment: [String: String]
    var timeout: Double

    var name: String { "\(key) of \(camera)" }

    /// The hook `event` runs for its camera's `settings`, or nil when it runs none.
    /// - Parameter photoRoot: where the media library is, for CAMD_PHOTO_PATH and CAMD_RECORDING_PATH.
    static func job(for event: DaemonEvent, settings: CameraSettings, photoRoot: String,
                    inherited: [String: String] = ProcessInfo.processInfo.environment) -> HookJob? {
        let hooks = settings.hooks
        var fields: [String: String] = [:]
        let key: String, command: String?
        switch event.payload {
        case .photoSaved(let photo):
            (key, command) = ("on_photo", hooks.onPhoto)
            fields = ["CAMD_PHOTO_NAME": photo.name, "CAMD_PHOTO_PATH": path(photoRoot, photo.camera, photo.name),
                      "CAMD_PHOTO_BYTES": "\(photo.bytes)", "CAMD_PHOTO_WIDTH": "\(photo.width)", "CAMD_PHOTO_HEIGHT": "\(photo.height)"]
        case .recordingFinished(let recording):
            (key, command) = ("on_recording", hooks.onRecording)
            fields = ["CAMD_RECORDING_NAME": recording.name, "CAMD_RECORDING_PATH": path(photoRoot, recording.camera, recording.name),
                      "CAMD_RECORDING_BYTES": "\(recording.bytes)", "CAMD_RECORDING_DURATION": "\(recording.durationSeconds)"]
        case .cameraState(let change):
            let lost: Set<SessionState> = [.waitingForDevice, .failed]
            if lost.contains(change.state), !lost.contains(change.previous) {
                (key, command) = ("on_camera_lost", hooks.onCameraLost)
            } else if change.state == .running, lost.contains(change.previous) {
                (key, command) = ("on_camera_back", hooks.onCameraBack)
            } else {
                return nil
            }
            fields = ["CAMD_STATE": change.state.rawValue, "CAMD_PREVIOUS_STATE": change.previous.rawValue]
            if let reason = change.reason { fields["CAMD_REASON"] = reason }
        default:
            return nil
        }
        guard let command, case let argv = HookSettings.split(command), !argv.isEmpty else { return nil }
        var environment = inherited.filter { !$0.key.hasPrefix("CAMD_") }
        environment.merge(fields) { $1 }
        environment["CAMD_EVENT"] = event.type.rawValue
        environment["CAMD_EVENT_ID"] = "\(event.id)"
        environment["CAMD_EVENT_TIME"] = "\(event.time)"
        environment["CAMD_CAMERA"] = settings.id
        return HookJob(key: key, camera: settings.id, argv: argv, environment: environment, timeout: hooks.timeoutSeconds)
    }

    private static func path(_ root: String, _ camera: String, _ name: String) -> String {
        (root.hasSuffix("/") ? root : root + "/") + camera + "/" + name
    }
}
