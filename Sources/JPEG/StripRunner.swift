/// Threads that encode the strips of one frame at once (`JPEGStrips`), lent to a
/// `FrameEncoder`: the JPEG layer starts no threads of its own.
public protocol StripRunner: Sendable {
    /// How many strips can be encoded at once, the calling thread's included.
    var threads: Int { get }

    /// Calls `body` once for each index in `0..<count`, on the calling thread and the
    /// runner's at once, and returns when every call has returned.
    func run(_ count: Int, _ body: @escaping @Sendable (Int) -> Void)
}
