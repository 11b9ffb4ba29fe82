/// One entry of the group's play queue: an item (by fingerprint) with what people see of it.
///
/// The same file may be queued twice: entries are told apart by ``id``, which the member that adds
/// the entry chooses (``PlayQueue/entryID(participant:sentAt:index:)``), never by the item.
public struct QueueEntry: Hashable, Sendable, Codable {
    /// The entry's stable identifier: edits name entries by it.
    public var id: String
    /// The item's identifier (its fingerprint): each member plays its own copy of it.
    public var item: String
    /// The file fingerprint (`v2:SIZE:DIGEST`) of the adding member's copy, when ``item`` is another
    /// identity (a stream identity, `v3:…`): members that cannot compute that identity (browsers)
    /// find their copy of the entry by it.
    public var fingerprint: String?
    /// The title people see (the file's name when nothing better is known).
    public var title: String
    /// The item's duration in seconds, when the member that added it knew it.
    public var duration: Double?
    /// The item's video frame rate, when known.
    public var frameRate: Double?
    /// The member that added the entry.
    public var addedBy: PlaybackParticipantID
    /// The display name of the member that added the entry, when it had one: people see who added
    /// an entry after that member left (`coplay control … queue add` leaves right away).
    public var addedByName: String?

    /// Creates an entry.
    public init(
        id: String, item: String, fingerprint: String? = nil, title: String, duration: Double? = nil, frameRate: Double? = nil,
        addedBy: PlaybackParticipantID, addedByName: String? = nil
    ) {
        self.id = id
        self.item = item
        self.fingerprint = fingerprint
        self.title = title
        self.duration = duration
        self.frameRate = frameRate
        self.addedBy = addedBy
        self.addedByName = addedByName
    }

    /// Who added the entry, for people: the name it announced, else its participant id.
    public var addedByLabel: String { addedByName ?? addedBy.rawValue }
}

/// An item as a member queues it: a ``QueueEntry`` before it has an id and an author.
public struct QueueItem: Hashable, Sendable {
    /// The item's identifier (its fingerprint).
    public var item: String
    /// The file fingerprint (`v2:…`) when ``item`` is another identity (``QueueEntry/fingerprint``).
    public var fingerprint: String?
    /// The title people see.
    public var title: String
    /// The duration in seconds, if known.
    public var duration: Double?
    /// The video frame rate, if known.
    public var frameRate: Double?

    /// Creates an item to queue.
    public init(item: String, fingerprint: String? = nil, title: String, duration: Double? = nil, frameRate: Double? = nil) {
        self.item = item
        self.fingerprint = fingerprint
        self.title = title
        self.duration = duration
        self.frameRate = frameRate
    }
}

/// What the group plays when an entry ends.
public enum RepeatMode: String, Hashable, Sendable, Codable, CaseIterable {
    /// The next entry in play order; nothing after the last.
    case off
    /// The same entry again.
    case one
    /// The next entry; the first after the last.
    case all
}

/// Where an edit puts entries, named by entry ids so that concurrent edits mean what their authors
/// meant: an anchor someone else removed first makes the edit fall back as documented per case.
public enum QueuePosition: Hashable, Sendable {
    /// At the end of the list.
    case end
    /// At the start of the list.
    case start
    /// Right after the entry with this id (an add after a removed entry goes to the end; a move
    /// after a removed entry changes nothing).
    case after(String)
}

/// A change to the group's queue. Members apply edits in the channel's order, so every member's
/// queue goes through the same states; an edit that names an entry no longer there changes nothing
/// for that entry (moving an entry someone else just removed never moves another one).
public enum QueueEdit: Hashable, Sendable {
    /// Adds entries, in this order, at `position`. An entry whose id is already queued is skipped.
    case add([QueueEntry], at: QueuePosition)
    /// Removes the entries with these ids (ids not queued are ignored).
    case remove([String])
    /// Moves the entry with this id to `position` in the list.
    case move(String, to: QueuePosition)
    /// Removes every entry.
    case clear
    /// Sets what happens at the end of an entry.
    case repeatMode(RepeatMode)
    /// Plays the entries in one shuffled order derived from `seed` (every member derives the same
    /// order, entries added later included), or in list order again with `nil`.
    case shuffle(seed: UInt32?)
}

/// The group's play queue: entries in list order, the repeat mode and the shuffle, and what plays
/// after each entry.
///
/// A pure value: ``apply(_:playing:)`` is deterministic, so members that apply the same edits in
/// the same order hold equal queues. Positions people type (`coplay control ... jump 3`) are
/// 1-based positions in ``playOrder``, which is the list order unless the queue is shuffled.
///
/// ```swift
/// var queue = PlayQueue()
/// queue.apply(.add([a, b, c], at: .end))
/// queue.apply(.repeatMode(.all))
/// queue.entryAfterEnd(of: c.id)?.id   // a.id: repeat all wraps around
/// ```
public struct PlayQueue: Hashable, Sendable, Codable {
    /// The entries in list order.
    public private(set) var entries: [QueueEntry] = []
    /// What happens at the end of an entry.
    public private(set) var repeatMode: RepeatMode = .off
    /// The shuffle's seed, or `nil` when the queue plays in list order.
    public private(set) var shuffleSeed: UInt32?
    /// The entry that played when it was removed, and the entry that followed it in play order
    /// then: the group continues there when the removed entry ends.
    public private(set) var removedPlaying: RemovedEntry?

    /// A playing entry that was removed, and where the queue continues after it.
    public struct RemovedEntry: Hashable, Sendable, Codable {
        /// The removed entry's id.
        public var id: String
        /// The id of the entry that followed it in play order when it was removed.
        public var successor: String?
    }

    /// An empty queue.
    public init() {}

