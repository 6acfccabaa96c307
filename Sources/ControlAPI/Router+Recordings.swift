import CaptureSession
import Hummingbird

/// Recordings: `POST /v1/cameras/{id}/recordings` starts one (optionally for `duration`),
/// `POST .../recordings/stop` ends it and answers with the files saved,
/// `GET .../recordings` tells what the camera's recorder is doing.
func addRecordingRoutes(_ v1: RouterGroup<CamdRequestContext>, _ services: APIServices) {
    v1.get("cameras/:id/recordings") { _, context in
        try JSONBody.response(await recorder(context, services).status())
    }
    v1.post("cameras/:id/recordings") { request, context in
        let recorder = try recorder(context, services)
        var duration: Double?
        for (key, value) in try await JSONBody.object(request, context: context) {
            guard key == "duration" else {
                throw APIError.badRequest("unknown field \"\(key)\"; a recording takes duration", code: "invalid_settings")
            }
            duration = try recordingDuration(value)
        }
        await audit(request, context, services)
        do {
            return try JSONBody.response(try await recorder.start(duration: duration), status: .created)
        } catch let error as RecordingError {
            throw APIError(error)
        }
    }
    v1.post("cameras/:id/recordings/stop") { request, context in
        let recorder = try recorder(context, services)
        await audit(request, context, services)
        do {
            return try JSONBody.response(try await recorder.stop())
        } catch let error as RecordingError {
            throw APIError(error)
        }
    }
}

private func recorder(_ context: CamdRequestContext, _ services: APIServices) throws -> MovieRecorder {
    let session = try camera(context, services)
    guard let recorder = services.recorders[session.id] else { throw APIError.unknownCamera(session.id, known: services.cameras.ids) }
    return recorder
}

/// `duration`: seconds as a number, or a duration such as "10s" or "5m", above 0; null for none.
private func recordingDuration(_ value: SettingValue) throws -> Double? {
    let expected = "duration must be a number of seconds above 0 or a duration such as \"10s\" or \"5m\""
    let seconds: Double?
    switch value {
    case .null: return nil
    case .integer(let whole): seconds = Double(whole)
    case .number(let real): seconds = real
    case .string(let text), .text(let text): seconds = ValueSpelling.seconds(parsing: text)
    default: seconds = nil
    }
    guard let seconds, seconds > 0, seconds <= ValueSpelling.longestDuration else {
        throw APIError.badRequest("\(expected); got \(value)", code: "invalid_settings")
    }
    return seconds
}

extension APIError {
    /// The status each recording failure maps to: a full disk is 507, as for photos.
    init(_ error: RecordingError) {
        switch error {
        case .alreadyRecording(let text): self.init(.conflict, "already_recording", text)
        case .notRecording(let text): self.init(.conflict, "not_recording", text)
        case .diskFull(let text): self.init(.init(code: 507, reasonPhrase: "Insufficient Storage"), "disk_full", text)
        case .session(let error): self.init(error)
        case .failed(let text): self.init(.internalServerError, "recording_failed", text)
        }
    }
}
