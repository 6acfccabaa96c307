import ArgumentParser
import Foundation
import LibCamera
import V4L2

struct Devices: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List cameras, their formats, and whether this user may open them.")

    @Flag(help: "Print JSON instead of a table.")
    var json = false

    @Flag(help: "Also list V4L2 nodes that are not cameras (output, metadata, ...).")
    var all = false

    func run() throws {
        let devices = DeviceDiscovery.all(details: true).filter { all || $0.isCamera }
        let libcamera = LibCameraDiscovery.all()
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            print(String(decoding: try encoder.encode(devices.map(\.summary) + libcamera.cameras), as: UTF8.self))
            return
        }
        if devices.isEmpty && libcamera.cameras.isEmpty {
            print("No cameras found. Is one plugged in, and its driver loaded (`lsmod | grep uvcvideo`)?")
        }
        defer {
            for camera in libcamera.cameras {
                print("\(camera.path)  \(camera.card)  [\(camera.driver ?? "libcamera"), \(camera.bus ?? "")]  camera: yes  access: \(camera.problem == nil ? "yes" : "NO")")
                if let problem = camera.problem { print("    why not: \(problem)") }
                for format in camera.formats {
                    print("    \(format.fourcc.padding(toLength: 5, withPad: " ", startingAt: 0)) \(format.description): \(format.sizes.joined(separator: " "))")
                }
            }
            if let why = libcamera.unavailable { print("libcamera: \(why)") }
        }
        for device in devices {
            let card = device.info?.card ?? device.name
            let access = device.access?.allowed == true ? "yes" : "NO"
            print("\(device.path)  \(card)  [\(device.info?.driver ?? "?")\(device.info.map { ", \($0.busInfo)" } ?? "")]  camera: \(device.isCamera ? "yes" : "no")  access: \(access)")
            for name in device.byID + device.byPath { print("    \(name)") }
            if let problem = device.access?.problem { print("    why not: \(problem)") }
            if let reason = device.notACameraBecause { print("    not a camera: \(reason)") }
            if let error = device.openError, device.access?.allowed != false { print("    \(error.message)") }
            for format in device.formats {
                print("    \(format.format.description.padding(toLength: 5, withPad: " ", startingAt: 0)) \(format.description): \(describe(format.sizes))")
            }
        }
    }

    func describe(_ sizes: FrameSizes) -> String {
        switch sizes {
        case .discrete(let list): return list.map(\.description).joined(separator: " ")
        case .stepwise(let low, let high, let step): return "\(low) to \(high) in steps of \(step)"
        }
    }
}
