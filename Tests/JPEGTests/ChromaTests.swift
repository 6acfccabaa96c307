@testable import JPEG
import Testing
import VideoCore
import CamdTestSupport

/// `image.chroma`: a JPEG halved to 4:2:0 carries the mean of the rows (or 2x2 pixels) each
/// chroma sample covers, whichever way it was halved, and the camera's planes stay as they came.
@Suite struct ChromaTests {
    /// Limited-range YUYV whose chroma changes every row: Cb 100 then 200, Cr 60 then 180, on
    /// grey luma. Halved, each 4:2:0 sample is their mean (150, 120 expanded to full range);
    /// a sample taken from one row alone would be 100 or 200.
    static func stripedYUYV(_ size: FrameSize) -> [UInt8] {
        var bytes = [UInt8]()
        for row in 0..<size.height {
            let (cb, cr): (UInt8, UInt8) = row % 2 == 0 ? (100, 60) : (200, 180)
            for _ in 0..<(size.width / 2) { bytes += [128, cb, 128, cr] }
        }
        return bytes
    }

    /// The chroma planes of a JPEG decoded as it is stored, and its subsampling; with
    /// `rows`, only those chroma rows.
    static func decodedChroma(_ jpeg: [UInt8], rows: ((Int) -> Range<Int>)? = nil) throws
        -> (ChromaSubsampling, cb: Set<UInt8>, cr: Set<UInt8>) {
        var image = YUVImage()
        _ = try JPEGDecoder().decode(jpeg, into: &image)
        let chroma = image.subsampling.chromaSize(image.size)
        var cb = Set<UInt8>(), cr = Set<UInt8>()
        for y in rows?(chroma.height) ?? 0..<chroma.height {
            for x in 0..<chroma.width {
                cb.insert(image.sample(plane: 1, x: x, y: y))
                cr.insert(image.sample(plane: 2, x: x, y: y))
            }
        }
        return (image.subsampling, cb, cr)
    }

    static func expanded(_ chroma: Double) -> Double { (chroma - 128) * 255 / 224 + 128 }

    static func near(_ samples: Set<UInt8>, _ value: Double) -> Bool {
        samples.allSatisfy { abs(Double($0) - value) <= 2 }
    }

    @Test(arguments: [FrameSize(width: 640, height: 480), FrameSize(width: 328, height: 241)])
    func aYUYVFrameHalvedCarriesTheMeanOfItsRowsAndKeptCarriesEachRow(_ size: FrameSize) throws {
        let layout = FrameLayout(format: .yuyv, size: size, bytesPerLine: size.width * 2, range: .limited)
        let frame = Self.stripedYUYV(size)
        let halved = try frame.withUnsafeBytes { try FrameEncoder(quality: 100, chroma: .halved).encode($0, layout: layout) }
        let kept = try frame.withUnsafeBytes { try FrameEncoder(quality: 100, chroma: .camera).encode($0, layout: layout) }

        let pairs = size.height / 2
        let (halvedSampling, cb, cr) = try Self.decodedChroma(halved, rows: { _ in 0..<pairs })
        #expect(halvedSampling == .s420)
        #expect(Self.near(cb, Self.expanded(150)), "Cb \(cb.sorted())")
        #expect(Self.near(cr, Self.expanded(120)), "Cr \(cr.sorted())")
        if size.height % 2 == 1 {
            // An odd height's last row has no partner: it stands for itself (an even row: Cb 100, Cr 60).
            let (_, lastCb, lastCr) = try Self.decodedChroma(halved, rows: { pairs..<$0 })
            #expect(Self.near(lastCb, Self.expanded(100)) && Self.near(lastCr, Self.expanded(60)), "\(lastCb), \(lastCr)")
        }
        #expect(halved.count < kept.count)

        let (keptSampling, keptCb, _) = try Self.decodedChroma(kept)
        #expect(keptSampling == .s422)
        #expect(keptCb.contains { abs(Double($0) - Self.expanded(100)) <= 2 } && keptCb.contains { abs(Double($0) - Self.expanded(200)) <= 2 })
    }

