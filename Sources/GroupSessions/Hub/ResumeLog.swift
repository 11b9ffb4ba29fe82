/// The bounded, in-order log of one session's stamped frames that a ``SessionHub`` replays to
/// a member resuming after a lost connection.
///
/// Every frame the hub stamps is appended (unreliable data too, so the log stays contiguous);
/// the oldest frames are evicted once the log holds more than its frame or byte limit, and
/// ``floor`` rises to the last evicted stamp: a member whose last received stamp is below
/// ``floor`` can no longer be resumed.
///
/// ```swift
/// var log = ResumeLog()
/// log.append(frame, maximumFrames: 100_000, maximumBytes: 64 << 20)
/// for frame in log.frames(after: 41) { /* replay */ }
/// ```
package struct ResumeLog: Sendable {
    private var storage: [Frame] = []
    private var head = 0
    /// Every stamp at or below this one has been evicted (0: nothing evicted yet).
    package private(set) var floor: UInt64 = 0
    /// Payload bytes held.
    package private(set) var bytes = 0

    /// An empty log whose frames start after `floor`.
    package init(floor: UInt64 = 0) { self.floor = floor }

    /// Frames held.
    package var count: Int { storage.count - head }

    /// The frames held, oldest first.
    package var frames: ArraySlice<Frame> { storage[head...] }

    /// Appends a stamped frame and evicts the oldest ones beyond the limits.
    ///
    /// - Parameters:
    ///   - frame: A frame the hub just stamped (its sequence is above every frame held).
    ///   - maximumFrames: Frames to keep at most.
    ///   - maximumBytes: Payload bytes to keep at most.
    package mutating func append(_ frame: Frame, maximumFrames: Int, maximumBytes: Int) {
        storage.append(frame)
        bytes += frame.payload.readableBytes
        while count > 0 && (count > maximumFrames || bytes > maximumBytes) {
            let evicted = storage[head]
            bytes -= evicted.payload.readableBytes
            floor = evicted.sequence
            head += 1
        }
        if head > 1024 && head * 2 > storage.count {
            storage.removeFirst(head)
            head = 0
        }
    }

    /// The frames stamped after `sequence`, oldest first (binary search: stamps increase).
    package func frames(after sequence: UInt64) -> ArraySlice<Frame> {
        var low = head
        var high = storage.count
        while low < high {
            let middle = (low + high) / 2
            if storage[middle].sequence <= sequence { low = middle + 1 } else { high = middle }
        }
        return storage[low...]
    }
}
