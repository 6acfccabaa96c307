import CV4L2
import SystemPackage
import VideoCore

/// A camera control (brightness, exposure, vivid's fault injectors) as the driver describes it.
public struct DeviceControl: Hashable, Sendable {
    public enum Kind: String, Sendable {
        case integer, boolean, menu, button, integer64, string, bitmask, integerMenu = "intmenu", other
        /// A real number (libcamera's Brightness, -1...1): its numbers are in `real`.
        case float
    }

    /// A `.float` control's range, default and value, which the whole-number fields cannot hold.
    public struct RealNumbers: Hashable, Sendable {
        public var minimum: Double
        public var maximum: Double
        public var defaultValue: Double
        public var value: Double?
        public init(minimum: Double, maximum: Double, defaultValue: Double, value: Double?) {
            self.minimum = minimum
            self.maximum = maximum
            self.defaultValue = defaultValue
            self.value = value
        }
    }

    public var id: UInt32
    /// The driver's name ("Brightness").
    public var label: String
    /// The name used on command lines and in the API ("brightness"), as v4l2-ctl spells it.
    public var name: String
    public var kind: Kind
    public var minimum: Int64
    public var maximum: Int64
    public var step: UInt64
    public var defaultValue: Int64
    /// The value now; nil for buttons, write-only and compound controls.
    public var value: Int64?
    /// Menu items by index, for menu and integer-menu controls.
    public var menu: [(index: Int64, name: String)]
    public var isReadOnly: Bool
    public var isInactive: Bool
    /// For `.float` controls; nil for the others.
    public var real: RealNumbers?

    public init(id: UInt32, label: String, name: String, kind: Kind, minimum: Int64, maximum: Int64, step: UInt64,
                defaultValue: Int64, value: Int64?, menu: [(index: Int64, name: String)], isReadOnly: Bool, isInactive: Bool,
                real: RealNumbers? = nil) {
        self.id = id
        self.label = label
        self.name = name
        self.kind = kind
        self.minimum = minimum
        self.maximum = maximum
        self.step = step
        self.defaultValue = defaultValue
        self.value = value
        self.menu = menu
        self.isReadOnly = isReadOnly
        self.isInactive = isInactive
        self.real = real
    }

    /// A real-number control (a libcamera camera's), its whole-number fields rounded from `real`.
    public static func real(id: UInt32, label: String, _ numbers: RealNumbers) -> DeviceControl {
        func rounded(_ x: Double) -> Int64 { x.isFinite ? Int64(x.rounded()) : 0 }
        return DeviceControl(id: id, label: label, name: key(for: label), kind: .float, minimum: rounded(numbers.minimum),
                             maximum: rounded(numbers.maximum), step: 0, defaultValue: rounded(numbers.defaultValue),
                             value: numbers.value.map(rounded), menu: [], isReadOnly: false, isInactive: false, real: numbers)
    }

    public static func == (a: DeviceControl, b: DeviceControl) -> Bool {
        a.id == b.id && a.value == b.value && a.label == b.label && a.real == b.real
    }
    public func hash(into hasher: inout Hasher) { hasher.combine(id) }

    /// v4l2-ctl's spelling of a control name: lowercase letters and digits, runs of
    /// anything else become one underscore ("Inject VIDIOC_STREAMON Error" → "inject_vidioc_streamon_error").
    public static func key(for label: String) -> String {
        var key = "", pendingUnderscore = false
        for scalar in label.unicodeScalars {
            if scalar.properties.isAlphabetic && scalar.isASCII || ("0"..."9").contains(scalar) {
                if pendingUnderscore { key += "_" }
                pendingUnderscore = false
                key.unicodeScalars.append(contentsOf: String(scalar).lowercased().unicodeScalars)
            } else if !key.isEmpty {
                pendingUnderscore = true
            }
        }
        return key
    }

    /// The text a user gave, without the spaces around it.
    static func trimmed(_ text: String) -> String {
        String(text.drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed())
    }

