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

    /// Runs until the task is cancelled. Without an interval, or while the camera does not
    /// run, it waits for the camera's settings or state to change.
    public func run() async {
        // Followed before the settings are read, so a change made meanwhile is not missed.
        var changes = session.changes().makeAsyncIterator()
        var nextDue = ContinuousClock.now
        while !Task.isCancelled {
            let settings = await session.settings
            guard let interval = settings.photos.intervalSeconds, await session.state == .running else {
                guard await changes.next() != nil else { return }
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
        let shot: RenderedSnapshot
        do {
            // The camera's image defaults and location apply to timelapse photos as to POST snapshot.
            shot = try await session.renderedSnapshot(settings.image, quality: settings.quality, location: settings.location)
        } catch is SessionError {
            return  // no frame now (the camera is stopping or waiting): the next tick tries again
        } catch {
            await session.recordPhotoSave(error: String(describing: error))
            return
        }
        do {
            _ = try await photos.save(shot.jpeg, camera: session.id, settings: settings.photos, captureTime: shot.captureTime,
                                      sequence: shot.sequence, width: shot.size.width, height: shot.size.height)
            await session.recordPhotoSave(error: nil)
        } catch {
            await session.recordPhotoSave(error: String(describing: error))
        }
    }
}
