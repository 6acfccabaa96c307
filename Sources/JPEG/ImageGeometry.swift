import VideoCore

/// What to do to an image's shape before it is encoded, parsed from query
/// parameters (`width`, `height`, `fit`, `max`, `crop`, `rotate`, `flip`,
/// `interpolation`, `pad`) or built from a camera's configured defaults.
///
/// The steps run in this order: `crop` (in the frame as captured), scale into
/// the box, `rotate` (clockwise), `flip`, then `pad`. Box sizes (`width`,
/// `height`, `max`) are in the final orientation, so `rotate=90&width=480&height=640`
/// gives a 480x640 portrait image.
public struct Geometry: Hashable, Sendable {
    /// The box width in pixels (`width`); nil to follow the height and the aspect ratio.
    public var width: Int?
    /// The box height in pixels (`height`); nil to follow the width and the aspect ratio.
    public var height: Int?
    /// How the image goes into a box that has both a width and a height (`fit`).
    public var fit: Fit = .contain
    /// The longest side at most this many pixels (`max`), applied after the box; never enlarges.
    public var longestSide: Int?
    /// The part of the frame to keep, before scaling (`crop=x,y,w,h`), in the frame's own pixels.
    public var crop: Rect?
    /// Clockwise rotation (`rotate`).
    public var rotate: Rotation = .upright
    /// `rotate=exif`: leave the pixels as captured and write `rotate` and `flip`
    /// into the EXIF Orientation tag (see `exifOrientation`) for the viewer to apply.
    public var rotationInEXIF = false
    /// Mirroring after rotation (`flip=h`, `flip=v`, `flip=hv`).
    public var flip: Flip = []
    /// The scaling filter (`interpolation`); nil chooses area when shrinking and bilinear when enlarging.
    public var interpolation: Interpolation?
    /// With `fit=contain` and a full box: the colour of the bars that make the
    /// output exactly the box (`pad`). Nil adds no bars, so the output may be smaller than the box.
    public var pad: Color?

    /// The largest width or height camd makes: beyond it a request is refused rather than allocated.
    public static let maximumDimension = 8192

    public init(width: Int? = nil, height: Int? = nil, fit: Fit = .contain, longestSide: Int? = nil,
                crop: Rect? = nil, rotate: Rotation = .upright, flip: Flip = [],
                interpolation: Interpolation? = nil, pad: Color? = nil) {
        self.width = width
        self.height = height
        self.fit = fit
        self.longestSide = longestSide
        self.crop = crop
        self.rotate = rotate
        self.flip = flip
        self.interpolation = interpolation
        self.pad = pad
    }

    /// How an image goes into a `width`×`height` box.
    public enum Fit: String, Hashable, Sendable, CaseIterable {
        /// The whole image inside the box, aspect kept; bars only when `pad` is set.
        case contain
        /// The whole box filled, aspect kept: the centre is kept and the overflow cropped.
        case cover
        /// Exactly the box, aspect ignored.
        case stretch
    }

    /// A clockwise rotation in degrees.
    public enum Rotation: Int, Hashable, Sendable, CaseIterable {
        case upright = 0, clockwise90 = 90, clockwise180 = 180, clockwise270 = 270
    }

