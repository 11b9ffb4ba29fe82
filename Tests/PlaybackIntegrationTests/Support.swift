import GroupSessions
// Shared helpers (LockedBox, Collector, eventually) live in Tests/TestSupport.
import TestSupport

struct TestActivity: GroupActivity, Equatable {
    static let activityIdentifier = "org.coplay.tests.playback-integration"
    var item: String
    var metadata: GroupActivityMetadata { GroupActivityMetadata(title: item, type: .watchTogether) }
}
