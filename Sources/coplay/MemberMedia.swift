import Foundation
import MediaProbe
import PlaybackCoordinator

/// A member's own copies of media and how they answer the session's item.
///
/// Copies come from the files named on the command line (FILE, `--item`; probed in full: exact frame
/// times) and from `--media-dir` folders (``MediaFolderScan``: identity and a frame grid from the
/// header, cached; probed in full only when the member plays one). Every copy is an item the member
/// can present, named by its stream identity (`v3:…`) and, for `coplay control item` with an older
/// fingerprint, by its file fingerprint (`v2:…`) too.
///
/// The session's item is answered, in order, by a copy with its stream identity or its file
/// fingerprint (frame-identical: the same video packets, whatever the container); else, unless the
/// host asked for exact copies, by a file named on the command line whose duration is within
/// ``nearTolerance`` of the item's (a *near copy*: another encode, aligned by timestamp, not
/// frame-identical). Folder files are never taken as near copies: a folder of episodes holds many
/// files of about the same length.
struct MemberMedia: Sendable {
    /// The largest difference between a near copy's duration and the item's, in seconds. Two encodes of
    /// one source differ by a frame or two and by their containers' rounding (tens of milliseconds); a
    /// different cut, a PAL speed-up (4 %) or a 24 vs 23.976 fps conversion (7 s in 2 h) differs by far more.
    static let nearTolerance = 0.5

    /// One copy.
    struct Copy: Sendable {
        var path: String
        /// Named by the stream identity (or the fingerprint when there is none).
        var timeline: MediaTimeline
        /// `v2:…`.
        var fingerprint: String
        /// Named on the command line (FILE, --item), not found in a --media-dir folder.
        var named: Bool
        /// Frame times from a full packet scan (not the header's grid).
        var exactFrames: Bool
    }

    var copies: [Copy] = []

    /// How the session's item is answered.
    enum Resolution: Sendable {
        /// The same video packets (or the same bytes).
        case identical(Copy)
        /// Another encode whose duration differs by `difference` seconds (at most ``nearTolerance``).
        case near(Copy, difference: Double)

        var copy: Copy {
            switch self {
            case .identical(let copy), .near(let copy, _): copy
            }
        }
    }

    /// Probes a file named on the command line (every packet: exact frame times, and its identity).
    static func named(_ path: String) async throws -> Copy {
        let (timeline, info) = try await PlaybackMember.loadMedia(path)
        return Copy(path: path, timeline: timeline, fingerprint: "\(info.fingerprint)", named: true, exactFrames: true)
    }

    /// The copies a folder scan found (frames on the header's grid until one is played).
    static func found(_ result: MediaFolderScan.Result) -> [Copy] {
        result.files.compactMap { found in
            let entry = found.entry
            guard let identity = entry.identity, let duration = entry.duration else { return nil }
            let frames: MediaTimeline.Frames
            if let start = entry.gridStart, let interval = entry.gridInterval, let count = entry.gridCount, interval > 0, count > 0 {
                frames = .grid(start: start, interval: interval, count: count)
            } else {
                frames = .grid(start: 0, interval: 1.0 / 25, count: max(1, Int(duration * 25)))
            }
            return Copy(
                path: found.path, timeline: MediaTimeline(identifier: identity, duration: duration, frames: frames),
                fingerprint: entry.fingerprint, named: false, exactFrames: false)
        }
    }

    /// The copy that plays the session's item, if any.
    func resolve(_ activity: WatchTogetherActivity) -> Resolution? {
        let sessionBytes = ContentFingerprint(activity.fingerprint)
        if let same = copies.first(where: {
            $0.timeline.identifier == activity.item || (sessionBytes != nil && ContentFingerprint($0.fingerprint) == sessionBytes)
        }) {
            return .identical(same)
        }
        guard activity.exactCopies != true, let duration = activity.duration else { return nil }
        let near = copies.filter(\.named).map { ($0, abs($0.timeline.duration - duration)) }
            .filter { $0.1 <= Self.nearTolerance }
            .min { $0.1 < $1.1 }
        return near.map { .near($0.0, difference: $0.1) }
    }

    /// Whether a file named on the command line has the session's duration, the host refusing near copies.
    func refusedNearCopy(_ activity: WatchTogetherActivity) -> Copy? {
        guard activity.exactCopies == true, let duration = activity.duration else { return nil }
        return copies.first { $0.named && abs($0.timeline.duration - duration) <= Self.nearTolerance }
    }

    /// The items a member plays: the session's item first (from `resolution`'s copy, named as the
    /// session names it and moved so that its first frame is where the host's is), then every copy
    /// under its stream identity and its fingerprint. Folder copies the member plays are probed in full.
    func items(
        for activity: WatchTogetherActivity, resolution: Resolution
    ) async throws -> [(timeline: MediaTimeline, path: String)] {
        var first = resolution.copy
        if !first.exactFrames { first = try await Self.named(first.path) }
        var loaded = first.timeline
        loaded.identifier = activity.item
        if let start = activity.firstFrameTime {
            loaded = loaded.shifted(by: start - loaded.presentationTime(ofFrame: 0))
        }
        var items: [(timeline: MediaTimeline, path: String)] = [(loaded, first.path)]
        for copy in copies {
            let timeline = copy.path == first.path ? first.timeline : copy.timeline
            items.append((timeline, copy.path))
            if ContentFingerprint(copy.fingerprint) != nil, copy.fingerprint != timeline.identifier {
                var alias = timeline
                alias.identifier = copy.fingerprint
                items.append((alias, copy.path))
            }
        }
        var seen: Set<String> = []
        return items.filter { seen.insert($0.timeline.identifier).inserted }
    }

    /// Every copy as an item (the host's, whose first copy is the session's item).
    var allItems: [(timeline: MediaTimeline, path: String)] {
        var items: [(timeline: MediaTimeline, path: String)] = []
        for copy in copies {
            items.append((copy.timeline, copy.path))
            if ContentFingerprint(copy.fingerprint) != nil, copy.fingerprint != copy.timeline.identifier {
                var alias = copy.timeline
                alias.identifier = copy.fingerprint
                items.append((alias, copy.path))
            }
        }
        var seen: Set<String> = []
        return items.filter { seen.insert($0.timeline.identifier).inserted }
    }
}

extension MediaTimeline {
    /// The same frames `delta` seconds later (earlier when negative).
    func shifted(by delta: Double) -> MediaTimeline {
        guard delta != 0, delta.isFinite else { return self }
        let moved: Frames = switch frames {
        case .grid(let start, let interval, let count): .grid(start: start + delta, interval: interval, count: count)
        case .exact(let times): .exact(times.map { $0 + delta })
        }
        return MediaTimeline(identifier: identifier, duration: max(0, duration + delta), frames: moved)
    }
}