    /// Planes the encoder halves itself (a full-range 4:2:2 frame read in place, a rendered
    /// image): the same mean, and the frame's own bytes are not touched.
    @Test func planesReadInPlaceAreHalvedIntoTheEncodersOwnBufferAndLeftAsTheyCame() throws {
        let size = FrameSize(width: 320, height: 240)
        let layout = FrameLayout(format: .yuv422p, size: size, bytesPerLine: size.width, range: .full)
        var frame = [UInt8](repeating: 128, count: size.area)
        for plane in [(100, 200), (60, 180)] {
            for row in 0..<size.height { frame += [UInt8](repeating: UInt8(row % 2 == 0 ? plane.0 : plane.1), count: size.width / 2) }
        }
        let before = frame
        let jpeg = try frame.withUnsafeBytes { try FrameEncoder(quality: 100, chroma: .halved).encode($0, layout: layout) }
        #expect(frame == before)
        let (sampling, cb, cr) = try Self.decodedChroma(jpeg)
        #expect(sampling == .s420)
        #expect(Self.near(cb, 150) && Self.near(cr, 120), "Cb \(cb.sorted()), Cr \(cr.sorted())")
    }

    /// Both ways of halving, in the conversion (packed YUYV) and in the encoder (everything
    /// else), give the same bytes: the same JPEG from the same picture.
    @Test func halvingInTheConversionAndInTheEncoderAgree() throws {
        let size = FrameSize(width: 336, height: 250)
        var state: UInt64 = 7
        let yuyv = (0..<(size.area * 2)).map { _ -> UInt8 in
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return UInt8(truncatingIfNeeded: state >> 56)
        }
        let layout = FrameLayout(format: .yuyv, size: size, bytesPerLine: size.width * 2, range: .limited)
        let converted = try yuyv.withUnsafeBytes { try FrameEncoder(quality: 90, chroma: .halved).encode($0, layout: layout) }
        var planes = YUVImage()
        #expect(yuyv.withUnsafeBytes { PlaneConversion.convert($0, layout: layout, into: &planes) })
        #expect(planes.subsampling == .s422)
        let encoderHalved = try JPEGEncoder().compress(planes, quality: 90, chroma: .halved)
        #expect(converted == encoderHalved)
    }

    /// TurboJPEG reads a 4:2:0 luma plane with an even number of rows (`tjPlaneHeight`): of
    /// an odd height, one row past the plane, the padding of the last MCU row. The encoder
    /// pads with the last row itself, so what lies after the plane (camd's chroma planes, or
    /// the first rows of a frame whose strips are being converted at that moment) leaves the
    /// JPEG as it was: the same planes followed by a row of zeros and by a row of 255s, whole
    /// and as the last strip. Before, the strips of a YUYV 1280x723 frame halved to 4:2:0 once
    /// decoded to other pixels than the frame encoded whole, in a run of the whole suite.
    @Test func anOddHeightIsPaddedWithItsLastRowNotWithWhatFollowsThePlane() throws {
        let size = FrameSize(width: 64, height: 35)
        let chroma = ChromaSubsampling.s420.chromaSize(size)
        var random = SplitMix64(seed: 3)
        let luma = random.bytes(size.area), cb = random.bytes(chroma.area), cr = random.bytes(chroma.area)
        let planes = PlaneConversion.Planes(offsets: [0, size.area + size.width, size.area + size.width + chroma.area],
                                            strides: [size.width, chroma.width, chroma.width], subsampling: .s420)
        func jpeg(_ rows: Range<Int>?, after filler: UInt8) throws -> [UInt8] {
            let bytes = luma + [UInt8](repeating: filler, count: size.width) + cb + cr
            return try bytes.withUnsafeBytes { try JPEGEncoder().compress(planes: $0, planes, size: size, rows: rows, quality: 90) }
        }
        #expect(try jpeg(nil, after: 0) == jpeg(nil, after: 255), "the whole image")
        #expect(try jpeg(16..<35, after: 0) == jpeg(16..<35, after: 255), "its last strip")
        #expect(try jpeg(0..<16, after: 0) == jpeg(0..<16, after: 255), "a strip of even rows reads none past its own")
    }