    /// Mirroring: horizontal reverses each row, vertical reverses the row order.
    public struct Flip: OptionSet, Hashable, Sendable {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }
        public static let horizontal = Flip(rawValue: 1)
        public static let vertical = Flip(rawValue: 2)
    }

    /// Scaling filters.
    public enum Interpolation: String, Hashable, Sendable, CaseIterable {
        /// The nearest sample: fastest, aliases when shrinking.
        case nearest
        /// Linear between the two nearest samples in each direction: smooth when enlarging.
        case bilinear
        /// Each output sample averages the source area it covers (a box filter): no aliasing when shrinking.
        case area
    }

    /// A rectangle in whole pixels.
    public struct Rect: Hashable, Sendable, CustomStringConvertible {
        public var x: Int, y: Int, width: Int, height: Int
        public init(x: Int, y: Int, width: Int, height: Int) {
            self.x = x
            self.y = y
            self.width = width
            self.height = height
        }
        public var description: String { "\(x),\(y),\(width),\(height)" }
        /// Whether the point is inside.
        public func contains(x px: Int, y py: Int) -> Bool {
            px >= x && px < x + width && py >= y && py < y + height
        }
    }

    /// An sRGB colour for padding, from a name (`black`) or hex (`#102030`, `102030`).
    public struct Color: Hashable, Sendable {
        public var red: UInt8, green: UInt8, blue: UInt8
        public init(red: UInt8, green: UInt8, blue: UInt8) {
            self.red = red
            self.green = green
            self.blue = blue
        }

        public static let black = Color(red: 0, green: 0, blue: 0)
        public static let white = Color(red: 255, green: 255, blue: 255)
        static let names: [String: Color] = [
            "black": .black, "white": .white,
            "gray": Color(red: 128, green: 128, blue: 128), "grey": Color(red: 128, green: 128, blue: 128),
            "red": Color(red: 255, green: 0, blue: 0), "green": Color(red: 0, green: 255, blue: 0),
            "blue": Color(red: 0, green: 0, blue: 255),
        ]

        /// Parses a name or six hex digits (with or without `#`); nil otherwise.
        public init?(parsing text: String) {
            if let named = Self.names[text.lowercased()] { self = named; return }
            let hex = text.hasPrefix("#") ? String(text.dropFirst()) : text
            guard hex.utf8.count == 6, let value = UInt32(hex, radix: 16) else { return nil }
            self.init(red: UInt8(value >> 16 & 0xFF), green: UInt8(value >> 8 & 0xFF), blue: UInt8(value & 0xFF))
        }

        /// The colour as JPEG's full-range Y'CbCr (BT.601, as JFIF defines it).
        public var ycbcr: (y: UInt8, cb: UInt8, cr: UInt8) {
            Self.ycbcr(red: Int(red), green: Int(green), blue: Int(blue))
        }

        /// JFIF's RGB to Y'CbCr in 16-bit fixed point, shared with the RGB decode path.
        @inline(__always)
        static func ycbcr(red r: Int, green g: Int, blue b: Int) -> (y: UInt8, cb: UInt8, cr: UInt8) {
            let y = (19595 * r + 38470 * g + 7471 * b + 32768) >> 16
            let cb = (-11059 * r - 21709 * g + 32768 * b + (128 << 16) + 32768) >> 16
            let cr = (32768 * r - 27439 * g - 5329 * b + (128 << 16) + 32768) >> 16
            return (UInt8(clamping: y), UInt8(clamping: cb), UInt8(clamping: cr))
        }
    }

    // MARK: Parsing

    /// The query parameters this type reads; others are left for the caller.
    public static let parameterNames: Set<String> = ["width", "height", "fit", "max", "crop", "rotate", "flip", "interpolation", "pad"]

    /// Reads the geometry parameters from a query, on top of `defaults` (a
    /// camera's configured geometry). Values are checked here; `crop` is
    /// checked against the frame when it is applied, since only then is the frame known.
    public static func parse(query: [String: String], defaults: Geometry = Geometry()) throws(ImageError) -> Geometry {
        var geometry = defaults
        if let text = query["width"] { geometry.width = try dimension("width", text) }
        if let text = query["height"] { geometry.height = try dimension("height", text) }
        if let text = query["max"] { geometry.longestSide = try dimension("max", text) }
        if let text = query["fit"] {
            guard let fit = Fit(rawValue: text) else {
                throw .invalidParameter(name: "fit", message: "fit must be contain, cover or stretch; got \(text)")
            }
            geometry.fit = fit
        }
        if let text = query["interpolation"] {
            guard let interpolation = Interpolation(rawValue: text) else {
                throw .invalidParameter(name: "interpolation", message: "interpolation must be nearest, bilinear or area; got \(text)")
            }
            geometry.interpolation = interpolation
        }
        if let text = query["rotate"] {
            if text == "exif" {
                geometry.rotationInEXIF = true
            } else if ["0", "90", "180", "270"].contains(text), let degrees = Int(text), let rotation = Rotation(rawValue: degrees) {
                geometry.rotate = rotation
                geometry.rotationInEXIF = false
            } else {
                throw .invalidParameter(name: "rotate", message: "rotate must be 0, 90, 180 or 270 (or exif, to leave the configured rotation to the viewer); got \(text)")
            }
        }
        if let text = query["flip"] { geometry.flip = try parseFlip(text) }
        if let text = query["crop"] { geometry.crop = try parseCrop(text) }
        if let text = query["pad"] {
            guard let color = Color(parsing: text) else {
                throw .invalidParameter(name: "pad", message: "pad must be a colour name (black, white, gray, red, green, blue) or six hex digits like 1a2b3c; got \(text)")
            }
            geometry.pad = color
        }
        try geometry.validate()
        return geometry
    }

    private static func dimension(_ name: String, _ text: String) throws(ImageError) -> Int {
        guard let value = Int(text), (1...maximumDimension).contains(value) else {
            throw .invalidParameter(name: name, message: "\(name) must be a whole number from 1 to \(maximumDimension); got \(text)")
        }
        return value
    }

    /// One word, spelled exactly (docs/openapi.yaml lists the same words, so the API's
    /// schema and this parser agree on every value).
    private static func parseFlip(_ text: String) throws(ImageError) -> Flip {
        switch text {
        case "h", "horizontal": return .horizontal
        case "v", "vertical": return .vertical
        case "hv", "vh", "both": return [.horizontal, .vertical]
        case "none": return []
        default: throw .invalidParameter(name: "flip", message: "flip must be h, v or hv (or none); got \(text)")
        }
    }

    private static func parseCrop(_ text: String) throws(ImageError) -> Rect {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false).map { Int($0.trimmingSpaces) }
        guard parts.count == 4, let x = parts[0], let y = parts[1], let w = parts[2], let h = parts[3],
              x >= 0, y >= 0, w > 0, h > 0 else {
            throw .invalidParameter(name: "crop", message: "crop must be x,y,w,h in pixels, x and y at least 0, w and h at least 1; got \(text)")
        }
        return Rect(x: x, y: y, width: w, height: h)
    }

    /// Checks values that do not depend on the frame; also catches bad configured defaults.
    func validate() throws(ImageError) {
        func check(_ name: String, _ value: Int?) throws(ImageError) {
            if let value, !(1...Self.maximumDimension).contains(value) {
                throw .invalidParameter(name: name, message: "\(name) must be a whole number from 1 to \(Self.maximumDimension); got \(value)")
            }
        }
        try check("width", width)
        try check("height", height)
        try check("max", longestSide)
        if let crop, crop.x < 0 || crop.y < 0 || crop.width < 1 || crop.height < 1 {
            throw .invalidParameter(name: "crop", message: "crop must be x,y,w,h in pixels, x and y at least 0, w and h at least 1; got \(crop)")
        }
    }

    // MARK: Derived

    /// The rotation and flip as one of the eight orientations.
    public var orientation: EXIF.Orientation { EXIF.Orientation(rotation: rotate, flip: flip) }

    /// The EXIF Orientation tag to write: set only for `rotate=exif`.
    public var exifOrientation: EXIF.Orientation? { rotationInEXIF ? orientation : nil }

    /// Whether rendering changes the pixels at all (`rotate=exif` alone does not).
    public var changesPixels: Bool {
        width != nil || height != nil || longestSide != nil || crop != nil
            || (!rotationInEXIF && orientation != .up)
    }

    /// The size `render` makes from a frame of `source` pixels.
    public func outputSize(for source: FrameSize) throws(ImageError) -> FrameSize {
        try layout(for: source, subsampling: .s444).outputSize
    }

    /// Every size and offset one render needs, worked out before any pixel is touched.
    struct Layout {
        /// The part of the source that is scaled, in source pixels (fractional after a `cover` crop).
        var region: (x: Double, y: Double, width: Double, height: Double)
        /// The size after scaling, before the pixels are turned.
        var scaledSize: FrameSize
        /// Applied to the pixels after scaling (`.up` when there is nothing to turn or it is left to EXIF).
        var orientation: EXIF.Orientation
        /// The output image, and where in it the scaled and turned picture goes (off the origin only with `pad`).
        var outputSize: FrameSize
        var content: Rect
        var pad: Color?
        var subsampling: ChromaSubsampling
        var interpolation: Interpolation

        /// The same layout over a copy of the source decoded at another size (a JPEG's DCT scale).
        func rescaled(from full: FrameSize, to decoded: FrameSize) -> Layout {
            var copy = self
            let sx = Double(decoded.width) / Double(full.width), sy = Double(decoded.height) / Double(full.height)
            copy.region = (region.x * sx, region.y * sy, region.width * sx, region.height * sy)
            return copy
        }

        /// The smallest decode of a `full`-size source that still holds the region at the scaled size.
        func decodeSize(full: FrameSize) -> FrameSize {
            FrameSize(width: Int((Double(full.width) * Double(scaledSize.width) / region.width - 1e-6).rounded(.up)),
                      height: Int((Double(full.height) * Double(scaledSize.height) / region.height - 1e-6).rounded(.up)))
        }
    }

    /// Works out the render for a source of `source` pixels and `subsampling`.
    /// `outputSubsampling` forces the output's (the contact sheet wants 4:2:0 throughout).
    func layout(for source: FrameSize, subsampling: ChromaSubsampling,
                outputSubsampling: ChromaSubsampling? = nil) throws(ImageError) -> Layout {
        try validate()
        guard source.width > 0, source.height > 0 else {
            throw .unreadableImage("the image is empty (\(source))")
        }
        var region = (x: 0.0, y: 0.0, width: Double(source.width), height: Double(source.height))
        if let crop {
            guard crop.x + crop.width <= source.width, crop.y + crop.height <= source.height else {
                throw .invalidParameter(name: "crop", message: "crop \(crop) reaches outside the \(source) frame: x + w must be at most \(source.width) and y + h at most \(source.height)")
            }
            region = (Double(crop.x), Double(crop.y), Double(crop.width), Double(crop.height))
        }
        let turn = orientation
        let pixelOrientation: EXIF.Orientation = rotationInEXIF ? .up : turn
        // Boxes are in the final (displayed) orientation: swap the region's sides to compare.
        let swapped = turn.swapsAxes
        let shown = swapped ? (w: region.height, h: region.width) : (w: region.width, h: region.height)

        var content: (w: Int, h: Int)
        var visible = shown  // how much of the region, in displayed orientation, ends up in the picture
        switch (width, height) {
        case (nil, nil):
            content = (Int(shown.w.rounded()), Int(shown.h.rounded()))
        case (let w?, nil):
            content = (w, Swift.max(1, Int((shown.h * Double(w) / shown.w).rounded())))
        case (nil, let h?):
            content = (Swift.max(1, Int((shown.w * Double(h) / shown.h).rounded())), h)
        case (let w?, let h?):
            switch fit {
            case .stretch:
                content = (w, h)
            case .contain:
                let s = Swift.min(Double(w) / shown.w, Double(h) / shown.h)
                content = (Swift.min(w, Swift.max(1, Int((shown.w * s).rounded()))),
                           Swift.min(h, Swift.max(1, Int((shown.h * s).rounded()))))
            case .cover:
                let s = Swift.max(Double(w) / shown.w, Double(h) / shown.h)
                content = (w, h)
                visible = (Swift.min(shown.w, Double(w) / s), Swift.min(shown.h, Double(h) / s))
            }
        }
        let padded = pad != nil && fit == .contain && width != nil && height != nil
        var output = padded ? (w: width!, h: height!) : content

        if let longest = longestSide, Swift.max(output.w, output.h) > longest {
            let f = Double(longest) / Double(Swift.max(output.w, output.h))
            let shrunk = (w: Swift.max(1, Int((Double(output.w) * f).rounded())), h: Swift.max(1, Int((Double(output.h) * f).rounded())))
            content = padded ? (Swift.min(shrunk.w, Swift.max(1, Int((Double(content.w) * f).rounded()))),
                                Swift.min(shrunk.h, Swift.max(1, Int((Double(content.h) * f).rounded())))) : shrunk
            output = shrunk
        }
        // Only a box derived from one side can exceed the limit (a 1x1000 frame at width=8192).
        if width != nil || height != nil, Swift.max(output.w, output.h) > Self.maximumDimension {
            let name = width != nil ? "width" : "height"
            throw .invalidParameter(name: name, message: "\(name) \(name == "width" ? width! : height!) would make the \(source) frame \(output.w)x\(output.h), more than \(Self.maximumDimension) pixels on a side: ask for a smaller \(name), or add max")
        }

        // A cover crop keeps the middle of the region, in the source's own orientation.
        let keep = swapped ? (w: visible.h, h: visible.w) : (w: visible.w, h: visible.h)
        region.x += (region.width - keep.w) / 2
        region.y += (region.height - keep.h) / 2
        region.width = keep.w
        region.height = keep.h

        // 4:2:2 turned a quarter would be 4:4:0 (full chroma across, half down), which
        // ChromaSubsampling does not model: resample its chroma to 4:2:0 instead, which
        // keeps the same number of chroma samples and is what most JPEG viewers expect.
        var outSampling = outputSubsampling ?? subsampling
        if outputSubsampling == nil, pixelOrientation.swapsAxes, subsampling == .s422 { outSampling = .s420 }

        // With the turn left to EXIF the stored pixels keep the source's orientation.
        let stored = rotationInEXIF && swapped
        var outputSize = FrameSize(width: output.w, height: output.h)
        var contentSize = FrameSize(width: content.w, height: content.h)
        if stored {
            outputSize = FrameSize(width: output.h, height: output.w)
            contentSize = FrameSize(width: content.h, height: content.w)
        }
        let scaledSize = pixelOrientation.swapsAxes ? FrameSize(width: contentSize.height, height: contentSize.width) : contentSize

        // Centre the picture in the padded box, on even pixels where chroma is subsampled.
        var origin = (x: (outputSize.width - contentSize.width) / 2, y: (outputSize.height - contentSize.height) / 2)
        if outSampling == .s422 || outSampling == .s420 { origin.x &= ~1 }
        if outSampling == .s420 { origin.y &= ~1 }

        let shrinking = Double(scaledSize.width) < region.width - 1e-9 || Double(scaledSize.height) < region.height - 1e-9
        return Layout(region: region, scaledSize: scaledSize, orientation: pixelOrientation, outputSize: outputSize,
                      content: Rect(x: origin.x, y: origin.y, width: contentSize.width, height: contentSize.height),
                      pad: padded ? pad : nil, subsampling: outSampling,
                      interpolation: interpolation ?? (shrinking ? .area : .bilinear))
    }
}

extension Substring {
    var trimmingSpaces: Substring {
        var s = self
        while s.first == " " { s = s.dropFirst() }
        while s.last == " " { s = s.dropLast() }
        return s
    }
}
