/// How much colour resolution camd's JPEGs keep (`image.chroma`).
public enum JPEGChroma: String, Hashable, Sendable, CaseIterable {
    /// Half the colour resolution each way (4:2:0), as µStreamer, mjpg-streamer, fswebcam and
    /// most JPEGs on the web: a YUYV camera's JPEG is about a tenth smaller and a fifth quicker
    /// to encode, and the eye sees little of the difference in a photograph.
    case halved = "4:2:0"
    /// All the colour the camera sends: 4:2:2 from YUYV, 4:2:0 from NV12, 4:4:4 from RGB.
    case camera

    /// The subsampling an image held in `source`'s is encoded in.
    public func encoded(_ source: ChromaSubsampling) -> ChromaSubsampling {
        self == .halved && (source == .s422 || source == .s444) ? .s420 : source
    }
}
