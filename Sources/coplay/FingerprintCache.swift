import Foundation
import MediaProbe

/// What `--media-dir` learned about each media file, kept on disk so that a second start reads nothing
/// but the folders' listings: `$XDG_CACHE_HOME/coplay/fingerprints.json` (`~/.cache/coplay/…` without
/// it). An entry is valid while the file has the same path, size and modification time; a file that
/// moved or was touched is recognised by its fingerprint (size and both ends), so its stream
/// identity is not read again.
struct FingerprintCache: Sendable {
    /// One file.
    struct Entry: Codable, Sendable, Hashable {
        var size: Int64
        /// Modification time, nanoseconds since 1970.
        var modified: Int64
        /// The file's bytes (size, first and last 64 KiB): `v2:…`.
        var fingerprint: String
        /// The video stream's identity, `v3:…`; `nil` for a file that is not playable video.
        var identity: String?
        /// Seconds.
        var duration: Double?
        /// The frame grid read from the header (first frame, interval, count), for files on a constant rate.
        var gridStart: Double?
        var gridInterval: Double?
        var gridCount: Int?
        /// Why the file cannot be played (not media, no video), so it is not probed again.
        var unusable: String?
    }

    /// The file's layout.
    private struct Document: Codable {
        var version: Int
        var entries: [String: Entry]
    }

    let url: URL
    private(set) var entries: [String: Entry]

    /// The cache file: `$XDG_CACHE_HOME/coplay/fingerprints.json`, else `$HOME/.cache/coplay/fingerprints.json`.
    static func defaultURL(environment: [String: String] = ProcessInfo.processInfo.environment) -> URL {
        let base: URL
        if let xdg = environment["XDG_CACHE_HOME"], xdg.hasPrefix("/") {
            base = URL(fileURLWithPath: xdg)
        } else {
            let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
            base = URL(fileURLWithPath: home).appendingPathComponent(".cache")
        }
        return base.appendingPathComponent("coplay").appendingPathComponent("fingerprints.json")
    }

    /// Reads the cache (an absent or unreadable file is an empty cache: it is only a cache).
    init(url: URL = FingerprintCache.defaultURL()) {
        self.url = url
        if let data = try? Data(contentsOf: url), let document = try? JSONDecoder().decode(Document.self, from: data),
            document.version == 1
        {
            entries = document.entries
        } else {
            entries = [:]
        }
    }

    /// The entry for `path` if it still describes the file (same size and modification time).
    func entry(for path: String, size: Int64, modified: Int64) -> Entry? {
        guard let entry = entries[path], entry.size == size, entry.modified == modified else { return nil }
        return entry
    }

    /// An entry of another path with this fingerprint (the file was moved, copied or touched).
    func entry(withFingerprint fingerprint: String) -> Entry? {
        entries.values.first { $0.fingerprint == fingerprint }
    }

    mutating func set(_ entry: Entry, for path: String) {
        entries[path] = entry
    }

    /// Forgets the entries of files under `folders` that are not in `present` (deleted or moved away);
    /// returns whether any was forgotten.
    mutating func forget(under folders: [String], except present: Set<String>) -> Bool {
        let roots = folders.map { URL(fileURLWithPath: $0).standardizedFileURL.path + "/" }
        let gone = entries.keys.filter { path in !present.contains(path) && roots.contains { path.hasPrefix($0) } }
        for path in gone { entries[path] = nil }
        return !gone.isEmpty
    }

    /// Writes the cache (a temporary file renamed over the old one). Failing to write is not an error
    /// for the member: the next start probes again.
    func save() throws {
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let data = try encoder.encode(Document(version: 1, entries: entries))
        let temporary = url.deletingLastPathComponent().appendingPathComponent(".fingerprints-\(getpid()).json")
        try data.write(to: temporary)
        guard rename(temporary.path, url.path) == 0 else {
            let code = errno
            try? FileManager.default.removeItem(at: temporary)
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: url.path, NSUnderlyingErrorKey: POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO)])
        }
    }
}
