import Foundation
import NIOCore
import WebClient

/// The browser client's files (HTML, CSS, JavaScript modules), read once when the relay starts and
/// served from memory.
///
/// Only the regular files found in the directory at start-up are ever served: a request names
/// one of them or gets 404, so no request can reach anything else on disk. The directory is,
/// in order: the one given (`coplay serve --web-root`), else the copy SwiftPM places next to the
/// `coplay` binary (the `WebClient` target's resources), else the source tree's `Web/static`.
public struct WebClientFiles: Sendable {
    /// One servable file.
    struct File: Sendable {
        var body: ByteBuffer
        var contentType: String
        var etag: String
    }

    /// Where the files were read from.
    public let directory: String
    let files: [String: File]

    /// The number of files served.
    public var count: Int { files.count }

    /// Reads every regular file under `directory` (subdirectories included, hidden files skipped).
    ///
    /// - Throws: When the directory cannot be listed or holds no `index.html`.
    public init(directory: String) throws {
        let root = URL(fileURLWithPath: directory).standardizedFileURL
        var files: [String: File] = [:]
        guard let walker = FileManager.default.enumerator(
            at: root, includingPropertiesForKeys: [.isRegularFileKey], options: [.skipsHiddenFiles])
        else { throw WebClientFilesError.unreadable(directory) }
        for case let url as URL in walker {
            guard (try? url.resourceValues(forKeys: [.isRegularFileKey]))?.isRegularFile == true else { continue }
            let relative = String(url.standardizedFileURL.path.dropFirst(root.path.count))
            let data = try Data(contentsOf: url)
            var hasher = Hasher()
            hasher.combine(data)
            files[relative] = File(
                body: ByteBuffer(bytes: data), contentType: Self.contentType(of: relative),
                etag: "\"\(String(UInt(bitPattern: hasher.finalize()), radix: 16))-\(data.count)\"")
        }
        guard files["/index.html"] != nil else { throw WebClientFilesError.noIndex(directory) }
        self.directory = root.path
        self.files = files
    }

    /// The file a request path names (`/` is `/index.html`; the query is ignored), or `nil`.
    func file(for target: String) -> File? {
        var path = String(target.prefix { $0 != "?" && $0 != "#" })
        if path == "/" { path = "/index.html" }
        return files[path]
    }

    static func contentType(of path: String) -> String {
        switch path.split(separator: ".").last.map({ $0.lowercased() }) {
        case "html": "text/html; charset=utf-8"
        case "js", "mjs": "text/javascript; charset=utf-8"
        case "css": "text/css; charset=utf-8"
        case "json": "application/json"
        case "svg": "image/svg+xml"
        case "png": "image/png"
        case "ico": "image/x-icon"
        case "webm": "video/webm"
        case "mp4": "video/mp4"
        case "txt", "md": "text/plain; charset=utf-8"
        default: "application/octet-stream"
        }
    }

    /// The directory to serve when none is given (`WebClient.staticDirectory()`).
    public static func defaultDirectory() -> String? {
        WebClient.staticDirectory()
    }
}

/// Why the web client's files could not be loaded.
public enum WebClientFilesError: Error, CustomStringConvertible {
    /// The directory cannot be listed.
    case unreadable(String)
    /// The directory has no `index.html`.
    case noIndex(String)

    public var description: String {
        switch self {
        case .unreadable(let directory): "cannot read the web client's directory \(directory)"
        case .noIndex(let directory): "\(directory) holds no index.html (is it the web client's static directory?)"
        }
    }
}
