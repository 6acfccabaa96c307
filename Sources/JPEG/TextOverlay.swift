#if canImport(Glibc)
import Glibc
#endif
import VideoCore

/// A line (or lines) of text stamped into a corner of an image, white on a
/// black box so it reads on any background, drawn with a built-in 5x7 bitmap
/// font (printable ASCII; anything else shows as `?`), so no font files are needed.
///
/// The text goes into the luma plane; the box's chroma is set neutral, so the
/// box is grey-scale whatever the picture's colour, and nothing outside the box changes.
public struct TextOverlay: Hashable, Sendable {
    /// Where the box sits.
    public enum Corner: String, Hashable, Sendable, CaseIterable {
        case topLeft = "top-left", topRight = "top-right", bottomLeft = "bottom-left", bottomRight = "bottom-right"

        /// Parses `top-left`, `top-right`, `bottom-left` or `bottom-right`; the error names `parameter`.
        public init(parsing text: String, parameter: String = "overlay_corner") throws(ImageError) {
            guard let corner = Corner(rawValue: text) else {
                throw .invalidParameter(name: parameter, message: "\(parameter) must be top-left, top-right, bottom-left or bottom-right; got \(text)")
            }
            self = corner
        }
    }

    /// The text as drawn: a template already expanded (see `expand`). `\n` starts a new line.
    public var text: String
    public var corner: Corner
    /// Pixels per font pixel; nil chooses one from the image size (`scale(for:)`).
    public var scale: Int?

    public init(text: String, corner: Corner = .bottomLeft, scale: Int? = nil) {
        self.text = text
        self.corner = corner
        self.scale = scale
    }

    /// An overlay whose text is `template` expanded for one frame.
    public init(template: String, time: Double, camera: String, sequence: UInt64,
                corner: Corner = .bottomLeft, scale: Int? = nil) {
        self.init(text: Self.expand(template, time: time, camera: camera, sequence: sequence), corner: corner, scale: scale)
    }

    /// The conversions of strftime(3) a template may use, in local time and the C locale
    /// (English names, ASCII: what the built-in font draws). `%E`/`%O` variants and
    /// conversions that need a field width are not among them.
    public static let timeConversions: Set<Character> = Set("aAbBcCdDeFgGhHIjklmMnprRsStTuUVwWxXyYzZ")

    /// Expands a strftime-style template for one frame: any of `timeConversions`
    /// (`%Y-%m-%d %H:%M:%S`, `%a %b %e`, `%j`, `%Z`...) in local time, `%%` for `%`,
    /// `{camera}` and `{seq}`. Anything else is kept as written.
    public static func expand(_ template: String, time: Double, camera: String, sequence: UInt64) -> String {
        var seconds = time_t(time.rounded(.down))
        var parts = tm()
        localtime_r(&seconds, &parts)
        var output = ""
        var rest = Substring(template)
        while let c = rest.first {
            if c == "%", rest.count >= 2 {
                let code = rest[rest.index(after: rest.startIndex)]
                if code == "%" || timeConversions.contains(code) {
                    output += code == "%" ? "%" : format(code, parts)
                    rest = rest.dropFirst(2)
                    continue
                }
            } else if rest.hasPrefix("{camera}") {
                output += camera
                rest = rest.dropFirst(8)
                continue
            } else if rest.hasPrefix("{seq}") {
                output += String(sequence)
                rest = rest.dropFirst(5)
                continue
            }
            output.append(c)
            rest = rest.dropFirst()
        }
        return output
    }

