import Testing

/// Waits until `condition` holds, polling every 10 ms; records an issue after `timeout` (generous by
/// design: tests assert behaviour, not speed) and returns whether the condition held. The one
/// polling wait of the Swift tests (the issue names `what` and points at the caller's line).
///
/// ```swift
/// await eventually("both members joined") { members.allSatisfy(\.isJoined) }
/// await eventually { await coordinator.state?.rate == 1 }
/// ```
@discardableResult
public func eventually(
    _ what: String = "the condition", timeout: Duration = .seconds(120), sourceLocation: SourceLocation = #_sourceLocation,
    _ condition: () async -> Bool
) async -> Bool {
    let clock = ContinuousClock()
    let deadline = clock.now + timeout
    while clock.now < deadline {
        if await condition() { return true }
        try? await Task.sleep(for: .milliseconds(10))
    }
    Issue.record("timed out waiting for \(what)", sourceLocation: sourceLocation)
    return false
}
