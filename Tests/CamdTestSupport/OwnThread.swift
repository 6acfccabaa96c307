import Foundation

/// Runs blocking work (a player such as ffmpeg, a socket read of many seconds) on a thread
/// of its own and waits for it without holding any other. Swift's tasks run on Dispatch's
/// shared pool, about as many threads as cores (on Linux `DispatchQueue.global()` is the same
/// pool): a test that blocked them would starve the code under test and stall every test
/// running beside it.
public func onOwnThread<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread { continuation.resume(with: Result { try work() }) }
        thread.name = "camd-test-blocking"
        thread.start()
    }
}
