import ArgumentParser
import PlaybackCoordinator

/// A change of the group's queue as `coplay control INVITE queue …` words it, with positions as
/// `coplay queue` prints them (1-based, in play order).
///
/// Positions are turned into entry ids (``edits(in:playing:adding:)``) from the queue this member
/// received, and the edits name those ids: an edit someone else made in between cannot make a
/// `remove 2` remove another entry than the one that was second (at worst it removes nothing,
/// because that entry is gone already).
enum QueueChange: Equatable, Sendable {
    /// Queue these files at the end, or right after the playing entry (`--next`).
    case add(files: [String], next: Bool)
    /// Remove the entries at these positions.
    case remove(positions: [Int])
    /// Move the entry at `from` so that it is at position `to`.
    case move(from: Int, to: Int)
    /// Remove every entry.
    case clear

    /// The verbs, as people type them.
    static let verbs = ["add", "remove", "move", "clear"]

    /// Reads `queue add FILE… | remove N… | move N M | clear` (the words after `queue`).
    ///
    /// - Throws: `ValidationError` naming what is wrong and the right form.
    init(words: [String], next: Bool) throws {
        guard let verb = words.first else {
            throw ValidationError("queue needs what to do: add FILE… [--next], remove N, move N M or clear")
        }
        let rest = Array(words.dropFirst())
        if next && verb != "add" { throw ValidationError("--next applies to queue add only") }
        func position(_ word: String, _ what: String) throws -> Int {
            guard let position = Int(word), position >= 1 else {
                throw ValidationError("queue \(verb): \(what) is a position, 1 or more, as `coplay queue` prints it (got '\(word)')")
            }
            return position
        }
        switch verb {
        case "add":
            guard !rest.isEmpty else { throw ValidationError("queue add needs one or more media files, e.g. queue add episode-2.mkv") }
            self = .add(files: rest, next: next)
        case "remove":
            guard !rest.isEmpty else { throw ValidationError("queue remove needs the position of an entry, as `coplay queue` prints it, e.g. queue remove 2") }
            self = .remove(positions: try rest.map { try position($0, "N") })
        case "move":
            guard rest.count == 2 else {
                throw ValidationError("queue move needs two positions, the entry's and where it goes, e.g. queue move 5 1 (got \(rest.count))")
            }
            self = .move(from: try position(rest[0], "N"), to: try position(rest[1], "M"))
        case "clear":
            guard rest.isEmpty else { throw ValidationError("queue clear takes nothing more (got '\(rest[0])')") }
            self = .clear
        default:
            throw ValidationError("unknown queue command '\(verb)': coplay control knows queue \(Self.verbs.joined(separator: ", "))")
        }
    }

    /// The verb, as typed.
    var verb: String {
        switch self {
        case .add: "add"
        case .remove: "remove"
        case .move: "move"
        case .clear: "clear"
        }
    }

    /// What the change did, for a person: `before` is the queue it was worked out on, `after` the
    /// queue once the relay ordered its edits (other members' edits may be in it too).
    func outcome(before: PlayQueue, after: PlayQueue, added: [QueueEntry]) -> String {
        func titles(_ entries: [QueueEntry]) -> String {
            entries.prefix(3).map { "\u{201C}\($0.title)\u{201D}" }.joined(separator: ", ") + (entries.count > 3 ? ", …" : "")
        }
        let count = after.entries.count
        let size = "the queue has \(count) \(count == 1 ? "entry" : "entries")"
        switch self {
        case .add:
            let positions = added.compactMap { after.position(of: $0.id) }
            let place = positions.isEmpty
                ? "none is queued any more"
                : positions.count == 1 ? "at position \(positions[0])" : "at positions \(positions.min()!)-\(positions.max()!)"
            return "added \(added.count) (\(titles(added))) \(place); \(size)"
        case .remove(let positions):
            let removed = positions.compactMap { before.entry(atPosition: $0) }
            return "removed \(titles(removed)); \(size)"
        case .move(let from, _):
            guard let moved = before.entry(atPosition: from) else { return size }
            let now = after.position(of: moved.id).map { "is now entry \($0)" } ?? "is no longer queued"
            return "\u{201C}\(moved.title)\u{201D} \(now); \(size)"
        case .clear:
            return count == 0 ? "the queue is empty" : "cleared; \(size) (added since)"
        }
    }

    /// The edits that make this change to `queue`, naming entries by id (``PlayQueue``'s
    /// position edits, `PlayQueue+Positions.swift`).
    ///
    /// - Parameters:
    ///   - queue: the group's queue as this member received it.
    ///   - playing: the entry the group plays (its id), if any.
    ///   - entries: for ``add(files:next:)``, the entries to add (ids already chosen).
    /// - Returns: the edits, in order; empty when there is nothing to do (a move to where it is).
    /// - Throws: ``PlaybackCoordinatorError`` for a position the queue does not have, or `--next`
    ///   or a move in a shuffled queue; the message ends with where to look.
    func edits(in queue: PlayQueue, playing: String?, adding entries: [QueueEntry] = []) throws -> [QueueEdit] {
        do {
            switch self {
            case .add(_, let next): return try queue.additions(entries, next: next, playing: playing)
            case .remove(let positions): return [try queue.removal(ofPositions: positions)]
            case .move(let from, let to): return try queue.move(fromPosition: from, toPosition: to).map { [$0] } ?? []
            case .clear: return [.clear]
            }
        } catch let error as PlaybackCoordinatorError {
            throw ValidationFailure(description: "queue \(verb): \(error) (coplay queue INVITE lists the entries)")
        }
    }

    /// A change the queue cannot take as asked, for a person.
    struct ValidationFailure: Error, CustomStringConvertible {
        let description: String
    }
}