    /// Of an odd width in 4:2:0 or 4:2:2, TurboJPEG reads each luma row one sample wider
    /// (`tjPlaneWidth`): the padding is the row's last sample, not the byte after the row
    /// (here a spare byte of each row, 0 or 255), whole, in a strip, and as the last strip.
    @Test(arguments: [ChromaSubsampling.s420, .s422])
    func anOddWidthIsPaddedWithItsLastSampleNotWithWhatFollowsTheRow(_ subsampling: ChromaSubsampling) throws {
        let size = FrameSize(width: 63, height: 35), stride = 64
        let chroma = subsampling.chromaSize(size)
        var random = SplitMix64(seed: 5)
        let luma = random.bytes(size.area), cb = random.bytes(chroma.area), cr = random.bytes(chroma.area)
        let planes = PlaneConversion.Planes(offsets: [0, stride * size.height, stride * size.height + chroma.area],
                                            strides: [stride, chroma.width, chroma.width], subsampling: subsampling)
        func jpeg(_ rows: Range<Int>?, spare: UInt8) throws -> [UInt8] {
            let rowsWithSpare = (0..<size.height).flatMap { row in luma[(row * size.width)..<((row + 1) * size.width)] + [spare] }
            let bytes = rowsWithSpare + cb + cr
            return try bytes.withUnsafeBytes { try JPEGEncoder().compress(planes: $0, planes, size: size, rows: rows, quality: 90) }
        }
        #expect(try jpeg(nil, spare: 0) == jpeg(nil, spare: 255), "the whole image")
        #expect(try jpeg(0..<16, spare: 0) == jpeg(0..<16, spare: 255), "a strip")
        #expect(try jpeg(16..<35, spare: 0) == jpeg(16..<35, spare: 255), "the last strip, of an odd height too")
        let decoded = try JPEGDecoder().decodeRGB(try jpeg(nil, spare: 0))
        #expect(decoded.size == size)
    }

    /// The mean's rounding alternates row by row, so a plane of .5 means keeps its mean; a
    /// last odd row and column stand for themselves; the vector part and the rest agree.
    @Test func halvingRoundsUpAndDownInTurn() {
        let width = 37, rows = 5  // 32 by vector, 5 after; a row left over
        let source = (0..<rows).flatMap { row in [UInt8](repeating: row % 2 == 0 ? 10 : 11, count: width) }
        var target = [UInt8](repeating: 0, count: width * 3)
        source.withUnsafeBufferPointer { s in
            target.withUnsafeMutableBufferPointer { t in
                PlaneConversion.halveChroma(s.baseAddress!, stride: width, width: width, rows: rows, horizontally: false,
                                            into: t.baseAddress!)
            }
        }
        #expect(target[0..<width].allSatisfy { $0 == 11 })  // 10.5 up
        #expect(target[width..<(2 * width)].allSatisfy { $0 == 10 })  // 10.5 down
        #expect(target[(2 * width)...].allSatisfy { $0 == 10 })  // alone

        // 4:4:4, 3x3: each sample the mean of its 2x2 block; the last column and row alone.
        let square: [UInt8] = [0, 4, 8,
                               4, 8, 12,
                               20, 20, 40]
        var out = [UInt8](repeating: 0, count: 4)
        square.withUnsafeBufferPointer { s in
            out.withUnsafeMutableBufferPointer { t in
                PlaneConversion.halveChroma(s.baseAddress!, stride: 3, width: 3, rows: 3, horizontally: true, into: t.baseAddress!)
            }
        }
        #expect(out == [4, 10, 20, 40])  // (0+4+4+8+2)/4, (8+8+12+12+2)/4; (20+20+20+20+1)/4, 40
    }

    /// RGB goes to TurboJPEG whole, which subsamples it: 4:2:0 halved, 4:4:4 kept.
    @Test func rgbIsHalvedByTurboJPEGOrKeptWhole() throws {
        let size = FrameSize(width: 64, height: 48)
        let layout = FrameLayout(format: .rgb24, size: size, bytesPerLine: size.width * 3, range: .full)
        let frame = [UInt8](repeating: 90, count: size.area * 3)
        let decoder = try JPEGDecoder()
        for (chroma, expected) in [(JPEGChroma.halved, ChromaSubsampling.s420), (.camera, .s444)] {
            let jpeg = try frame.withUnsafeBytes { try FrameEncoder(chroma: chroma).encode($0, layout: layout) }
            #expect(try decoder.header(jpeg).subsampling == expected)
        }
    }
}
