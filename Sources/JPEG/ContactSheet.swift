import VideoCore

/// One JPEG showing many photos: a grid of square `cover` thumbnails, in the
/// order given, each labelled underneath (usually with its capture time).
///
/// Bounded: at most `maximumCells` photos (400) and `maximumDimension` pixels
/// a side, so one request cannot make the daemon decode or hold without limit.
/// Each photo is decoded at the smallest DCT scale that covers its cell and
/// drawn straight into the sheet, so only one photo is held at a time.
public struct ContactSheet: Hashable, Sendable {
    /// The most photos one sheet shows.
    public static let maximumCells = 400
    /// The most columns (`cols`).
    public static let maximumColumns = 40
    /// Allowed cell sizes in pixels (`cell`).
    public static let cellSizes = 32...1024
    /// The most pixels a sheet has on a side.
    public static let maximumDimension = 16384

    /// Columns in the grid (`cols`); fewer photos than columns make one shorter row.
    public var columns: Int
    /// The side of each square thumbnail in pixels (`cell`); odd sizes are made even so chroma stays aligned.
    public var cell: Int

    public init(columns: Int = 6, cell: Int = 240) {
        self.columns = columns
        self.cell = cell
    }

    /// Reads `cols` and `cell` from a query, on top of `defaults`.
    public static func parse(query: [String: String], defaults: ContactSheet = ContactSheet()) throws(ImageError) -> ContactSheet {
        var sheet = defaults
        if let text = query["cols"] {
            guard let value = Int(text) else {
                throw .invalidParameter(name: "cols", message: "cols must be a whole number from 1 to \(maximumColumns); got \(text)")
            }
            sheet.columns = value
        }
        if let text = query["cell"] {
            guard let value = Int(text) else {
                throw .invalidParameter(name: "cell", message: "cell must be a whole number of pixels from \(cellSizes.lowerBound) to \(cellSizes.upperBound); got \(text)")
            }
            sheet.cell = value
        }
        try sheet.validate()
        return sheet
    }

    func validate() throws(ImageError) {
        guard (1...Self.maximumColumns).contains(columns) else {
            throw .invalidParameter(name: "cols", message: "cols must be a whole number from 1 to \(Self.maximumColumns); got \(columns)")
        }
        guard Self.cellSizes.contains(cell) else {
            throw .invalidParameter(name: "cell", message: "cell must be a whole number of pixels from \(Self.cellSizes.lowerBound) to \(Self.cellSizes.upperBound); got \(cell)")
        }
    }

    /// Where everything goes on a sheet of `count` photos.
    public struct Layout: Hashable, Sendable {
        public var columns: Int
        public var rows: Int
        /// The whole sheet.
        public var size: FrameSize
        /// The thumbnails' side, even.
        public var cell: Int
        /// Space between cells and around the edge.
        public var gap: Int
        /// The label strip under each cell.
        public var labelHeight: Int
        /// Font pixels per label pixel.
        public var labelScale: Int

        /// The thumbnail of photo `index` (row by row).
        public func cellRect(_ index: Int) -> Geometry.Rect {
            let (row, column) = index.quotientAndRemainder(dividingBy: columns)
            return Geometry.Rect(x: gap + column * (cell + gap), y: gap + row * (cell + labelHeight + gap), width: cell, height: cell)
        }

        /// The label strip under photo `index`.
        public func labelRect(_ index: Int) -> Geometry.Rect {
            let c = cellRect(index)
            return Geometry.Rect(x: c.x, y: c.y + cell, width: cell, height: labelHeight)
        }
    }