    /// Turns the text a user gave ("140", "true", a menu item's name) into the value to set,
    /// or says what is allowed.
    public func parse(_ text: String) -> Result<Int64, ControlValueError> {
        let trimmed = Self.trimmed(text)
        switch kind {
        case .boolean:
            switch trimmed.lowercased() {
            case "1", "true", "on", "yes": return .success(1)
            case "0", "false", "off", "no": return .success(0)
            default: return .failure(ControlValueError("\(name) is a boolean: use 1/0, true/false or on/off; got \"\(text)\""))
            }
        case .button:
            return .success(1)
        case .menu, .integerMenu:
            if let item = menu.first(where: { $0.name.lowercased() == trimmed.lowercased() }) { return .success(item.index) }
            if let number = Int64(trimmed), menu.contains(where: { $0.index == number }) { return .success(number) }
            let items = menu.map { "\($0.index) (\($0.name))" }.joined(separator: ", ")
            return .failure(ControlValueError("\(name) is a menu: choose one of \(items); got \"\(text)\""))
        case .string, .other:
            return .failure(ControlValueError("\(name) is a \(kind.rawValue) control, which camd cannot set"))
        case .float:
            return .failure(ControlValueError("\(name) takes a number: see parseReal"))
        case .integer, .integer64, .bitmask:
            guard let number = Int64(trimmed) else {
                return .failure(ControlValueError("\(name) takes a whole number from \(minimum) to \(maximum); got \"\(text)\""))
            }
            guard number >= minimum, number <= maximum else {
                return .failure(ControlValueError("\(name) must be between \(minimum) and \(maximum)\(step > 1 ? " in steps of \(step)" : ""); got \(number)"))
            }
            if step > 1, (number - minimum) % Int64(step) != 0 {
                return .failure(ControlValueError("\(name) moves in steps of \(step) from \(minimum); got \(number)"))
            }
            return .success(number)
        }
    }
}

extension DeviceControl {
    /// A `.float` control's value from the text a user gave ("0.25"), checked against its range.
    public func parseReal(_ text: String) -> Result<Double, ControlValueError> {
        let trimmed = Self.trimmed(text)
        let range = real ?? RealNumbers(minimum: Double(minimum), maximum: Double(maximum), defaultValue: Double(defaultValue), value: nil)
        guard let number = Double(trimmed), number.isFinite else {
            return .failure(ControlValueError("\(name) takes a number from \(range.minimum) to \(range.maximum); got \"\(text)\""))
        }
        guard number >= range.minimum, number <= range.maximum else {
            return .failure(ControlValueError("\(name) must be between \(range.minimum) and \(range.maximum); got \(trimmed)"))
        }
        return .success(number)
    }
}

/// A camera whose controls can be listed and set: a V4L2 device, or a libcamera camera.
public protocol ControllableCamera: AnyObject {
    /// Every control, with its value now.
    func controls() throws(DeviceError) -> [DeviceControl]
    /// Sets controls by name, every value checked before any is set; the controls as they are after.
    func setControls(_ assignments: [(name: String, value: String)]) throws(DeviceError) -> [DeviceControl]
}

extension VideoDevice: ControllableCamera {}

/// A control value that does not fit the control, with what would.
public struct ControlValueError: Error, CustomStringConvertible, Sendable {
    public var description: String
    public init(_ description: String) { self.description = description }
}


extension VideoDevice {
    /// `V4L2_CTRL_FLAG_NEXT_CTRL | V4L2_CTRL_FLAG_NEXT_COMPOUND`: ask for the control after this id.
    static let nextControl = UInt32(truncatingIfNeeded: V4L2_CTRL_FLAG_NEXT_CTRL) | UInt32(truncatingIfNeeded: V4L2_CTRL_FLAG_NEXT_COMPOUND)

    /// Every control the device has, with current values and menus.
    public func controls() throws(DeviceError) -> [DeviceControl] {
        var result: [DeviceControl] = []
        var query = v4l2_query_ext_ctrl()
        query.id = Self.nextControl
        while case .success = Syscall.ioctl(fd, CV4L2_VIDIOC_QUERY_EXT_CTRL, &query) {
            defer { query.id |= Self.nextControl }
            let flags = query.flags
            if query.type == V4L2_CTRL_TYPE_CTRL_CLASS.rawValue || flags & UInt32(V4L2_CTRL_FLAG_DISABLED) != 0 { continue }
            result.append(describe(query))
        }
        return result
    }

