/// Why a file could not be probed.
///
/// Compare ``code`` to tell the kinds apart; ``description`` is a complete, readable sentence naming
/// the file, fit to show a user as is.
///
/// ```swift
/// do {
///     let info = try await MediaProbe.shared.probe(url)
/// } catch let error as MediaProbeError where error.code == .fileNotFound {
///     print(error)   // No such file: /tmp/missing.mp4
/// }
/// ```
public struct MediaProbeError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of failure.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Base: String, Sendable, Hashable {
            case fileNotFound = "file not found"
            case permissionDenied = "permission denied"
            case notMedia = "not media"
            case corrupt = "truncated or corrupt"
            case noUsableStreams = "no usable streams"
            case timedOut = "timed out"
            case readFailed = "read failed"
            case cancelled = "cancelled"
        }

        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// The file does not exist.
        public static let fileNotFound = Code(.fileNotFound)
        /// The file exists but this process may not read it.
        public static let permissionDenied = Code(.permissionDenied)
        /// The file is readable but holds no container format libavformat recognises (or is not a file).
        public static let notMedia = Code(.notMedia)
        /// The container was recognised but could not be parsed: truncated or damaged.
        public static let corrupt = Code(.corrupt)
        /// The file parsed but has no audio or video stream with a known codec.
        public static let noUsableStreams = Code(.noUsableStreams)
        /// Probing took longer than ``MediaProbe/Options/timeout``.
        public static let timedOut = Code(.timedOut)
        /// Another I/O error while reading the file.
        public static let readFailed = Code(.readFailed)
        /// The probing task was cancelled; ``MediaProbe/probe(_:options:)`` turns it into `CancellationError`.
        static let cancelled = Code(.cancelled)

        public var description: String { base.rawValue }
    }

    /// The kind of failure.
    public let code: Code
    /// The path of the file that failed.
    public let path: String
    /// Extra detail (libavformat's or the system's message), if any.
    public let detail: String?

    private init(_ code: Code, path: String, detail: String? = nil) {
        self.code = code
        self.path = path
        self.detail = detail
    }

    /// The file does not exist.
    public static func fileNotFound(path: String) -> Self { Self(.fileNotFound, path: path) }

    /// The file may not be read by this process.
    public static func permissionDenied(path: String) -> Self { Self(.permissionDenied, path: path) }

    /// No recognised media container.
    public static func notMedia(path: String, detail: String? = nil) -> Self {
        Self(.notMedia, path: path, detail: detail)
    }

    /// A recognised container that could not be parsed.
    public static func corrupt(path: String, detail: String? = nil) -> Self {
        Self(.corrupt, path: path, detail: detail)
    }

    /// No audio or video stream with a known codec.
    public static func noUsableStreams(path: String, detail: String? = nil) -> Self {
        Self(.noUsableStreams, path: path, detail: detail)
    }

    /// The probe ran past its deadline.
    public static func timedOut(path: String, seconds: Double) -> Self {
        Self(.timedOut, path: path, detail: "gave up after \(seconds) s")
    }

    /// The probing task was cancelled (internal: callers see `CancellationError`).
    static func cancelled(path: String) -> Self { Self(.cancelled, path: path) }

    /// Any other read error.
    public static func readFailed(path: String, detail: String? = nil) -> Self {
        Self(.readFailed, path: path, detail: detail)
    }

    public var description: String {
        let headline: String
        switch code {
        case .fileNotFound: headline = "No such file: \(path)"
        case .permissionDenied: headline = "Permission denied: cannot read \(path)"
        case .notMedia: headline = "Not a media file: \(path) (no audio/video container format recognised)"
        case .corrupt: headline = "Truncated or corrupt media file: \(path)"
        case .noUsableStreams: headline = "No usable streams in \(path): no audio or video stream with a known codec"
        case .timedOut: headline = "Timed out probing \(path)"
        default: headline = "Could not read \(path)"
        }
        guard let detail, !detail.isEmpty else { return headline }
        return "\(headline): \(detail)"
    }
}
