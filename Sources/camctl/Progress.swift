import Foundation

/// A line on stderr that shows how far a long job is (a recording's seconds, a timelapse's
/// frames): redrawn in place on a terminal, a line every tenth of the way otherwise (a log, a pipe).
final class Progress: @unchecked Sendable {  // used by one thread at a time
    let total: Double
    /// What the plain lines start with: "recording", "timelapse".
    private let label: String
    /// How far, as the line says it: "12.5 / 30.0 s", "120 / 300 frames".
    private let amount: (_ done: Double, _ total: Double) -> String
    private let terminal = isatty(STDERR_FILENO) == 1
    private var lastTenth = -1

    init(total: Double, label: String = "recording",
         amount: @escaping (_ done: Double, _ total: Double) -> String = { String(format: "%.1f / %.1f s", $0, $1) }) {
        self.total = max(total, 1e-9)
        self.label = label
        self.amount = amount
    }

    /// A progress line for `total` frames.
    static func frames(_ total: Int, label: String) -> Progress {
        Progress(total: Double(total), label: label) { done, total in "\(Int(done)) / \(Int(total)) frames" }
    }

    func show(_ done: Double) {
        let done = min(max(done, 0), total)
        if terminal {
            let width = 30, filled = Int(Double(width) * done / total)
            let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
            FileHandle.standardError.write(Data("\r[\(bar)] \(amount(done, total))".utf8))
        } else if Int(10 * done / total) > lastTenth {
            lastTenth = Int(10 * done / total)
            printError("\(label): \(amount(done, total))")
        }
    }

    func finish() {
        if terminal { FileHandle.standardError.write(Data("\n".utf8)) }
    }
}
