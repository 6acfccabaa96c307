import CLibCamera
import V4L2

extension LibCameraDevice {
    /// Its controls (`Camera::controls()`) as camd's API lists them: libcamera's names
    /// ("Brightness" is `brightness`), a float as `.float` with its real range, a bool
    /// as a boolean, whole numbers as integers; arrays, rectangles and sizes by name only.
    /// libcamera reports no value outside a frame's metadata: the value is the one camd
    /// set last, else the control's default.
    public func controls() throws(DeviceError) -> [DeviceControl] {
        try list(clibcamera_control_info(), first: 64, during: "listing its controls") { api.controls!(handle, $0, $1) }
            .map(describe).sorted { $0.name < $1.name }
    }

    private func describe(_ control: clibcamera_control_info) -> DeviceControl {
        let label = withUnsafeBytes(of: control.name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        let set = values[control.id]
        guard control.scalar != 0 else {
            return DeviceControl(id: control.id, label: label, name: DeviceControl.key(for: label), kind: .other, minimum: 0,
                                 maximum: 0, step: 0, defaultValue: 0, value: nil, menu: [], isReadOnly: false, isInactive: false)
        }
        switch Int(control.type) {
        case Int(CLIBCAMERA_CONTROL_FLOAT):
            return .real(id: control.id, label: label,
                         .init(minimum: control.min, maximum: control.max, defaultValue: control.def, value: set ?? control.def))
        default:
            let kind: DeviceControl.Kind = Int(control.type) == Int(CLIBCAMERA_CONTROL_BOOL) ? .boolean : .integer
            func whole(_ x: Double) -> Int64 { x.isFinite ? Int64(x.rounded()) : 0 }
            return DeviceControl(id: control.id, label: label, name: DeviceControl.key(for: label), kind: kind,
                                 minimum: whole(control.min), maximum: whole(control.max), step: 1, defaultValue: whole(control.def),
                                 value: whole(set ?? control.def), menu: [], isReadOnly: false, isInactive: false)
        }
    }

    /// Checks every assignment against its control before any is kept (so a typo sets
    /// nothing), records the values, and returns the controls with their new values; the
    /// caller sends them with the next request (`LibCameraStream.setControls`).
    public func plan(_ assignments: [(name: String, value: String)]) throws(DeviceError) -> [DeviceControl] {
        let all = try controls()
        var planned: [DeviceControl] = []
        for (name, text) in assignments {
            let key = DeviceControl.key(for: name)
            guard var control = all.first(where: { $0.name == key }) else {
                throw DeviceError(.invalidArgument, path: self.name,
                                  "\(self.name) has no control named \"\(name)\"; it has \(all.map(\.name).joined(separator: ", "))")
            }
            switch control.kind {
            case .float:
                switch control.parseReal(text) {
                case .success(let number): control.real?.value = number; control.value = Int64(number.rounded())
                case .failure(let error): throw DeviceError(.invalidArgument, path: self.name, error.description)
                }
            case .integer, .boolean:
                switch control.parse(text) {
                case .success(let number): control.value = number
                case .failure(let error): throw DeviceError(.invalidArgument, path: self.name, error.description)
                }
            default:
                throw DeviceError(.invalidArgument, path: self.name, "\(control.name) is a compound control, which camd cannot set")
            }
            planned.append(control)
        }
        for control in planned { values[control.id] = control.number }
        return planned
    }
}

extension DeviceControl {
    /// The value libcamera is sent: a float's real value, else the whole number.
    var number: Double { real?.value ?? Double(value ?? defaultValue) }
}
