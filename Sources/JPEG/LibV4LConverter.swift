import CLibV4LConvert
import CV4L2
import VideoCore
#if canImport(Glibc)
import Glibc
#endif

/// libv4lconvert, for the camera formats camd does not convert itself
/// (Bayer, RGB565, 16-bit grey...): it turns them into packed RGB24.
final class LibV4LConverter {
    private let data: OpaquePointer
    private let operations: UnsafeMutablePointer<libv4l_dev_ops>
    private var output: [UInt8] = []

    init?() {
        // libv4lconvert wants a device to query; camd gives it none, only frames.
        // These device operations describe a plain capture device and refuse
        // everything else, so only the pure conversion functions run.
        operations = .allocate(capacity: 1)
        operations.initialize(to: libv4l_dev_ops())
        operations.pointee.ioctl = { _, _, request, argument in
            guard request == CV4L2_VIDIOC_QUERYCAP, let argument else {
                errno = ENOTTY
                return -1
            }
            var capability = v4l2_capability()
            capability.capabilities = UInt32(V4L2_CAP_VIDEO_CAPTURE | V4L2_CAP_STREAMING)
            capability.device_caps = capability.capabilities
            argument.assumingMemoryBound(to: v4l2_capability.self).pointee = capability
            return 0
        }
        guard let data = v4lconvert_create_with_dev_ops(-1, nil, operations) else {
            operations.deallocate()
            return nil
        }
        self.data = data
    }

    deinit {
        v4lconvert_destroy(data)
        operations.deallocate()
    }

    /// Converts one frame to RGB24 and lends the result to `body`; returns nil when
    /// libv4lconvert cannot convert this format.
    func withRGB<T>(_ source: UnsafeRawBufferPointer, layout: FrameLayout,
                    _ body: (UnsafeRawBufferPointer) throws(JPEGError) -> T) throws(JPEGError) -> T? {
        var from = v4l2_format()
        from.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
        from.fmt.pix.width = UInt32(layout.size.width)
        from.fmt.pix.height = UInt32(layout.size.height)
        from.fmt.pix.pixelformat = layout.format.rawValue
        from.fmt.pix.bytesperline = UInt32(layout.bytesPerLine)
        from.fmt.pix.sizeimage = UInt32(source.count)
        from.fmt.pix.field = V4L2_FIELD_NONE.rawValue
        var to = from
        to.fmt.pix.pixelformat = PixelFormat.rgb24.rawValue
        to.fmt.pix.bytesperline = UInt32(layout.size.width * 3)
        to.fmt.pix.sizeimage = UInt32(layout.size.area * 3)
        if output.count < layout.size.area * 3 { output = [UInt8](repeating: 0, count: layout.size.area * 3) }
        let written = output.withUnsafeMutableBufferPointer { out in
            v4lconvert_convert(data, &from, &to,
                               UnsafeMutablePointer(mutating: source.bindMemory(to: UInt8.self).baseAddress),
                               Int32(source.count), out.baseAddress, Int32(out.count))
        }
        guard written >= layout.size.area * 3 else { return nil }
        let count = layout.size.area * 3
        var result: Result<T, JPEGError>?
        output.withUnsafeBytes { pixels in
            do throws(JPEGError) { result = .success(try body(UnsafeRawBufferPointer(rebasing: pixels.prefix(count)))) }
            catch { result = .failure(error) }
        }
        return try result?.get()
    }
}
