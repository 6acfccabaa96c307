import CTurboJPEG

/// A failure inside libjpeg-turbo, with its own message.
public struct JPEGError: Error, CustomStringConvertible, Sendable {
    public var description: String
    public init(_ description: String) { self.description = description }

    /// The message TurboJPEG left for this handle.
    static func last(_ handle: tjhandle?, _ what: String) -> JPEGError {
        let message = handle.flatMap { tjGetErrorStr2($0) }.map { String(cString: $0) } ?? "unknown error"
        return JPEGError("\(what): \(message)")
    }
}
