import Video

// The camera's H.264 for front ends beside the HTTP API (the RTSP server): they consume the
// one encode the recordings and live clients share, and know nothing of the stage inside.
extension CaptureSession {
    /// Adds a consumer of the camera's H.264; the camera is started for it if it is not
    /// running, and kept running while it stays. Its stream begins at a keyframe asked for
    /// now. Returns the id to leave with.
    public func joinVideo(_ consumer: any VideoConsumer) async throws(SessionError) -> UInt64 {
        try await addVideoConsumer(consumer)
    }

    /// Removes a consumer added with `joinVideo(_:)` (its `end` is called); the last one
    /// stops the encoder.
    public func leaveVideo(_ id: UInt64) {
        removeVideoConsumer(id)
    }

    /// Asks the encoder for a keyframe at the next frame: a consumer that dropped packets
    /// (its client fell behind) can start again from it.
    public nonisolated func requestVideoKeyframe() {
        video.requestKeyframe()
    }
}