    func describe(_ query: v4l2_query_ext_ctrl) -> DeviceControl {
        let kind: DeviceControl.Kind
        switch query.type {
        case V4L2_CTRL_TYPE_INTEGER.rawValue: kind = .integer
        case V4L2_CTRL_TYPE_BOOLEAN.rawValue: kind = .boolean
        case V4L2_CTRL_TYPE_MENU.rawValue: kind = .menu
        case V4L2_CTRL_TYPE_BUTTON.rawValue: kind = .button
        case V4L2_CTRL_TYPE_INTEGER64.rawValue: kind = .integer64
        case V4L2_CTRL_TYPE_STRING.rawValue: kind = .string
        case V4L2_CTRL_TYPE_BITMASK.rawValue: kind = .bitmask
        case V4L2_CTRL_TYPE_INTEGER_MENU.rawValue: kind = .integerMenu
        default: kind = .other
        }
        let label = string(fromCArray: query.name)
        var control = DeviceControl(
            id: query.id, label: label, name: DeviceControl.key(for: label), kind: kind,
            minimum: query.minimum, maximum: query.maximum, step: query.step, defaultValue: query.default_value,
            value: nil, menu: [],
            isReadOnly: query.flags & UInt32(V4L2_CTRL_FLAG_READ_ONLY) != 0,
            isInactive: query.flags & UInt32(V4L2_CTRL_FLAG_INACTIVE) != 0)
        if kind == .menu || kind == .integerMenu, query.maximum - query.minimum < 1024 {
            for index in query.minimum...query.maximum {
                var item = v4l2_querymenu()
                item.id = query.id
                item.index = UInt32(index)
                guard case .success = Syscall.ioctl(fd, CV4L2_VIDIOC_QUERYMENU, &item) else { continue }
                let name = kind == .menu ? string(fromCArray: item.name) : String(item.value)
                control.menu.append((index, name))
            }
        }
        let valueless: Set<DeviceControl.Kind> = [.button, .string, .other]
        if !valueless.contains(kind), query.flags & UInt32(V4L2_CTRL_FLAG_WRITE_ONLY) == 0 {
            control.value = try? value(of: control)
        }
        return control
    }

    /// The current value of one control.
    public func value(of control: DeviceControl) throws(DeviceError) -> Int64 {
        var item = v4l2_ext_control()
        item.id = control.id
        try withExtControls(&item, CV4L2_VIDIOC_G_EXT_CTRLS, "reading control \(control.name)")
        return control.kind == .integer64 ? item.value64 : Int64(item.value)
    }

    /// Sets controls by name ("brightness" → 140), checking each value against the
    /// control's range first so nothing is half-applied because of a typo.
    @discardableResult
    public func setControls(_ assignments: [(name: String, value: String)]) throws(DeviceError) -> [DeviceControl] {
        let all = try controls()
        var planned: [(DeviceControl, Int64)] = []
        for (name, text) in assignments {
            let key = DeviceControl.key(for: name)
            guard let control = all.first(where: { $0.name == key }) else {
                throw DeviceError(.invalidArgument, path: path,
                                  "\(path) has no control named \"\(name)\"; it has \(all.map(\.name).joined(separator: ", "))")
            }
            if control.isReadOnly {
                throw DeviceError(.invalidArgument, path: path, "\(control.name) is read-only")
            }
            switch control.parse(text) {
            case .success(let value): planned.append((control, value))
            case .failure(let error): throw DeviceError(.invalidArgument, path: path, error.description)
            }
        }
        var changed: [DeviceControl] = []
        for (control, value) in planned {
            var item = v4l2_ext_control()
            item.id = control.id
            if control.kind == .integer64 { item.value64 = value } else { item.value = Int32(truncatingIfNeeded: value) }
            try withExtControls(&item, CV4L2_VIDIOC_S_EXT_CTRLS, "setting \(control.name)=\(value)")
            var updated = control
            updated.value = control.kind == .button ? nil : (try? self.value(of: control)) ?? value
            changed.append(updated)
        }
        return changed
    }

    private func withExtControls(_ item: inout v4l2_ext_control, _ request: UInt, _ what: String) throws(DeviceError) {
        var status: Result<Void, SystemPackage.Errno> = .success(())
        withUnsafeMutablePointer(to: &item) { pointer in
            var controls = v4l2_ext_controls()
            controls.which = UInt32(V4L2_CTRL_WHICH_CUR_VAL)
            controls.count = 1
            controls.controls = pointer
            status = Syscall.ioctl(fd, request, &controls)
        }
        if case .failure(let error) = status {
            throw DeviceError.from(error, path: path, during: what)
        }
    }
}
