import CaptureSession
import JPEG
import TOMLKit
import V4L2
import VideoCore

// Reading camd.toml: the [[camera]] tables. Their values are read by the settings' declarations.
extension DaemonConfiguration.Reader {
    // MARK: [[camera]]

    func readCamera(_ camera: Section) throws(ConfigurationError) -> CameraSettings {
        try checkKeys(camera, known: DaemonConfiguration.cameraKeys, hints: hints(
            (DaemonConfiguration.photoKeys, "it belongs under [camera.photos]"),
            (DaemonConfiguration.imageKeys, "it belongs under [camera.image]"),
            (DaemonConfiguration.locationKeys, "it belongs in location = { latitude = ..., longitude = ... }"),
            (DaemonConfiguration.daemonKeys, "it belongs under [daemon]")))

        let idExpected = "1 to 64 letters, digits, '-' or '_' (it appears in URLs and file names), such as \"bench\""
        guard let idValue = camera["id"] else {
            throw fail(.missingKey, camera.path, "has no id; add a line such as id = \"bench\" (1 to 64 letters, digits, '-' or '_')")
        }
        guard let id = idValue.string else { throw fail(.wrongType, camera.path("id"), "must be \(idExpected); got \(describe(idValue))") }
        guard CameraSettings.isValidID(id) else { throw invalid(camera.path("id"), idExpected, idValue) }

        // Every other key is read by its declaration (CameraSettings+Keys), as the API and camctl read it.
        var fields: [(key: String, value: SettingValue)] = []
        for key in orderedKeys(camera) where key != "id" {
            guard let value = camera[key] else { continue }
            if CameraSettings.groups.contains(key) {
                guard let table = value.table else {
                    throw fail(.wrongType, camera.path(key), "must be a table: write [camera.\(key)] below the camera's keys; got \(describe(value))")
                }
                let known = CameraSettings.names(in: key)
                let elsewhere = CameraSettings.groups.filter { $0 != key }.map { group in
                    (CameraSettings.names(in: group).filter { !known.contains($0) }, "it belongs under [camera.\(group)]")
                }
                try checkKeys(Section(path: camera.path(key), table: table), known: known, hints: hints(
                    [(DaemonConfiguration.cameraKeys, "it belongs in the [[camera]] table itself, above [camera.\(key)]")] + elsewhere))
            }
            fields.append((key, settingValue(value, at: camera.path(key))))
        }
        var settings = CameraSettings(id: id)
        do throws(SettingError) {
            try settings.apply(fields)
        } catch {
            throw fail(ConfigurationError.Kind(error.kind), camera.path(error.key), error.message)
        }
        return settings
    }
}
