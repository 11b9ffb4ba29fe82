/// The sealed reliable frames a member sent that the relay has not acknowledged yet, oldest
/// first: re-sent, unchanged, after resuming on a new connection.
struct UnackedFrames: Sendable {
    private var sequences: [UInt64] = []
    private var storage: [Frame] = []
    private var head = 0
    /// Payload bytes held.
    private(set) var bytes = 0

    var count: Int { storage.count - head }
    var frames: ArraySlice<Frame> { storage[head...] }

    /// Appends a frame with a sender sequence above all held.
    mutating func append(_ frame: Frame, senderSequence: UInt64) {
        sequences.append(senderSequence)
        storage.append(frame)
        bytes += frame.payload.readableBytes
    }

    /// Drops every frame up to `senderSequence` (acks arrive in sender order).
    mutating func acknowledge(through senderSequence: UInt64) {
        while head < storage.count && sequences[head] <= senderSequence {
            bytes -= storage[head].payload.readableBytes
            head += 1
        }
        compact()
    }

    /// Drops one refused frame.
    mutating func remove(_ senderSequence: UInt64) {
        guard let index = sequences[head...].firstIndex(of: senderSequence) else { return }
        bytes -= storage[index].payload.readableBytes
        sequences.remove(at: index)
        storage.remove(at: index)
    }

    private mutating func compact() {
        if head == storage.count {
            sequences.removeAll(keepingCapacity: true)
            storage.removeAll(keepingCapacity: true)
            head = 0
        } else if head > 1024 && head * 2 > storage.count {
            sequences.removeFirst(head)
            storage.removeFirst(head)
            head = 0
        }
    }
}
