import GroupSessions

/// The activity the group-session tests share.
public struct WatchMovie: GroupActivity, Equatable {
    public static let activityIdentifier = "org.coplay.tests.watch-movie"
    public var movie: String
    public var metadata: GroupActivityMetadata { GroupActivityMetadata(title: movie, type: .watchTogether) }

    public init(movie: String) { self.movie = movie }
}

/// A typed message the group-session tests exchange.
public struct Chat: Codable, Sendable, Equatable {
    public var sender: Int
    public var index: Int
    public var text: String

    public init(sender: Int, index: Int, text: String = "") {
        self.sender = sender
        self.index = index
        self.text = text
    }
}