    /// One strftime(3) conversion of `parts`.
    private static func format(_ code: Character, _ parts: tm) -> String {
        var parts = parts
        var buffer = [CChar](repeating: 0, count: 64)
        let count = strftime(&buffer, buffer.count, "%\(code)", &parts)
        return String(decoding: buffer.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    // MARK: Layout

    /// Font pixels: each glyph is 5x7 in a 6x9 cell; the box has 2 font pixels of padding.
    static let advance = 6, lineHeight = 9, padding = 2

    /// The scale chosen when none is set: one font pixel per 240 pixels of the
    /// shorter side (4 at 1080p, 2 at 480p, 1 for thumbnails).
    public static func scale(for size: FrameSize) -> Int {
        Swift.max(1, Swift.min(size.width, size.height) / 240)
    }

    private var lines: [Substring] { text.split(separator: "\n", omittingEmptySubsequences: false) }

    /// Where `draw` paints in an image of `size`: the box, on even pixels so
    /// subsampled chroma is all inside it, clipped to the image.
    public func box(in size: FrameSize) -> Geometry.Rect {
        let s = scale ?? Self.scale(for: size)
        let columns = lines.map(\.count).max() ?? 0
        let width = (columns * Self.advance - 1 + 2 * Self.padding) * s
        let height = (lines.count * Self.lineHeight - 2 + 2 * Self.padding) * s
        let margin = 2 * s
        var x = corner == .topLeft || corner == .bottomLeft ? margin : size.width - margin - width
        var y = corner == .topLeft || corner == .topRight ? margin : size.height - margin - height
        var right = x + width, bottom = y + height
        x = Swift.max(0, x & ~1)
        y = Swift.max(0, y & ~1)
        right = Swift.min(size.width, (right + 1) & ~1)
        bottom = Swift.min(size.height, (bottom + 1) & ~1)
        return Geometry.Rect(x: x, y: y, width: Swift.max(0, right - x), height: Swift.max(0, bottom - y))
    }

    /// Paints the box and the text into `image`; returns the box. Text that does not fit is cut off at the box.
    @discardableResult
    public func draw(into image: inout YUVImage) -> Geometry.Rect {
        let box = box(in: image.size)
        guard box.width > 0, box.height > 0 else { return box }
        image.fill(luma: 0, cb: 128, cr: 128, in: box)
        let s = scale ?? Self.scale(for: image.size)
        let left = corner == .topLeft || corner == .bottomLeft ? box.x + Self.padding * s
            : box.x + box.width - ((lines.map(\.count).max() ?? 0) * Self.advance - 1 + Self.padding) * s
        let top = corner == .topLeft || corner == .topRight ? box.y + Self.padding * s
            : box.y + box.height - (lines.count * Self.lineHeight - 2 + Self.padding) * s
        for (index, line) in lines.enumerated() {
            Self.drawText(line, x: left, y: top + index * Self.lineHeight * s, scale: s, luma: 255, clip: box, into: &image)
        }
        return box
    }

    /// Sets the luma of the glyphs' pixels to `luma`, inside `clip` only.
    static func drawText(_ text: Substring, x: Int, y: Int, scale s: Int, luma: UInt8, clip: Geometry.Rect, into image: inout YUVImage) {
        let stride = image.stride(0)
        let clipRight = Swift.min(clip.x + clip.width, image.size.width), clipBottom = Swift.min(clip.y + clip.height, image.size.height)
        let clipLeft = Swift.max(0, clip.x), clipTop = Swift.max(0, clip.y)
        glyphs.withUnsafeBufferPointer { font in
            image.storage.withUnsafeMutableBufferPointer { samples in
                for (index, character) in text.unicodeScalars.enumerated() {
                    let code = character.value >= 0x20 && character.value < 0x7F ? Int(character.value) - 0x20 : Int(UInt8(ascii: "?")) - 0x20
                    let gx = x + index * advance * s
                    if gx >= clipRight { break }
                    for row in 0..<7 {
                        let bits = font[code * 7 + row]
                        if bits == 0 { continue }
                        for column in 0..<5 where bits & (0x10 >> UInt8(column)) != 0 {
                            let px = gx + column * s, py = y + row * s
                            let top = Swift.max(py, clipTop), bottom = Swift.min(py + s, clipBottom)
                            let start = Swift.max(px, clipLeft), end = Swift.min(px + s, clipRight)
                            guard bottom > top, end > start else { continue }
                            for dy in top..<bottom {
                                (samples.baseAddress! + dy * stride + start).update(repeating: luma, count: end - start)
                            }
                        }
                    }
                }
            }
        }
    }

    // MARK: The font

    /// Seven rows of five bits per glyph (bit 4 is the leftmost pixel), for
    /// U+0020 through U+007E, built from `glyphArt` once.
    static let glyphs: [UInt8] = glyphArt.flatMap { art -> [UInt8] in
        let rows = art.split(separator: "|")
        precondition(rows.count == 7 && rows.allSatisfy { $0.count == 5 }, "glyph \(art) must be 7 rows of 5")
        return rows.map { row in row.reduce(UInt8(0)) { $0 << 1 | ($1 == "#" ? 1 : 0) } }
    }

    /// camd's own 5x7 font, drawn here so it can be read and corrected: `#` is ink.
    static let glyphArt: [String] = [
        ".....|.....|.....|.....|.....|.....|.....",  // space
        "..#..|..#..|..#..|..#..|..#..|.....|..#..",  // !
        ".#.#.|.#.#.|.#.#.|.....|.....|.....|.....",  // "
        ".#.#.|.#.#.|#####|.#.#.|#####|.#.#.|.#.#.",  // #
        "..#..|.####|#.#..|.###.|..#.#|####.|..#..",  // $
        "##...|##..#|...#.|..#..|.#...|#..##|...##",  // %
        ".##..|#..#.|#.#..|.#...|#.#.#|#..#.|.##.#",  // &
        "..#..|..#..|.#...|.....|.....|.....|.....",  // '
        "...#.|..#..|.#...|.#...|.#...|..#..|...#.",  // (
        ".#...|..#..|...#.|...#.|...#.|..#..|.#...",  // )
        ".....|..#..|#.#.#|.###.|#.#.#|..#..|.....",  // *
        ".....|..#..|..#..|#####|..#..|..#..|.....",  // +
        ".....|.....|.....|.....|.##..|..#..|.#...",  // ,
        ".....|.....|.....|#####|.....|.....|.....",  // -
        ".....|.....|.....|.....|.....|.##..|.##..",  // .
        ".....|....#|...#.|..#..|.#...|#....|.....",  // /
        ".###.|#...#|#..##|#.#.#|##..#|#...#|.###.",  // 0
        "..#..|.##..|..#..|..#..|..#..|..#..|.###.",  // 1
        ".###.|#...#|....#|...#.|..#..|.#...|#####",  // 2
        "#####|...#.|..#..|...#.|....#|#...#|.###.",  // 3
        "...#.|..##.|.#.#.|#..#.|#####|...#.|...#.",  // 4
        "#####|#....|####.|....#|....#|#...#|.###.",  // 5
        "..##.|.#...|#....|####.|#...#|#...#|.###.",  // 6
        "#####|....#|...#.|..#..|.#...|.#...|.#...",  // 7
        ".###.|#...#|#...#|.###.|#...#|#...#|.###.",  // 8
        ".###.|#...#|#...#|.####|....#|...#.|.##..",  // 9
        ".....|.##..|.##..|.....|.##..|.##..|.....",  // :
        ".....|.##..|.##..|.....|.##..|..#..|.#...",  // ;
        "...#.|..#..|.#...|#....|.#...|..#..|...#.",  // <
        ".....|.....|#####|.....|#####|.....|.....",  // =
        ".#...|..#..|...#.|....#|...#.|..#..|.#...",  // >
        ".###.|#...#|....#|...#.|..#..|.....|..#..",  // ?
        ".###.|#...#|....#|.##.#|#.#.#|#.#.#|.###.",  // @
        ".###.|#...#|#...#|#####|#...#|#...#|#...#",  // A
        "####.|#...#|#...#|####.|#...#|#...#|####.",  // B
        ".###.|#...#|#....|#....|#....|#...#|.###.",  // C
        "###..|#..#.|#...#|#...#|#...#|#..#.|###..",  // D
        "#####|#....|#....|####.|#....|#....|#####",  // E
        "#####|#....|#....|####.|#....|#....|#....",  // F
        ".###.|#...#|#....|#.###|#...#|#...#|.####",  // G
        "#...#|#...#|#...#|#####|#...#|#...#|#...#",  // H
        ".###.|..#..|..#..|..#..|..#..|..#..|.###.",  // I
        "..###|...#.|...#.|...#.|...#.|#..#.|.##..",  // J
        "#...#|#..#.|#.#..|##...|#.#..|#..#.|#...#",  // K
        "#....|#....|#....|#....|#....|#....|#####",  // L
        "#...#|##.##|#.#.#|#.#.#|#...#|#...#|#...#",  // M
        "#...#|#...#|##..#|#.#.#|#..##|#...#|#...#",  // N
        ".###.|#...#|#...#|#...#|#...#|#...#|.###.",  // O
        "####.|#...#|#...#|####.|#....|#....|#....",  // P
        ".###.|#...#|#...#|#...#|#.#.#|#..#.|.##.#",  // Q
        "####.|#...#|#...#|####.|#.#..|#..#.|#...#",  // R
        ".####|#....|#....|.###.|....#|....#|####.",  // S
        "#####|..#..|..#..|..#..|..#..|..#..|..#..",  // T
        "#...#|#...#|#...#|#...#|#...#|#...#|.###.",  // U
        "#...#|#...#|#...#|#...#|#...#|.#.#.|..#..",  // V
        "#...#|#...#|#...#|#.#.#|#.#.#|#.#.#|.#.#.",  // W
        "#...#|#...#|.#.#.|..#..|.#.#.|#...#|#...#",  // X
        "#...#|#...#|.#.#.|..#..|..#..|..#..|..#..",  // Y
        "#####|....#|...#.|..#..|.#...|#....|#####",  // Z
        ".###.|.#...|.#...|.#...|.#...|.#...|.###.",  // [
        ".....|#....|.#...|..#..|...#.|....#|.....",  // backslash
        ".###.|...#.|...#.|...#.|...#.|...#.|.###.",  // ]
        "..#..|.#.#.|#...#|.....|.....|.....|.....",  // ^
        ".....|.....|.....|.....|.....|.....|#####",  // _
        ".#...|..#..|...#.|.....|.....|.....|.....",  // `
        ".....|.....|.###.|....#|.####|#...#|.####",  // a
        "#....|#....|#.##.|##..#|#...#|#...#|####.",  // b
        ".....|.....|.###.|#....|#....|#...#|.###.",  // c
        "....#|....#|.##.#|#..##|#...#|#...#|.####",  // d
        ".....|.....|.###.|#...#|#####|#....|.###.",  // e
        "..##.|.#..#|.#...|###..|.#...|.#...|.#...",  // f
        ".....|.####|#...#|#...#|.####|....#|.###.",  // g
        "#....|#....|#.##.|##..#|#...#|#...#|#...#",  // h
        "..#..|.....|.##..|..#..|..#..|..#..|.###.",  // i
        "...#.|.....|..##.|...#.|...#.|#..#.|.##..",  // j
        "#....|#....|#..#.|#.#..|##...|#.#..|#..#.",  // k
        ".##..|..#..|..#..|..#..|..#..|..#..|.###.",  // l
        ".....|.....|##.#.|#.#.#|#.#.#|#...#|#...#",  // m
        ".....|.....|#.##.|##..#|#...#|#...#|#...#",  // n
        ".....|.....|.###.|#...#|#...#|#...#|.###.",  // o
        ".....|.....|####.|#...#|####.|#....|#....",  // p
        ".....|.....|.##.#|#..##|.####|....#|....#",  // q
        ".....|.....|#.##.|##..#|#....|#....|#....",  // r
        ".....|.....|.###.|#....|.###.|....#|####.",  // s
        ".#...|.#...|###..|.#...|.#...|.#..#|..##.",  // t
        ".....|.....|#...#|#...#|#...#|#..##|.##.#",  // u
        ".....|.....|#...#|#...#|#...#|.#.#.|..#..",  // v
        ".....|.....|#...#|#...#|#.#.#|#.#.#|.#.#.",  // w
        ".....|.....|#...#|.#.#.|..#..|.#.#.|#...#",  // x
        ".....|.....|#...#|#...#|.####|....#|.###.",  // y
        ".....|.....|#####|...#.|..#..|.#...|#####",  // z
        "...#.|..#..|..#..|.#...|..#..|..#..|...#.",  // {
        "..#..|..#..|..#..|..#..|..#..|..#..|..#..",  // |
        ".#...|..#..|..#..|...#.|..#..|..#..|.#...",  // }
        ".....|.....|.#...|#.#.#|...#.|.....|.....",  // ~
    ]
}
