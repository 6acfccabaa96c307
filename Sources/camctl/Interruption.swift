import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Ctrl-C (SIGINT) as a flag that a command's polling loop reads, so the command can undo
/// what it started in camd (cancel a job) before it exits, instead of dying mid-request.
final class Interruption {
    private final class Flag: Sendable {
        let raised = Atomic<Bool>(false)
    }

    private let flag = Flag()
    private let source: any DispatchSourceSignal

    /// Takes SIGINT from now until `end()`.
    init() {
        signal(SIGINT, SIG_IGN)  // the dispatch source sees the signal only when its default action is off
        source = DispatchSource.makeSignalSource(signal: SIGINT, queue: DispatchQueue(label: "camctl.sigint"))
        source.setEventHandler { [flag] in flag.raised.store(true, ordering: .relaxed) }
        source.resume()
    }

    var isRaised: Bool { flag.raised.load(ordering: .relaxed) }

    /// Gives SIGINT its default action back: a later Ctrl-C ends camctl at once.
    func end() {
        source.cancel()
        signal(SIGINT, SIG_DFL)
    }

    /// The exit status of a command ended by Ctrl-C, as a shell reports it (128 + SIGINT).
    static let exitStatus: Int32 = 128 + SIGINT
}
