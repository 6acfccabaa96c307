// libFuzzer entry for JPEGValidation (built by scripts/fuzz-jpeg together with
// Sources/JPEG/JPEGValidation.swift, which imports nothing).
//
// For any input: validate never crashes, reads out of bounds (AddressSanitizer)
// or hangs; what it accepts starts with SOI and ends with EOI, has Huffman
// tables, and is accepted again unchanged (mending is idempotent).

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJPEGValidation(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let input = UnsafeRawBufferPointer(start: UnsafeRawPointer(data), count: count)
    guard case .success(let output) = JPEGValidation.validate(input) else { return 0 }
    precondition(output.count >= JPEGValidation.minimumSize, "accepted a frame below the minimum size")
    precondition(output[0] == 0xFF && output[1] == 0xD8, "output does not start with SOI")
    precondition(output[output.count - 2] == 0xFF && output[output.count - 1] == 0xD9, "output does not end with EOI")
    let again = output.withUnsafeBytes { JPEGValidation.validate($0) }
    guard case .success(let same) = again else { preconditionFailure("its own output is refused: \(again)") }
    precondition(same == output, "validating the output changed it again")
    return 0
}
