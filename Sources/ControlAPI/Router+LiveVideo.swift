import CaptureSession
import Hummingbird

/// Live video: `GET /v1/cameras/{id}/video` (fragmented MP4), and the same fragments as
/// low-latency HLS under `/v1/cameras/{id}/hls/` (`live.m3u8`, `init.mp4`, segments `N.m4s`
/// and parts `N.P.m4s`).
func addLiveVideoRoutes(_ v1: RouterGroup<CamdRequestContext>, _ services: APIServices) {
    v1.get("cameras/:id/video") { _, context in
        let session = try camera(context, services)
        let client = try await session.liveVideo()
        guard let start = await client.waitForStart(timeout: LiveVideoStream.startTimeout) else {
            client.finish()
            if let failure = client.failure { throw APIError(.serviceUnavailable, "no_video", "no H.264 video: \(failure)") }
            throw try await noVideo(session)
        }
        return LiveVideoStream.response(client, start: start)
    }
    // The headers, then the end: no client joins, so nothing is encoded for it.
    v1.head("cameras/:id/video") { _, context in
        let session = try camera(context, services)
        try await session.checkServable()
        return headOnly(LiveVideoStream.headers(contentType: "video/mp4"))
    }

    v1.get("cameras/:id/hls/live.m3u8") { request, context in
        let session = try camera(context, services)
        let window = try await session.hls()
        if window.playlist() == nil { await window.waitForFirstSegment(timeout: LiveVideoStream.startTimeout) }
        let query = request.uri.queryParameters
        let part = try hlsNumber(query.get("_HLS_part"), "_HLS_part")
        if let msn = try hlsNumber(query.get("_HLS_msn"), "_HLS_msn") {
            // RFC 8216bis 6.2.5.2: a request more than two segments ahead is refused, not held.
            if let newest = window.newest, msn > newest.sequence + 2 {
                throw APIError.badRequest("_HLS_msn \(msn) is more than two segments past the newest (\(newest.sequence))", code: "bad_parameter")
            }
            await window.wait(sequence: msn, part: part, timeout: .seconds(3 * HLSWindow.partTarget + 6))
        } else if part != nil {
            throw APIError.badRequest("_HLS_part needs _HLS_msn: the part is of that segment", code: "bad_parameter")
        }
        guard let playlist = window.playlist() else { throw try await noVideo(session, waitedFor: firstSegmentWait) }
        return Response(status: .ok, headers: [.contentType: "application/vnd.apple.mpegurl", .cacheControl: "no-cache"],
                        body: .init(byteBuffer: ByteBuffer(string: playlist)))
    }
    v1.get("cameras/:id/hls/init.mp4") { _, context in
        let session = try camera(context, services)
        let window = try await session.hls()
        if window.initSegment == nil { await window.waitForFirstSegment(timeout: LiveVideoStream.startTimeout) }
        guard let bytes = window.initSegment else { throw try await noVideo(session, waitedFor: firstSegmentWait) }
        return Response(status: .ok, headers: [.contentType: "video/mp4", .cacheControl: "no-cache"],
                        body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }
    v1.get("cameras/:id/hls/:media") { _, context in
        let session = try camera(context, services)
        let name = context.parameters.get("media") ?? ""
        let numbers = name.hasSuffix(".m4s") ? name.dropLast(4).split(separator: ".", omittingEmptySubsequences: false).map { Int($0) } : []
        guard (1...2).contains(numbers.count), numbers.allSatisfy({ ($0 ?? -1) >= 0 }) else {
            throw APIError(.notFound, "not_found", "no HLS file \"\(name)\": segments are N.m4s and parts N.P.m4s, as live.m3u8 lists them")
        }
        let sequence = numbers[0]!, part = numbers.count == 2 ? numbers[1] : nil
        let window = try await session.hls()
        // A part the playlist hints at is held until it is complete (a player asks for it early).
        if window.media(sequence: sequence, part: part) == nil, let newest = window.newest, sequence <= newest.sequence + 1 {
            await window.wait(sequence: sequence, part: part, timeout: .seconds(3 * HLSWindow.partTarget + 6))
        }
        guard let bytes = window.media(sequence: sequence, part: part) else {
            throw APIError(.notFound, "not_found", "HLS \(name) is not kept: players should follow live.m3u8, which lists what is")
        }
        return Response(status: .ok, headers: [.contentType: "video/mp4", .cacheControl: "max-age=60"],
                        body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }
}

/// A number of a blocking playlist request (`_HLS_msn`, `_HLS_part`), nil when not given.
func hlsNumber(_ text: String?, _ name: String) throws -> Int? {
    guard let text else { return nil }
    guard let value = Int(text), value >= 0 else {
        throw APIError.badRequest("\(name) must be a whole number of 0 or more; got \"\(text)\"", code: "bad_parameter")
    }
    return value
}

/// The answer when a camera gives no video: why, from its status. HLS waits for its first
/// segment to end, which takes a keyframe interval (up to 60 s), not only a keyframe.
func noVideo(_ session: CaptureSession, waitedFor: String = "no H.264 keyframe came") async throws -> APIError {
    let status = await session.status()
    let why = status.video.error ?? status.reason ?? "the camera is \(status.state.rawValue)"
    return APIError(.serviceUnavailable, "no_video", "\(waitedFor) within \(LiveVideoStream.startTimeout): \(why)")
}

/// What HLS waits for before its playlist and init segment exist.
let firstSegmentWait = "the first HLS segment did not end (a segment ends at a keyframe, every video.keyframe_interval)"
