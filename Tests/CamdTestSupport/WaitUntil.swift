/// Waits until `condition` holds, looking again every `pause`, for at most `limit` (the
/// expectations after it say what failed): how the tests wait for what another thread or task
/// does.
public func waitUntil(limit: Duration = .seconds(30), every pause: Duration = .milliseconds(2),
                      _ condition: () async throws -> Bool) async throws {
    let deadline = ContinuousClock.now + limit
    while !(try await condition()), ContinuousClock.now < deadline { try await Task.sleep(for: pause) }
}
