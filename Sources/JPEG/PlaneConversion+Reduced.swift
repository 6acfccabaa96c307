import VideoCore

extension PlaneConversion {
    /// The box reductions a packed 4:2:2 frame converts at, largest first.
    static let reductions = [8, 4, 2]

    /// The largest reduction (8, 4, 2, or 1 for none) that still leaves at least
    /// `covering` pixels each way, for formats `convert(_:layout:reducedBy:into:)` reduces.
    public static func reduction(for layout: FrameLayout, covering: FrameSize) -> Int {
        guard packedPositions(layout.format) != nil else { return 1 }
        return reductions.first { factor in
            layout.size.width / factor >= covering.width && layout.size.height / factor >= covering.height
        } ?? 1
    }

    /// Converts a packed 4:2:2 frame (YUYV, UYVY, YVYU, VYUY) at 1/`factor` of its size
    /// each way, every sample the mean of its `factor`×`factor` box, then expanded to full
    /// range: a thumbnail reads the frame once and writes only its own pixels, and the
    /// box mean is what area interpolation would give. `factor` 1 is `convert`; other
    /// formats return false unless `factor` is 1.
    public static func convert(_ source: UnsafeRawBufferPointer, layout: FrameLayout, reducedBy factor: Int,
                               into image: inout YUVImage) -> Bool {
        if factor == 1 { return convert(source, layout: layout, into: &image) }
        guard [2, 4, 8].contains(factor), let positions = packedPositions(layout.format),
              let needed = requiredBytes(layout), source.count >= needed else { return false }
        let full = layout.size
        let size = FrameSize(width: max(1, full.width / factor), height: max(1, full.height / factor))
        image.reshape(size, .s422)
        let stride = stride(layout)
        let lumaTable = layout.range == .limited ? expandLuma : identity
        let chromaTable = layout.range == .limited ? expandChroma : identity
        let shift = factor.trailingZeroBitCount * 2  // the box holds factor² samples
        let half = 1 << (shift - 1)
        let rowBytes = full.width / 2 * 4
        let lastPair = full.width / 2 - 1
        let chromaWidth = image.stride(1)
        let cbOffset = image.offset(1), crOffset = image.offset(2)
        // One row of box sums: each of the frame's bytes summed down `factor` rows.
        var column = [UInt16](repeating: 0, count: rowBytes)

        lumaTable.withUnsafeBufferPointer { lut in
        chromaTable.withUnsafeBufferPointer { clut in
        column.withUnsafeMutableBufferPointer { sumsBuffer in
        image.storage.withUnsafeMutableBufferPointer { outBuffer in
            guard let src = source.baseAddress?.assumingMemoryBound(to: UInt8.self),
                  let sums = sumsBuffer.baseAddress, let out = outBuffer.baseAddress else { return }
            for row in 0..<size.height {
                // Vertical sums first: plain loops over bytes that the compiler vectorizes.
                let top = src + row &* factor &* stride
                for i in 0..<rowBytes { sums[i] = UInt16(top[i]) }
                for down in 1..<factor {
                    let line = top + down &* stride
                    for i in 0..<rowBytes { sums[i] &+= UInt16(line[i]) }
                }
                // Then across: `factor` luma samples (every other byte) or chroma pairs (every fourth).
                let luma = out + row &* size.width
                for x in 0..<size.width {
                    var total = 0
                    let first = sums + (2 &* x &* factor &+ positions.luma)
                    for j in 0..<factor { total &+= Int(first[2 &* j]) }
                    luma[x] = lut[(total &+ half) &>> shift]
                }
                let cbRow = out + (cbOffset &+ row &* chromaWidth), crRow = out + (crOffset &+ row &* chromaWidth)
                for x in 0..<chromaWidth {
                    var cb = 0, cr = 0
                    for j in 0..<factor {
                        let pair = 4 &* min(x &* factor &+ j, lastPair)
                        cb &+= Int(sums[pair &+ positions.cb])
                        cr &+= Int(sums[pair &+ positions.cr])
                    }
                    cbRow[x] = clut[(cb &+ half) &>> shift]
                    crRow[x] = clut[(cr &+ half) &>> shift]
                }
            }
        }}}}
        return true
    }

    /// Where luma (the first of each pair of pixels; the second is 2 bytes on) and the
    /// two chroma samples sit in each 4-byte pair of a packed 4:2:2 format.
    public static func packedPositions(_ format: PixelFormat) -> (luma: Int, cb: Int, cr: Int)? {
        switch format {
        case .yuyv: return (0, 1, 3)
        case .uyvy: return (1, 0, 2)
        case .yvyu: return (0, 3, 1)
        case .vyuy: return (1, 2, 0)
        default: return nil
        }
    }
}
