import CaptureSession
import Hummingbird

/// `GET /metrics` in the Prometheus text format (version 0.0.4), written from
/// each camera's status so the figures always agree with `/v1/status`.
enum Metrics {
    static func response(_ services: APIServices) async throws -> Response {
        var statuses: [CameraStatus] = []
        var histograms: [EncodeHistogram] = []
        var videoLatencies: [EncodeHistogram] = []
        for session in services.cameras.sessions {
            statuses.append(await session.status())
            histograms.append(await session.encodeHistogram())
            videoLatencies.append(await session.videoLatencyHistogram())
        }
        let photos = await services.photos.cameraTotals
        let text = render(statuses: statuses, histograms: histograms, videoLatencies: videoLatencies, photos: photos,
                          uptime: services.daemon.uptimeSeconds, thumbnails: await services.thumbnails.counters)
        return Response(status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                        body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    static func render(statuses: [CameraStatus], histograms: [EncodeHistogram], videoLatencies: [EncodeHistogram] = [],
                       photos: [String: PhotoOutput.CameraTotals], uptime: Double,
                       thumbnails: ThumbnailCache.Counters = .init()) -> String {
        var out = ""
        func family(_ name: String, _ type: String, _ help: String, _ samples: [(labels: String, value: String)]) {
            out += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n"
            for sample in samples { out += "\(name)\(sample.labels) \(sample.value)\n" }
        }
        func perCamera(_ value: (CameraStatus) -> Double) -> [(labels: String, value: String)] {
            statuses.map { ("{camera=\"\(escape($0.id))\"}", format(value($0))) }
        }
        family("camd_uptime_seconds", "gauge", "Seconds since camd started.", [("", format(uptime))])
        family("camd_camera_up", "gauge", "1 while the camera is streaming.", perCamera { $0.state == .running ? 1 : 0 })
        family("camd_camera_waiting_for_device", "gauge", "1 while the camera waits for its device.",
               perCamera { $0.state == .waitingForDevice ? 1 : 0 })
        family("camd_frames_captured_total", "counter", "Frames received from the device.", perCamera { Double($0.framesCaptured) })
        family("camd_frames_encoded_total", "counter", "Frames encoded to JPEG.", perCamera { Double($0.framesEncoded) })
        family("camd_frames_dropped_total", "counter", "Frames dropped: flagged broken, lost, or not decodable.",
               perCamera { Double($0.framesDropped) })
        family("camd_frames_copied_total", "counter", "Frames copied out of the driver's buffers because consumers held the ones it could lend.",
               perCamera { Double($0.framesCopied) })
        family("camd_device_errors_total", "counter", "Device errors: disconnects, stream failures, stalls.",
               perCamera { Double($0.errors) })
        family("camd_stream_clients", "gauge", "Connected live stream clients.", perCamera { Double($0.streamClients) })
        family("camd_snapshots_answered_ready_total", "counter", "Snapshots answered at once from a JPEG already made.",
               perCamera { Double($0.snapshots.answeredReady) })
        family("camd_snapshots_answered_on_event_loop_total", "counter", "Of those, polls answered on the listener's event loop, with no task.",
               perCamera { Double($0.snapshots.answeredOnEventLoop) })
        family("camd_snapshots_waited_on_event_loop_total", "counter",
               "Polls that waited on the listener's event loop for their JPEG, with no task, and were answered there.",
               perCamera { Double($0.snapshots.waitedOnEventLoop) })
        family("camd_snapshots_made_ahead_total", "counter", "JPEGs made just before a steadily polling client's request was due.",
               perCamera { Double($0.snapshots.madeAhead) })
        family("camd_snapshots_made_ahead_unused_total", "counter", "JPEGs made ahead of a poll that no request took.",
               perCamera { Double($0.snapshots.madeAheadUnused) })
        family("camd_capture_fps", "gauge", "Measured capture rate.", perCamera { $0.measuredFPS })
        family("camd_video_running", "gauge", "1 while the H.264 stage runs (something wants video).",
               perCamera { $0.video.running ? 1 : 0 })
        family("camd_video_frames_encoded_total", "counter", "Frames encoded to H.264.", perCamera { Double($0.video.framesEncoded) })
        family("camd_video_keyframes_total", "counter", "H.264 keyframes, asked for or at the interval.",
               perCamera { Double($0.video.keyframes) })
        family("camd_video_bytes_total", "counter", "Bytes of H.264 encoded.", perCamera { Double($0.video.bytesEncoded) })
        family("camd_recording", "gauge", "1 while the camera records (also while waiting for disk space).",
               perCamera { $0.video.recording.state == .off ? 0 : 1 })

        family("camd_live_video_clients", "gauge", "Clients of the live H.264 (/video and HLS).",
               perCamera { Double($0.video.live.clients.count) })
        family("camd_live_video_bytes_sent_total", "counter", "Bytes of live H.264 sent to clients.",
               perCamera { Double($0.video.live.bytesSent) })
        family("camd_live_video_frames_sent_total", "counter", "Live H.264 frames sent to clients, counted per client.",
               perCamera { Double($0.video.live.framesSent) })
        family("camd_live_video_drops_total", "counter", "Times a live client fell behind and went on from the next keyframe.",
               perCamera { Double($0.video.live.drops) })
        family("camd_live_video_frames_dropped_total", "counter", "Live H.264 frames clients did not get because they fell behind.",
               perCamera { Double($0.video.live.framesDropped) })
        family("camd_video_keyframes_requested_total", "counter", "H.264 keyframes asked for when a client or recording joined.",
               perCamera { Double($0.video.keyframesRequested) })

        func histogram(_ name: String, _ help: String, _ values: [EncodeHistogram]) {
            out += "# HELP \(name) \(help)\n# TYPE \(name) histogram\n"
            for (status, histogram) in zip(statuses, values) {
                let camera = "camera=\"\(escape(status.id))\""
                for (bound, count) in zip(EncodeHistogram.bounds, histogram.cumulativeCounts) {
                    out += "\(name)_bucket{\(camera),le=\"\(format(bound))\"} \(count)\n"
                }
                out += "\(name)_bucket{\(camera),le=\"+Inf\"} \(histogram.count)\n"
                out += "\(name)_sum{\(camera)} \(format(histogram.sum))\n"
                out += "\(name)_count{\(camera)} \(histogram.count)\n"
            }
        }
        histogram("camd_encode_seconds", "Time to encode one frame to JPEG.", histograms)
        histogram("camd_video_latency_seconds", "Time from a frame's capture to its H.264 packet (waiting, converting, encoding).",
                  videoLatencies)
        // Per camera: every configured camera, and any other whose photos were saved (a removed one).
        let photoCameras = statuses.map(\.id) + photos.keys.filter { id in !statuses.contains { $0.id == id } }.sorted()
        func perPhotoCamera(_ value: (PhotoOutput.CameraTotals) -> Int) -> [(labels: String, value: String)] {
            photoCameras.map { ("{camera=\"\(escape($0))\"}", String(value(photos[$0] ?? .init()))) }
        }
        family("camd_photos_saved_total", "counter", "Photos saved by the photo output.", perPhotoCamera(\.photosSaved))
        family("camd_photo_bytes_written_total", "counter", "Bytes of photos written.", perPhotoCamera(\.bytesWritten))
        family("camd_photo_save_errors_total", "counter", "Photo saves that failed (disk full and others).",
               perPhotoCamera(\.saveFailures))
        family("camd_photos_deleted_by_retention_total", "counter", "Photos removed by retention rules.",
               perPhotoCamera(\.retentionDeletions))
        family("camd_thumbnails_rendered_total", "counter", "Thumbnails of saved files rendered (not found in the cache).",
               [("", String(thumbnails.renders))])
        family("camd_thumbnail_cache_hits_total", "counter", "Thumbnails of saved files answered from the cache.",
               [("", String(thumbnails.hits))])
        family("camd_thumbnail_cache_bytes", "gauge", "Bytes of thumbnails the cache holds.", [("", String(thumbnails.bytes))])
        return out
    }

    static func format(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }

    static func escape(_ label: String) -> String {
        label.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
    }
}
