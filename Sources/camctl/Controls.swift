import APIModel
import ArgumentParser
import CaptureSession
import Client
import Foundation
import LibCamera
import V4L2

struct Controls: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List a camera's controls, or set them: camctl controls brightness=140 contrast=100.")

    @Option(name: .shortAndLong, help: "Camera (default: the first camera).")
    var device: String?

    @Argument(help: "NAME=VALUE pairs to set; none lists the controls.")
    var assignments: [String] = []

    @OptionGroup var daemon: DaemonSelection

    func validate() throws { _ = try parseAssignments(assignments) }

    func run() throws {
        if let client = daemon.daemon(), let id = try DaemonCall.cameraID(client, matching: device) {
            return try throughDaemon(client, id)
        }
        do {
            if LibCameraLibrary.isSelector(device), let device {
                guard assignments.isEmpty else {
                    throw fail("\(device): a libcamera camera keeps a control only while the process streaming it runs: "
                               + "set it through camd (camctl controls with camd running the camera) or with `controls` in camd.toml",
                               ExitStatus.usage)
                }
                for control in try LibCameraDevice(selector: device).controls() { print(describe(control)) }
                return
            }
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

    /// The camera is camd's: its controls are read and set through camd, which keeps them across reconnects.
    func throughDaemon(_ client: DaemonClient, _ id: String) throws {
        let reply: DaemonReply
        if assignments.isEmpty {
            reply = try DaemonCall.perform(client, "GET", "/v1/cameras/\(id)/controls")
        } else {
            // Read as the `controls` setting reads them (names as v4l2-ctl spells them, typed values).
            let controls: SettingValue
            do throws(SettingError) {
                // validate() has checked that each is NAME=VALUE.
                let fields = try CameraSettings.fields(fromArguments: assignments.map { "controls.\($0)" })
                controls = fields.first { $0.key == "controls" }?.value ?? .table([])
            } catch {
                throw fail(error.description, ExitStatus.usage)
            }
            reply = try DaemonCall.perform(client, "PUT", "/v1/cameras/\(id)/controls", body: Array(try APIJSON.encoder().encode(controls)))
        }
        for control in try DaemonCall.decode([ControlState].self, reply) {
            var text = "\(control.name) (\(control.type))"
            if let value = control.value { text += " = \(value)" }
            if ["integer", "integer64", "float"].contains(control.type) {
                text += "  [\(control.minimum) to \(control.maximum), default \(control.default)]"
            }
            print(text)
        }
    }

    func describe(_ control: DeviceControl) -> String {
        var text = "\(control.name) (\(control.kind.rawValue))"
        if let value = control.real?.value { text += " = \(value)" } else if let value = control.value { text += " = \(value)" }
        switch control.kind {
        case .float:
            if let real = control.real { text += "  [\(real.minimum) to \(real.maximum), default \(real.defaultValue)]" }
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