    /// The layout for `count` photos, or why there cannot be one.
    public func layout(count: Int) throws(ImageError) -> Layout {
        try validate()
        guard count > 0 else { throw .noPhotos }
        guard count <= Self.maximumCells else { throw .tooManyPhotos(count: count, limit: Self.maximumCells) }
        let cell = self.cell & ~1
        let gap = Swift.max(4, cell / 40) & ~1
        let labelScale = Swift.max(1, cell / 240)
        let labelHeight = ((TextOverlay.lineHeight + 2) * labelScale + 1) & ~1
        let columns = Swift.min(self.columns, count)
        let rows = (count + columns - 1) / columns
        let size = FrameSize(width: columns * (cell + gap) + gap, height: rows * (cell + labelHeight + gap) + gap)
        guard size.width <= Self.maximumDimension, size.height <= Self.maximumDimension else {
            let name = size.width > Self.maximumDimension ? "cols" : "cell"
            throw .invalidParameter(name: name, message: "a sheet of \(count) photos in \(columns) columns of \(cell)-pixel cells would be \(size), more than \(Self.maximumDimension) pixels on a side: use a smaller cell or \(name == "cols" ? "fewer cols" : "more cols")")
        }
        return Layout(columns: columns, rows: rows, size: size, cell: cell, gap: gap, labelHeight: labelHeight, labelScale: labelScale)
    }

    /// One photo on the sheet.
    public struct Photo: Sendable {
        public var jpeg: [UInt8]
        public var label: String
        public init(jpeg: [UInt8], label: String) {
            self.jpeg = jpeg
            self.label = label
        }
    }

    /// The sheet as planes (4:2:0).
    public func render(_ photos: [Photo], with pipeline: ImagePipeline) throws(ImageError) -> YUVImage {
        try render(count: photos.count, with: pipeline, label: { photos[$0].label }, jpeg: { photos[$0].jpeg })
    }

    /// The sheet as planes (4:2:0), loading each photo only when its cell is
    /// drawn: `jpeg` returns nil for a photo that cannot be read, which gets an
    /// empty cell marked `?` rather than failing the sheet.
    public func render(count: Int, with pipeline: ImagePipeline,
                       label: (Int) -> String, jpeg: (Int) -> [UInt8]?) throws(ImageError) -> YUVImage {
        let layout = try layout(count: count)
        var sheet = YUVImage(size: layout.size, subsampling: .s420)
        sheet.fill(luma: 32, cb: 128, cr: 128, in: Geometry.Rect(x: 0, y: 0, width: layout.size.width, height: layout.size.height))
        let thumbnail = Geometry(width: layout.cell, height: layout.cell, fit: .cover)
        for index in 0..<count {
            let cell = layout.cellRect(index)
            var drawn = false
            if let bytes = jpeg(index) {
                // A photo saved with `rotate=exif` is turned here as a viewer would turn it.
                var geometry = thumbnail
                if let orientation = EXIF.Orientation(readingFrom: bytes) {
                    (geometry.rotate, geometry.flip) = Geometry.turn(for: orientation)
                }
                do throws(ImageError) {
                    try pipeline.draw(jpeg: bytes, geometry: geometry, into: &sheet, at: (cell.x, cell.y))
                    drawn = true
                } catch {
                    drawn = false  // unreadable: marked below, the rest of the sheet still drawn
                }
            }
            if !drawn {
                sheet.fill(luma: 16, cb: 128, cr: 128, in: cell)
                let s = 2 * layout.labelScale
                TextOverlay.drawText("?", x: cell.x + (cell.width - 5 * s) / 2, y: cell.y + (cell.height - 7 * s) / 2,
                                     scale: s, luma: 160, clip: cell, into: &sheet)
            }
            let strip = layout.labelRect(index)
            let text = Substring(label(index))
            let textWidth = (text.count * TextOverlay.advance - 1) * layout.labelScale
            TextOverlay.drawText(text, x: strip.x + Swift.max(0, (strip.width - textWidth) / 2),
                                 y: strip.y + (strip.height - 7 * layout.labelScale) / 2,
                                 scale: layout.labelScale, luma: 230, clip: strip, into: &sheet)
        }
        return sheet
    }

    /// The sheet as one JPEG.
    public func jpeg(_ photos: [Photo], with pipeline: ImagePipeline, quality: Int) throws(ImageError) -> [UInt8] {
        try pipeline.encode(render(photos, with: pipeline), quality: quality)
    }

    /// The sheet as one JPEG, loading photos one at a time (see `render(count:with:label:jpeg:)`).
    public func jpeg(count: Int, with pipeline: ImagePipeline, quality: Int,
                     label: (Int) -> String, jpeg: (Int) -> [UInt8]?) throws(ImageError) -> [UInt8] {
        try pipeline.encode(render(count: count, with: pipeline, label: label, jpeg: jpeg), quality: quality)
    }
}
