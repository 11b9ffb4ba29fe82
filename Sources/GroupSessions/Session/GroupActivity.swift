/// Something a group does together: a Codable value every member of a session shares.
///
/// Conform a small struct describing what is shared (a movie, a playlist position); the
/// session converges every member on the latest value set by any of them.
///
/// ```swift
/// struct WatchMovie: GroupActivity {
///     static let activityIdentifier = "org.example.watch-movie"
///     var movieID: String
///     var metadata: GroupActivityMetadata {
///         GroupActivityMetadata(title: "Movie night", type: .watchTogether)
///     }
/// }
/// ```
public protocol GroupActivity: Codable, Sendable {
    /// A stable, reverse-DNS identifier of the kind of activity; members ignore activities
    /// whose identifier differs from their session's type.
    static var activityIdentifier: String { get }
    /// How the activity presents itself.
    var metadata: GroupActivityMetadata { get }
}

extension GroupActivity {
    /// By default, the activity type's module-qualified name (`MyApp.WatchMovie`), as
    /// GroupActivities derives one from the type: declare your own reverse-DNS identifier
    /// when members may build the type under another module name.
    public static var activityIdentifier: String { String(reflecting: Self.self) }
}
