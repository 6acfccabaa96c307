import ArgumentParser
import CaptureSession
import V4L2
#if canImport(Glibc)
import Glibc
#endif

/// camctl's documented exit codes.
enum ExitStatus {
    static let noSuchDevice = ExitCode(3)
    static let permissionDenied = ExitCode(4)
    static let busy = ExitCode(5)
    static let unsupported = ExitCode(6)
    static let deviceIO = ExitCode(7)
    static let outputFailed = ExitCode(8)
    static let usage = ExitCode(64)

    static func code(for error: DeviceError) -> ExitCode {
        switch error.kind {
        case .noSuchDevice: return noSuchDevice
        case .permissionDenied, .devicePolicy: return permissionDenied
        case .busy, .restartNeeded: return busy
        case .notACamera, .unsupported: return unsupported
        case .disconnected, .streamFailed, .timeout: return deviceIO
        case .invalidArgument: return usage
        }
    }
}

/// Prints "camctl: message" to stderr and exits with `code`.
func fail(_ message: String, _ code: ExitCode) -> ExitCode {
    printError("camctl: \(message)")
    return code
}

func printError(_ message: String) {
    var line = message + "\n"
    line.withUTF8 { _ = Glibc.write(2, $0.baseAddress, $0.count) }
}
