import VideoCore

/// Crop, turn, flip and scale, on the Y'CbCr planes themselves, before the
/// encoder: each plane is handled at its own resolution, so colour never goes
/// through RGB and subsampled chroma stays registered with luma.
extension YUVImage {
    /// The part of the image inside `rect`, which must lie within it (error names `crop`).
    public func cropped(to rect: Geometry.Rect) throws(ImageError) -> YUVImage {
        try ImagePipeline().render(self, geometry: Geometry(crop: rect), overlay: nil)
    }

    /// The image turned clockwise. A quarter turn of 4:2:2 gives 4:2:0 (see `Geometry.layout`).
    public func rotated(_ rotation: Geometry.Rotation) -> YUVImage {
        transformed(EXIF.Orientation(rotation: rotation, flip: []))
    }

    /// The image mirrored.
    public func flipped(_ flip: Geometry.Flip) -> YUVImage {
        transformed(EXIF.Orientation(rotation: .upright, flip: flip))
    }

    /// The image scaled to exactly `size` (aspect not kept: see `Geometry` for fitting).
    public func scaled(to size: FrameSize, interpolation: Geometry.Interpolation = .area) -> YUVImage {
        var output = YUVImage()
        Resampler().resize(self, to: size, interpolation: interpolation, into: &output)
        return output
    }

    /// The image turned as a viewer turns it for an EXIF orientation tag.
    /// 4:2:2 chroma cannot be transposed into a subsampling JPEG viewers share
    /// (it would be 4:4:0), so a quarter turn first resamples it to 4:2:0.
    public func transformed(_ orientation: EXIF.Orientation) -> YUVImage {
        var source = self
        if orientation.swapsAxes && subsampling == .s422 {
            source = YUVImage(size: size, subsampling: .s420)
            Resampler().draw(self, region: (0, 0, Double(size.width), Double(size.height)), interpolation: .area,
                             into: &source, at: Geometry.Rect(x: 0, y: 0, width: size.width, height: size.height))
        }
        let turned = orientation.swapsAxes ? FrameSize(width: size.height, height: size.width) : size
        var output = YUVImage(size: turned, subsampling: source.subsampling)
        source.transform(orientation, into: &output, at: (0, 0))
        return output
    }

    /// Writes this image, turned, into `output` with its top-left at `origin`.
    /// Both share a subsampling that the turn keeps (anything but 4:2:2 for a
    /// quarter turn); `origin` is even where chroma is subsampled.
    func transform(_ orientation: EXIF.Orientation, into output: inout YUVImage, at origin: (x: Int, y: Int)) {
        let planes = subsampling == .gray || output.subsampling == .gray ? 1 : 3
        let (fx, fy) = output.subsampling.factors
        for plane in 0..<planes {
            let w = stride(plane), h = planeHeight(plane)
            let (ow, oh) = orientation.swapsAxes ? (h, w) : (w, h)
            let ox = plane == 0 ? origin.x : origin.x / fx, oy = plane == 0 ? origin.y : origin.y / fy
            let map = orientation.sourceMap(width: w, height: h)
            let srcStride = stride(plane), srcBase = offset(plane)
            let dstStride = output.stride(plane), dstBase = output.offset(plane) + oy * dstStride + ox
            // Moving one pixel right or down in the output moves this far in the source.
            let stepX = map.a + map.d * srcStride, stepY = map.b + map.e * srcStride
            let first = srcBase + map.f * srcStride + map.c
            storage.withUnsafeBufferPointer { src in
                output.storage.withUnsafeMutableBufferPointer { dst in
                    if orientation == .up {
                        for y in 0..<oh {
                            UnsafeMutableRawPointer(dst.baseAddress! + dstBase + y * dstStride)
                                .copyMemory(from: src.baseAddress! + srcBase + y * srcStride, byteCount: ow)
                        }
                        return
                    }
                    // Tiles keep a transpose's column reads within a few cache lines.
                    let tile = 64
                    for tileY in Swift.stride(from: 0, to: oh, by: tile) {
                        for tileX in Swift.stride(from: 0, to: ow, by: tile) {
                            let endX = Swift.min(tileX + tile, ow)
                            for y in tileY..<Swift.min(tileY + tile, oh) {
                                var s = first + y * stepY + tileX * stepX
                                var d = dstBase + y * dstStride + tileX
                                for _ in tileX..<endX {
                                    dst[d] = src[s]
                                    s += stepX
                                    d += 1
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    /// Paints `rect` (all of the image when nil) in a colour, chroma included.
    public mutating func fill(_ color: Geometry.Color, in rect: Geometry.Rect? = nil) {
        let r = rect ?? Geometry.Rect(x: 0, y: 0, width: size.width, height: size.height)
        let (y, cb, cr) = color.ycbcr
        fill(luma: y, cb: cb, cr: cr, in: r)
    }

    /// Paints `rect` with raw samples; chroma covers every chroma sample the rectangle touches.
    mutating func fill(luma: UInt8, cb: UInt8, cr: UInt8, in rect: Geometry.Rect) {
        fillPlane(0, x: rect.x, y: rect.y, width: rect.width, height: rect.height, value: luma)
        guard subsampling != .gray else { return }
        let (fx, fy) = subsampling.factors
        let x0 = rect.x / fx, y0 = rect.y / fy
        let x1 = (rect.x + rect.width + fx - 1) / fx, y1 = (rect.y + rect.height + fy - 1) / fy
        fillPlane(1, x: x0, y: y0, width: x1 - x0, height: y1 - y0, value: cb)
        fillPlane(2, x: x0, y: y0, width: x1 - x0, height: y1 - y0, value: cr)
    }

    /// Sets a block of one plane, in that plane's samples, clipped to the plane.
    mutating func fillPlane(_ plane: Int, x: Int, y: Int, width: Int, height: Int, value: UInt8) {
        let x0 = Swift.max(0, x), y0 = Swift.max(0, y)
        let x1 = Swift.min(stride(plane), x + width), y1 = Swift.min(planeHeight(plane), y + height)
        guard x1 > x0, y1 > y0 else { return }
        let base = offset(plane), rowStride = stride(plane)
        storage.withUnsafeMutableBufferPointer { samples in
            for row in y0..<y1 {
                (samples.baseAddress! + base + row * rowStride + x0).update(repeating: value, count: x1 - x0)
            }
        }
    }
}
