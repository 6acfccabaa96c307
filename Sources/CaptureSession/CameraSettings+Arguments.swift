// Settings written as KEY=VALUE text (camctl's arguments): read by the same declarations as
// camd.toml and the API, then sent as the typed values the API takes.
extension CameraSettings {
    /// The fields of a configure request from `quality=70`, `photos.keep_bytes=500M`,
    /// `controls.brightness=140` and `location.latitude=51.5`; each `reset` key is sent as
    /// null (its default). Every value is checked here, with the words camd.toml and the API
    /// use; what depends on the camera's other settings is left to camd.
    public static func fields(fromArguments arguments: [String], resetting resets: [String] = []) throws(SettingError)
        -> [(key: String, value: SettingValue)] {
        var given: [(key: String, value: SettingValue)] = []
        for argument in arguments {
            guard let equals = argument.firstIndex(of: "="), equals != argument.startIndex else {
                throw SettingError(.invalidValue, key: argument, "is not KEY=VALUE, such as quality=70 or photos.keep_bytes=500M")
            }
            let key = String(argument[..<equals])
            let value = SettingValue.text(String(argument[argument.index(after: equals)...]))
            let parts = key.split(separator: ".", maxSplits: 1).map(String.init)
            if parts.count == 2, !groups.contains(parts[0]), self.key(parts[0]) != nil {
                // An entry of a table-valued setting (controls.brightness): gathered into its table.
                SettingValue.insert(value, at: key, into: &given)
            } else {
                given.append((key, value))
            }
        }
        // Read into a scratch copy, then written back as the API's typed values.
        var scratch = CameraSettings(id: "camctl")
        var fields: [(key: String, value: SettingValue)] = []
        for (key, value) in given {
            try scratch.apply([nested(key, value)], checkingWhole: false)
            SettingValue.insert(Self.key(key)?.value(in: scratch) ?? value, at: key, into: &fields)
        }
        for key in resets {
            try scratch.apply([nested(key, .null)], checkingWhole: false)
            SettingValue.insert(.null, at: key, into: &fields)
        }
        return fields
    }

    /// `photos.keep_count` = 5 as the API nests it: `photos: {keep_count: 5}`.
    private static func nested(_ key: String, _ value: SettingValue) -> (key: String, value: SettingValue) {
        let parts = key.split(separator: ".", maxSplits: 1).map(String.init)
        return parts.count == 2 && groups.contains(parts[0]) ? (parts[0], .table([(parts[1], value)])) : (key, value)
    }
}
