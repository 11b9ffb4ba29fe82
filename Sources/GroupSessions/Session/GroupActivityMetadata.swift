import Foundation

/// How a ``GroupActivity`` presents itself: title, subtitle, kind and a fallback URL.
public struct GroupActivityMetadata: Codable, Hashable, Sendable {
    /// The kind of activity.
    public struct ActivityType: RawRepresentable, Codable, Hashable, Sendable {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        /// A general-purpose activity.
        public static let generic = ActivityType(rawValue: "generic")
        /// Watching media together.
        public static let watchTogether = ActivityType(rawValue: "watchTogether")
    }

    /// Short title shown to members.
    public var title: String?
    /// Longer description.
    public var subtitle: String?
    /// The kind of activity.
    public var type: ActivityType
    /// Where someone without coplay can follow along.
    public var fallbackURL: URL?

    /// Creates metadata.
    public init(title: String? = nil, subtitle: String? = nil, type: ActivityType = .generic, fallbackURL: URL? = nil) {
        self.title = title
        self.subtitle = subtitle
        self.type = type
        self.fallbackURL = fallbackURL
    }
}
