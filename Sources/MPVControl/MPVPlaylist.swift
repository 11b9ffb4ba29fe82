import PlaybackCoordinator

/// mpv's own playlist as the group's queue: the entries this member has a copy of, in the group's
/// play order, titled as the queue titles them (what mpv shows on `F8`, `show-text ${playlist}`
/// and its on-screen controller). Sans-IO: ``MPVPlayer`` reads mpv's `playlist`, asks
/// ``steps(current:playing:)`` what to run when it differs, and plays an entry by its index.
///
/// Titles reach mpv through an M3U playlist loaded from memory (`loadlist memory://… append`,
/// `#EXTINF` lines): mpv 0.35 keeps a playlist entry's title only from a playlist file (a
/// `loadfile` option such as `force-media-title` titles the playing file, not the entry).
///
/// The entry mpv plays is never reloaded to update the list: `playlist-clear` keeps it, the others
/// are appended, and `playlist-move` puts it back at its place. A playing file that is not (or no
/// longer) one of the group's entries stays first, untitled by coplay.
///
/// ```swift
/// let shown = MPVPlaylist(queue: queue, paths: ["v3:…": "/films/a.mkv"])
/// if !shown.isShown(by: MPVOpen.entries(try await mpv.get("playlist").data), workingDirectory: cwd) {
///     for step in shown.steps(current: playingFile) { try await mpv.run(step) }
/// }
/// ```
public struct MPVPlaylist: Sendable, Hashable {
    /// One line of the playlist: a queue entry and this member's file for it.
    public struct Entry: Sendable, Hashable {
        /// The queue entry's id.
        public var entry: String
        /// The queue entry's item (its fingerprint).
        public var item: String
        /// This member's file for it (absolute).
        public var path: String
        /// The title people see.
        public var title: String

        public init(entry: String, item: String, path: String, title: String) {
            self.entry = entry
            self.item = item
            self.path = path
            self.title = title
        }
    }

    /// The group's entries this member can play, in play order.
    public var entries: [Entry]

    /// The entries of `queue` this member has a file for (`paths`: item identifier to file), in play order.
    public init(queue: PlayQueue, paths: [String: String]) {
        // A path with a line break cannot be named in M3U: that entry is left out.
        entries = queue.playOrder.compactMap { entry in
            paths[entry.item].flatMap { path in
                path.contains(where: \.isNewline)
                    ? nil : Entry(entry: entry.id, item: entry.item, path: MPVOpen.normalized(path, in: nil), title: entry.title)
            }
        }
    }

    /// The entries of `queue` this member has a file for, `paths` (item identifier to file) already
    /// absolute and standardized (``MPVOpen``'s normalization): nothing is normalized again, so
    /// rebuilding the list of a 1,000-entry queue costs no file-system path work.
    init(queue: PlayQueue, normalizedPaths paths: [String: String]) {
        entries = queue.playOrder.compactMap { entry in
            paths[entry.item].flatMap { path in
                path.contains(where: \.isNewline) ? nil : Entry(entry: entry.id, item: entry.item, path: path, title: entry.title)
            }
        }
    }

    /// A playlist of these entries.
    public init(entries: [Entry]) {
        self.entries = entries
    }

    /// The entry ids in mpv's playlist order once ``steps(current:playing:)`` ran (`nil` for a playing file
    /// that is none of the group's entries, kept first).
    public func shown(current: String?) -> [String?] {
        guard let current else { return entries.map(\.entry) }
        let path = MPVOpen.normalized(current, in: nil)
        if entries.contains(where: { $0.path == path }) { return entries.map(\.entry) }
        return [nil] + entries.map(\.entry)
    }

    /// Whether mpv's playlist already shows these entries: the same files with the same titles in
    /// the same order (the playing entry's title aside: it may be the person's own, untitled entry),
    /// with at most a foreign playing file first.
    ///
    /// - Parameters:
    ///   - playlist: mpv's `playlist` (``MPVOpen/entries(_:)``).
    ///   - workingDirectory: mpv's `working-directory`, against which its relative names resolve.
    public func isShown(by playlist: [MPVOpen.Entry], workingDirectory: String?) -> Bool {
        var rest = playlist[...]
        if let first = rest.first, first.current,
            !entries.contains(where: { $0.path == MPVOpen.normalized(first.filename, in: workingDirectory) })
        {
            rest = rest.dropFirst()
        }
        guard rest.count == entries.count else { return false }
        return zip(rest, entries).allSatisfy { shown, entry in
            MPVOpen.normalized(shown.filename, in: workingDirectory) == entry.path && (shown.current || shown.title == entry.title)
        }
    }

    /// The commands that make mpv's playlist show the entries, keeping the file mpv plays.
    ///
    /// - Parameters:
    ///   - current: the playing file, absolute (`nil`: nothing plays).
    ///   - playing: the entry the group plays, when it is one of ours: the playing file takes its place
    ///     (the same file may be queued twice).
    public func steps(current: String?, playing: String? = nil) -> [[any Sendable]] {
        guard let current else {
            var steps: [[any Sendable]] = [["playlist-clear"]]
            if !entries.isEmpty { steps.append(["loadlist", Self.m3u(entries[...]), "append"]) }
            return steps
        }
        let path = MPVOpen.normalized(current, in: nil)
        let candidates = entries.indices.filter { entries[$0].path == path }
        guard let place = candidates.first(where: { entries[$0].entry == playing }) ?? candidates.first else {
            // Not one of the group's entries: it stays first, the group's follow.
            var steps: [[any Sendable]] = [["playlist-clear"]]
            if !entries.isEmpty { steps.append(["loadlist", Self.m3u(entries[...]), "append"]) }
            return steps
        }
        var others = entries
        others.remove(at: place)
        var steps: [[any Sendable]] = [["playlist-clear"]]
        if !others.isEmpty {
            steps.append(["loadlist", Self.m3u(others[...]), "append"])
            // [current, e0 … e(place-1), e(place+1) …]: moving the current entry before the entry at
            // index place+1 puts it at index place (the number of entries moves it to the end).
            if place > 0 { steps.append(["playlist-move", 0, place + 1]) }
        }
        return steps
    }

    /// mpv's index of the line that plays `item` once the list is shown: the line of `entry` (the
    /// entry the group plays) when it is `item`'s, else the first line with `item`; nil when no
    /// line has it. Linear in the playlist's length: it runs between pausing the entry on screen
    /// and opening the next one.
    ///
    /// - Parameters:
    ///   - item: the item identifier to play.
    ///   - entry: the queue entry the group plays, if known.
    ///   - shown: the entry ids in mpv's playlist order (``shown(current:)``).
    public func playIndex(of item: String, preferring entry: String?, in shown: [String?]) -> Int? {
        let ids = Set(entries.lazy.filter { $0.item == item }.map(\.entry))
        if let entry, ids.contains(entry), let index = shown.firstIndex(of: entry) { return index }
        return shown.firstIndex { $0.map(ids.contains) ?? false }
    }

    /// mpv's index of `entry` once the list is shown (see ``shown(current:)``).
    public func index(of entry: String, current: String?) -> Int? {
        shown(current: current).firstIndex(of: entry)
    }

    /// An M3U playlist of `entries` as a `memory://` URL (titles on `#EXTINF` lines; line breaks in
    /// titles become spaces).
    public static func m3u(_ entries: ArraySlice<Entry>) -> String {
        var text = "memory://#EXTM3U\n"
        for entry in entries {
            let title = String(entry.title.map { $0.isNewline ? " " : $0 })
            text += "#EXTINF:-1,\(title)\n\(entry.path)\n"
        }
        return text
    }
}
