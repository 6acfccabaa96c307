import ArgumentParser
import V4L2

struct Controls: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List a camera's controls, or set them: camctl controls brightness=140 contrast=100.")

    @Option(name: .shortAndLong, help: "Camera (default: the first camera).")
    var device: String?

    @Argument(help: "NAME=VALUE pairs to set; none lists the controls.")
    var assignments: [String] = []

    func validate() throws { _ = try parseAssignments(assignments) }

    func run() throws {
        do {
            let camera = try VideoDevice(path: try DeviceDiscovery.resolve(device))
            if assignments.isEmpty {
                for control in try camera.controls() { print(describe(control)) }
            } else {
                for control in try camera.setControls(try parseAssignments(assignments)) {
                    print("\(control.name) = \(control.value.map(String.init) ?? "(pressed)")")
                }
            }
        } catch let error as DeviceError {
            throw fail(error.message, ExitStatus.code(for: error))
        }
    }

    func describe(_ control: DeviceControl) -> String {
        var text = "\(control.name) (\(control.kind.rawValue))"
        if let value = control.value { text += " = \(value)" }
        switch control.kind {
        case .integer, .integer64: text += "  [\(control.minimum) to \(control.maximum), step \(control.step), default \(control.defaultValue)]"
        case .boolean: text += "  [default \(control.defaultValue)]"
        case .menu, .integerMenu: text += "  [" + control.menu.map { "\($0.index): \($0.name)" }.joined(separator: ", ") + "]"
        default: break
        }
        if control.isReadOnly { text += " read-only" }
        if control.isInactive { text += " inactive" }
        return text
    }
}
