import CaptureSession
import VideoCore

/// `POST /v1/cameras/{id}/configure`: the fields given replace the camera's
/// settings, the rest stay; every field is checked before anything changes.
enum ConfigureRequest {
    static let fields: Set<String> = ["device", "format", "size", "fps", "quality", "controls", "autostart", "idle_stop", "photos", "encoder_threads", "encode_every_frame"]
    static let photoFields: Set<String> = ["interval", "name", "keep_count", "keep_bytes", "keep_age"]

    static func apply(_ body: JSONFields, to current: CameraSettings) throws -> CameraSettings {
        try body.rejectUnknown(fields)
        var s = current
        if body.has("device") { s.device = try body.string("device") }
        if body.has("format") {
            s.format = try body.string("format").map { text in
                guard let format = PixelFormat(parsing: text) else { throw body.invalid("format", "must be a FourCC such as YUYV or MJPG; got \"\(text)\"") }
                return format
            }
        }
        if body.has("size") {
            s.size = try body.string("size").map { text in
                guard let size = FrameSize(parsing: text), size.isWithinLimits else {
                    throw body.invalid("size", "must be WIDTHxHEIGHT, such as 1280x720, at most \(FrameSize.largestSide) each; got \"\(text)\"")
                }
                return size
            }
        }
        if body.has("fps") {
            s.fps = try body.number("fps").map { value in
                guard value > 0, value <= 1000 else { throw body.invalid("fps", "must be above 0 and at most 1000; got \(value)") }
                return value
            }
        }
        if let quality = try body.integer("quality") {
            guard (1...100).contains(quality) else { throw body.invalid("quality", "must be from 1 to 100; got \(quality)") }
            s.quality = quality
        }
        if let controls = try body.nested("controls") {
            var values: [String: String] = [:]
            for key in controls.object.keys { values[key] = try controls.scalarText(key) }
            s.controls = values
        }
        if let autostart = try body.bool("autostart") { s.autostart = autostart }
        if let every = try body.bool("encode_every_frame") { s.encodeEveryFrame = every }
        if let threads = try body.integer("encoder_threads") {
            guard (1...CameraSettings.encoderThreadLimit).contains(threads) else {
                throw body.invalid("encoder_threads", "must be from 1 to \(CameraSettings.encoderThreadLimit); got \(threads)")
            }
            s.encoderThreads = threads
        }
        if let idle = try body.number("idle_stop") {
            guard idle >= 1, idle <= 86_400 else { throw body.invalid("idle_stop", "must be from 1 to 86400 seconds; got \(idle)") }
            s.idleStopSeconds = idle
        }
        if let photos = try body.nested("photos") {
            try photos.rejectUnknown(photoFields)
            if photos.has("interval") {
                s.photos.intervalSeconds = try photos.number("interval").map { value in
                    guard value >= 0.1, value <= 86_400 * 365 else { throw photos.invalid("interval", "must be from 0.1 seconds to a year; got \(value)") }
                    return value
                }
            }
            if let name = try photos.string("name") {
                guard name.hasSuffix(".jpg"), !name.contains("/"), !name.hasPrefix(".") else {
                    throw photos.invalid("name", "must end in .jpg and contain no '/' nor start with '.'; got \"\(name)\"")
                }
                // Expand it once now, so a pattern every save would refuse (an unknown
                // token, a NUL) is refused here instead of failing each photo later.
                do {
                    _ = try PhotoOutput.fileName(pattern: name, camera: current.id, captureTime: 0, sequence: 1)
                } catch {
                    throw photos.invalid("name", "is not a usable pattern: \(error.description)")
                }
                s.photos.namePattern = name
            }
            if photos.has("keep_count") {
                s.photos.keepCount = try photos.integer("keep_count").map { value in
                    guard value >= 1 else { throw photos.invalid("keep_count", "must be at least 1; got \(value)") }
                    return value
                }
            }
            if photos.has("keep_bytes") {
                s.photos.keepBytes = try photos.integer("keep_bytes").map { value in
                    guard value >= 1 else { throw photos.invalid("keep_bytes", "must be at least 1; got \(value)") }
                    return Int64(value)
                }
            }
            if photos.has("keep_age") {
                s.photos.keepSeconds = try photos.number("keep_age").map { value in
                    guard value >= 1 else { throw photos.invalid("keep_age", "must be at least 1 second; got \(value)") }
                    return value
                }
            }
        }
        return s
    }
}
