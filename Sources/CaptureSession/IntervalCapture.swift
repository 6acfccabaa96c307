import JPEG

/// Timelapse: saves a photo from one camera every `photos.intervalSeconds`
/// while it runs. Reads the interval each time, so a reconfigure takes effect;
/// a failed save (a full disk) is reported in the camera's status and capture goes on.
public struct IntervalCapture: Sendable {
    let session: CaptureSession
    let photos: PhotoOutput

    public init(session: CaptureSession, photos: PhotoOutput) {
        self.session = session
        self.photos = photos
    }

    /// Runs until the task is cancelled.
    public func run() async {
        var nextDue = ContinuousClock.now
        while !Task.isCancelled {
            let settings = await session.settings
            guard let interval = settings.photos.intervalSeconds, await session.state == .running else {
                try? await Task.sleep(for: .seconds(1))
                nextDue = .now
                continue
            }
            if ContinuousClock.now < nextDue {
                try? await Task.sleep(until: nextDue, clock: .continuous)
                continue
            }
            nextDue = nextDue + .milliseconds(Int64(interval * 1000))
            if nextDue < .now { nextDue = .now + .milliseconds(Int64(interval * 1000)) }
            await saveOne(settings)
        }
    }

    func saveOne(_ settings: CameraSettings) async {
        guard let frame = try? await session.snapshot() else { return }
        let card = await session.status().card
        let jpeg = EXIF(captureTime: frame.captureTime, make: card, model: card,
                        pixelWidth: frame.size.width, pixelHeight: frame.size.height).inserted(into: frame.jpeg)
        do {
            _ = try await photos.save(jpeg, camera: session.id, settings: settings.photos, captureTime: frame.captureTime,
                                      sequence: frame.sequence, width: frame.size.width, height: frame.size.height)
            await session.recordPhotoSave(error: nil)
        } catch {
            await session.recordPhotoSave(error: error.description)
        }
    }
}
