import APIModel
import CaptureSession
import HTTPTypes
import Hummingbird

/// Timelapse movies: `POST /v1/timelapses` makes a job that renders a camera's saved photos
/// into an H.264 MP4 in the background; `GET` lists the jobs or shows one; `POST
/// .../{id}/cancel` stops one, and `DELETE .../{id}` stops it if need be and forgets it.
/// The finished movie is in the media library under the job's `name`.
func addTimelapseRoutes(_ v1: RouterGroup<CamdRequestContext>, _ services: APIServices) {
    v1.post("timelapses") { request, context in
        let body = try await JSONBody.decode(TimelapseRequest.self, request)
        let since = try time(body.since, "since")
        let until = try time(body.until, "until")
        let settings = try TimelapseSettings(fps: body.fps ?? TimelapseSettings.defaultFPS,
                                             size: try body.size.map(TimelapseSettings.size(parsing:)))
        await audit(request, context, services)
        let job = try await services.timelapses.start(camera: body.camera, since: since, until: until, settings: settings)
        var response = try JSONBody.response(TimelapseJob(job), status: .accepted)
        response.headers[.location] = "/v1/timelapses/\(job.id)"
        return response
    }
    v1.get("timelapses") { _, _ in
        try JSONBody.response(await services.timelapses.list().map(TimelapseJob.init))
    }
    v1.get("timelapses/:id") { _, context in
        try JSONBody.response(TimelapseJob(try await services.timelapses.job(jobID(context))))
    }
    v1.post("timelapses/:id/cancel") { request, context in
        let id = try jobID(context)
        await audit(request, context, services)
        return try JSONBody.response(TimelapseJob(try await services.timelapses.cancel(id)))
    }
    v1.delete("timelapses/:id") { request, context in
        let id = try jobID(context)
        await audit(request, context, services)
        try await services.timelapses.remove(id)
        return Response(status: .noContent)
    }
}

private func jobID(_ context: CamdRequestContext) throws -> String {
    context.parameters.get("id") ?? ""
}

extension APIError {
    /// The status each timelapse failure maps to.
    init(_ error: TimelapseError) {
        let status: HTTPResponse.Status
        switch error {
        case .invalidParameter, .noPhotos: status = .badRequest
        case .unknownJob: status = .notFound
        case .alreadyFinished: status = .conflict
        case .tooManyJobs: status = .tooManyRequests
        case .diskFull: status = .init(code: 507, reasonPhrase: "Insufficient Storage")
        case .cancelled: status = .conflict
        case .failed: status = .internalServerError
        }
        self.init(status, error.code, error.description)
    }
}