    /// A queue with these contents (a snapshot received from another member).
    public init(entries: [QueueEntry], repeatMode: RepeatMode, shuffleSeed: UInt32?, removedPlaying: RemovedEntry? = nil) {
        self.entries = entries
        self.repeatMode = repeatMode
        self.shuffleSeed = shuffleSeed
        self.removedPlaying = removedPlaying
    }

    /// An entry id unique in the session: the adding member, the reference time it sent the edit
    /// at (nanoseconds) and the entry's index in that edit.
    public static func entryID(participant: PlaybackParticipantID, sentAt: ReferenceTime, index: Int) -> String {
        "\(participant.rawValue).\(sentAt.nanoseconds).\(index)"
    }

    /// Whether the queue has no entries.
    public var isEmpty: Bool { entries.isEmpty }

    /// The entry with this id, if queued.
    public func entry(_ id: String) -> QueueEntry? {
        entries.first { $0.id == id }
    }

    /// The entries in the order the group plays them: the list order, or the shuffled order.
    public var playOrder: [QueueEntry] {
        guard let seed = shuffleSeed else { return entries }
        return entries.enumerated()
            .map { (key: Self.shuffleKey(seed: seed, id: $0.element.id), index: $0.offset, entry: $0.element) }
            .sorted { ($0.key, $0.index) < ($1.key, $1.index) }
            .map(\.entry)
    }

    /// The 1-based position of an entry in ``playOrder``.
    public func position(of id: String) -> Int? {
        playOrder.firstIndex { $0.id == id }.map { $0 + 1 }
    }

    /// The entry at a 1-based position of ``playOrder``.
    public func entry(atPosition position: Int) -> QueueEntry? {
        let order = playOrder
        return order.indices.contains(position - 1) ? order[position - 1] : nil
    }

    /// The shuffle's sort key of an entry: 32-bit FNV-1a over the UTF-8 of `"<seed>:<id>"` (the
    /// page computes the same; equal keys keep list order).
    static func shuffleKey(seed: UInt32, id: String) -> UInt32 {
        var hash: UInt32 = 0x811C_9DC5
        for byte in "\(seed):\(id)".utf8 {
            hash ^= UInt32(byte)
            hash = hash &* 0x0100_0193
        }
        return hash
    }

    // MARK: What plays next

    /// What the group plays when entry `id` reaches its end, by the repeat mode: the same entry
    /// (`one`), the next in play order, the first after the last (`all`), or nothing.
    public func entryAfterEnd(of id: String) -> QueueEntry? {
        if repeatMode == .one, let same = entry(id) { return same }
        return following(id, wrapping: repeatMode == .all)
    }

    /// The entry a `next` command moves to: the next in play order, the first after the last when
    /// the queue repeats (`all`), otherwise nothing after the last.
    public func entryForNext(from id: String?) -> QueueEntry? {
        guard let id else { return playOrder.first }
        return following(id, wrapping: repeatMode == .all)
    }

    /// The entry a `previous` command moves to: the previous in play order, the last before the
    /// first when the queue repeats (`all`), otherwise nothing before the first.
    public func entryForPrevious(from id: String?) -> QueueEntry? {
        let order = playOrder
        guard let id, let index = order.firstIndex(where: { $0.id == id }) else { return order.last }
        if index > 0 { return order[index - 1] }
        return repeatMode == .all ? order.last : nil
    }

    private func following(_ id: String, wrapping: Bool) -> QueueEntry? {
        let order = playOrder
        if let index = order.firstIndex(where: { $0.id == id }) {
            if index + 1 < order.count { return order[index + 1] }
            return wrapping ? order.first : nil
        }
        // The entry was removed while it played: continue where it was.
        if let removed = removedPlaying, removed.id == id {
            if let successor = removed.successor, let next = entry(successor) { return next }
            return wrapping ? order.first : nil
        }
        return wrapping ? order.first : nil
    }

    // MARK: Edits

    /// Applies an edit. `playing` is the entry the group plays at this point of the channel's
    /// order: removing it records where the queue continues after it.
    public mutating func apply(_ edit: QueueEdit, playing: String? = nil) {
        switch edit {
        case .add(let added, let position):
            var fresh: [QueueEntry] = []
            for candidate in added where entry(candidate.id) == nil && !fresh.contains(where: { $0.id == candidate.id }) {
                fresh.append(candidate)
            }
            entries.insert(contentsOf: fresh, at: insertionIndex(position, fallback: entries.count))
        case .remove(let ids):
            let removing = Set(ids)
            if let playing, removing.contains(playing), entry(playing) != nil {
                let order = playOrder
                let index = order.firstIndex { $0.id == playing }!
                let successor = order[(index + 1)...].first { !removing.contains($0.id) }?.id
                removedPlaying = RemovedEntry(id: playing, successor: successor)
            }
            entries.removeAll { removing.contains($0.id) }
        case .move(let id, let position):
            guard let from = entries.firstIndex(where: { $0.id == id }) else { return }
            if case .after(let anchor) = position, anchor == id || entry(anchor) == nil { return }
            let moving = entries.remove(at: from)
            entries.insert(moving, at: insertionIndex(position, fallback: entries.count))
        case .clear:
            if let playing, entry(playing) != nil { removedPlaying = RemovedEntry(id: playing, successor: nil) }
            entries.removeAll()
        case .repeatMode(let mode):
            repeatMode = mode
        case .shuffle(let seed):
            shuffleSeed = seed
        }
    }

    private func insertionIndex(_ position: QueuePosition, fallback: Int) -> Int {
        switch position {
        case .end: entries.count
        case .start: 0
        case .after(let anchor): entries.firstIndex { $0.id == anchor }.map { $0 + 1 } ?? fallback
        }
    }
}
