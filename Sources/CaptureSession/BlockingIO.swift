import Foundation

/// Runs blocking work (file system, opening a device) on a thread of its own and
/// awaits it, so neither an actor's turn nor the cooperative pool ever blocks.
public enum BlockingIO {
    private static let queue = DispatchQueue(label: "camd.blocking-io", attributes: .concurrent)

    public static func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async {
                do { continuation.resume(returning: try work()) } catch { continuation.resume(throwing: error) }
            }
        }
    }
}
