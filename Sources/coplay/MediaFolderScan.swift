import Foundation
import MediaProbe

/// `--media-dir DIR`: finds the video files under folders (recursively) and identifies each, through
/// ``FingerprintCache`` so that a second start reads nothing but the listings.
///
/// Per file, cheapest first: the cache entry for the same path, size and modification time; else the
/// fingerprint (size and both 64 KiB ends) and a cache entry of another path with it (a moved
/// file); else a probe of the header plus the stream identity (the first and last video packets and
/// one seek: a few MB whatever the file's size, never the whole file). Entries of files no longer
/// under the folders are dropped.
struct MediaFolderScan {
    /// File name extensions taken for video (lower case).
    static let extensions: Set<String> = [
        "mp4", "m4v", "mov", "mkv", "webm", "avi", "ts", "m2ts", "mts", "mpg", "mpeg", "wmv", "flv", "ogv", "3gp",
    ]

    /// One usable file.
    struct Found: Sendable {
        var path: String
        var entry: FingerprintCache.Entry
    }

    /// What a scan found and how.
    struct Result: Sendable {
        var files: [Found] = []
        /// Files answered by the cache without reading them.
        var fromCache = 0
        /// Files recognised by their fingerprint from another path's entry.
        var moved = 0
        /// Files probed (header and stream identity).
        var probed = 0
        /// Files that are not playable video, by path, with the reason.
        var unusable: [(path: String, reason: String)] = []

        /// The line printed after a scan.
        func summary(_ directories: [String]) -> String {
            let count = files.count
            var line = "--media-dir \(directories.joined(separator: ", ")): \(count) video \(count == 1 ? "file" : "files")"
            line += " (\(fromCache) from the cache, \(moved) recognised after a move, \(probed) probed"
            if !unusable.isEmpty { line += ", \(unusable.count) not playable" }
            return line + ")"
        }
    }

    /// Why a folder cannot be scanned.
    struct FolderError: Error, CustomStringConvertible {
        var description: String
    }

    /// Checks that every folder exists and is a readable directory.
    static func check(_ directories: [String]) throws {
        for directory in directories {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory) else {
                throw FolderError(description: "--media-dir \(directory): no such folder")
            }
            guard isDirectory.boolValue else {
                throw FolderError(description: "--media-dir \(directory): not a folder (name media files on the command line or with --item)")
            }
            guard FileManager.default.isReadableFile(atPath: directory) else {
                throw FolderError(description: "--media-dir \(directory): not allowed to read this folder")
            }
        }
    }

    /// The video files under `directories`, sorted by path (hidden files and folders skipped).
    static func list(_ directories: [String]) -> [String] {
        var paths: [String] = []
        for directory in directories {
            let root = URL(fileURLWithPath: directory).standardizedFileURL
            guard let walker = FileManager.default.enumerator(
                at: root, includingPropertiesForKeys: [.isRegularFileKey], options: [.skipsHiddenFiles])
            else { continue }
            for case let url as URL in walker where extensions.contains(url.pathExtension.lowercased()) {
                if (try? url.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true { paths.append(url.path) }
            }
        }
        return Array(Set(paths)).sorted()
    }

    /// Identifies every video file under `directories`, updating and saving `cache`.
    ///
    /// - Parameter progress: called with a line for a person now and then on long scans (stderr).
    static func scan(
        _ directories: [String], cache: inout FingerprintCache, probe: MediaProbe = .shared,
        progress: (String) -> Void
    ) async throws -> Result {
        try check(directories)
        let paths = list(directories)
        var result = Result()
        var lastReport = ContinuousClock.now
        var changed = false
        for (index, path) in paths.enumerated() {
            try Task.checkCancellation()
            if ContinuousClock.now - lastReport > .seconds(2) {
                lastReport = .now
                progress("--media-dir: identified \(index) of \(paths.count) files (\(result.probed) probed so far)…")
            }
            var status = stat()
            guard stat(path, &status) == 0 else { continue }
            let size = Int64(status.st_size)
            let modified = Int64(status.st_mtim.tv_sec) * 1_000_000_000 + Int64(status.st_mtim.tv_nsec)
            var entry: FingerprintCache.Entry
            if let cached = cache.entry(for: path, size: size, modified: modified) {
                entry = cached
                result.fromCache += 1
            } else {
                changed = true
                let url = URL(fileURLWithPath: path)
                do {
                    let fingerprint = try await probe.fingerprint(of: url)
                    if var known = cache.entry(withFingerprint: "\(fingerprint)") {
                        known.size = size
                        known.modified = modified
                        entry = known
                        result.moved += 1
                    } else {
                        entry = try await identify(url, fingerprint: fingerprint, size: size, modified: modified, probe: probe)
                        result.probed += 1
                    }
                } catch let error as MediaProbeError {
                    entry = FingerprintCache.Entry(size: size, modified: modified, fingerprint: "-", unusable: "\(error)")
                    result.probed += 1
                }
                cache.set(entry, for: path)
            }
            if let reason = entry.unusable {
                result.unusable.append((path, reason))
            } else {
                result.files.append(Found(path: path, entry: entry))
            }
        }
        if cache.forget(under: directories, except: Set(paths)) { changed = true }
        if changed {
            do { try cache.save() } catch { progress("cannot write the fingerprint cache \(cache.url.path): \(error)") }
        }
        return result
    }

    /// Probes one file's header and stream identity.
    private static func identify(
        _ url: URL, fingerprint: ContentFingerprint, size: Int64, modified: Int64, probe: MediaProbe
    ) async throws -> FingerprintCache.Entry {
        var entry = FingerprintCache.Entry(size: size, modified: modified, fingerprint: "\(fingerprint)")
        let info = try await probe.probe(url, options: .init(streamIdentity: true))
        guard let video = info.primaryVideoStream, let identity = info.streamIdentity else {
            entry.unusable = "\(url.path) has no video stream"
            return entry
        }
        entry.identity = "\(identity)"
        let duration = video.duration?.seconds ?? info.duration?.seconds
        entry.duration = duration
        let rate = video.averageFrameRate.denominator != 0 && video.averageFrameRate.numerator > 0
            ? video.averageFrameRate : video.realFrameRate
        if rate.denominator != 0, rate.numerator > 0, let duration, duration > 0 {
            let interval = Double(rate.denominator) / Double(rate.numerator)
            entry.gridInterval = interval
            entry.gridStart = video.startTime?.seconds ?? info.startTime?.seconds ?? 0
            entry.gridCount = video.headerFrameCount ?? max(1, Int((duration / interval).rounded()))
        }
        return entry
    }
}
