/// Edits worded as people word them: 1-based positions in ``PlayQueue/playOrder``, as a listing
/// of the queue prints them (`coplay queue`), turned into edits that name entry ids.
///
/// Positions are read once, from the queue as this member has it, and the edits name the entries
/// by id: an edit another member makes at the same moment cannot make a "remove 2" remove another
/// entry than the one that was second (at worst it removes nothing, that entry being gone).
///
/// ```swift
/// let edit = try await coordinator.queue.removal(ofPositions: [2])   // .remove(["<id of entry 2>"])
/// try await coordinator.editQueue(edit)
/// ```
extension PlayQueue {
    /// The entry at 1-based `position` of the play order.
    ///
    /// - Throws: ``PlaybackCoordinatorError/noEntry(_:)`` when the queue has no such position.
    public func entry(checkingPosition position: Int) throws -> QueueEntry {
        guard let entry = entry(atPosition: position) else {
            let count = entries.count
            throw PlaybackCoordinatorError.noEntry(
                count == 0 ? "there is no entry \(position): the queue is empty" : "there is no entry \(position): the queue has \(count)")
        }
        return entry
    }

    /// The edits that add `entries`: at the end, or right after the playing entry (`next`).
    ///
    /// More than ``QueueSnapshotPart/maximumEntries`` entries make several edits (each message
    /// stays within a session message's size limit), each after the previous one's last entry.
    ///
    /// - Parameters:
    ///   - entries: the entries (``PlaybackCoordinator/makeQueueEntries(_:)`` chose their ids).
    ///   - next: add right after the playing entry (``afterPlaying(_:)``) instead of at the end.
    ///   - playing: the entry the group plays (its id), if any.
    /// - Throws: ``PlaybackCoordinatorError/cannotEditQueue(_:)`` for `next` in a shuffled queue,
    ///   where no entry plays right after another one.
    public func additions(_ entries: [QueueEntry], next: Bool, playing: String?) throws -> [QueueEdit] {
        var position = QueuePosition.end
        if next {
            guard shuffleSeed == nil else {
                throw PlaybackCoordinatorError.cannotEditQueue(
                    "the queue is shuffled, so no entry plays right after another: turn shuffle off to add after the playing entry, or add at the end")
            }
            position = afterPlaying(playing)
        }
        var edits: [QueueEdit] = []
        for start in stride(from: 0, to: entries.count, by: QueueSnapshotPart.maximumEntries) {
            let chunk = Array(entries[start..<min(start + QueueSnapshotPart.maximumEntries, entries.count)])
            edits.append(.add(chunk, at: position))
            if position != .end, let last = chunk.last { position = .after(last.id) }
        }
        return edits
    }

    /// Where entries go to play right after `playing`: after it; where it was, when it was removed
    /// while it played; at the start when nothing plays; at the end of an empty queue.
    public func afterPlaying(_ playing: String?) -> QueuePosition {
        guard let playing else { return isEmpty ? .end : .start }
        if entry(playing) != nil { return .after(playing) }
        if let removed = removedPlaying, removed.id == playing, let successor = removed.successor,
            let index = entries.firstIndex(where: { $0.id == successor })
        {
            return index == 0 ? .start : .after(entries[index - 1].id)
        }
        return .end
    }

    /// The edit that removes the entries at these positions.
    ///
    /// - Throws: ``PlaybackCoordinatorError/noEntry(_:)`` for a position the queue does not have
    ///   (then nothing is removed).
    public func removal(ofPositions positions: [Int]) throws -> QueueEdit {
        var ids: [String] = []
        for position in positions {
            let id = try entry(checkingPosition: position).id
            if !ids.contains(id) { ids.append(id) }
        }
        return .remove(ids)
    }

    /// The edit that moves the entry at position `from` so that it is at position `to`, or `nil`
    /// when it is there already.
    ///
    /// - Throws: ``PlaybackCoordinatorError/noEntry(_:)`` for a position the queue does not have;
    ///   ``PlaybackCoordinatorError/cannotEditQueue(_:)`` in a shuffled queue (its order is not
    ///   the list's, which a move changes).
    public func move(fromPosition from: Int, toPosition to: Int) throws -> QueueEdit? {
        let moving = try entry(checkingPosition: from)
        _ = try entry(checkingPosition: to)
        guard shuffleSeed == nil else {
            throw PlaybackCoordinatorError.cannotEditQueue(
                "the queue is shuffled: its order is not the list's, so entries cannot be moved (turn shuffle off first)")
        }
        guard from != to else { return nil }
        let others = playOrder.filter { $0.id != moving.id }
        return .move(moving.id, to: to == 1 ? .start : .after(others[to - 2].id))
    }
}
