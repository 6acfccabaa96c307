import CaptureSession

/// `POST /v1/cameras/{id}/configure`: the fields given replace the camera's settings, the
/// rest stay, null sets a field's default; each is read by its declaration
/// (CameraSettings+Keys), as camd.toml and camctl read it, and every field is checked
/// before anything changes.
enum ConfigureRequest {
    static func apply(_ fields: [(key: String, value: SettingValue)], to current: CameraSettings) throws -> CameraSettings {
        if let key = fields.first(where: { CameraSettings.fileOnlyKeys.contains($0.key) })?.key {
            throw APIError(.forbidden, "file_only_setting",
                           "\(key) runs a program as camd's user, so it is set only in camd.toml (then `systemctl reload camd`), not through the API")
        }
        var settings = current
        do throws(SettingError) {
            try settings.apply(fields)
        } catch {
            throw APIError.badRequest(error.description, code: "bad_field")
        }
        return settings
    }
}
