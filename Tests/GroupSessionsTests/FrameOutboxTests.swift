import GroupSessions
import Testing
import TestSupport

@Suite("FrameOutbox: a writer waiting for frames ends on close and on cancellation")
struct FrameOutboxTests {
    static func frame(_ sequence: UInt64) -> Frame {
        Frame(type: .ping, session: SessionID(high: 1, low: 2), sender: ParticipantID(rawValue: 3), sequence: sequence)
    }

    @Test("a writer task waiting on an empty outbox returns nil when cancelled; the outbox stays open")
    func cancelWhileWaiting() async {
        let outbox = FrameOutbox()
        let started = LockedBox(false)
        let writer = Task { () -> [Frame]? in
            started.mutate { $0 = true }
            return await outbox.next()
        }
        await eventually("the writer is waiting") { started.value }
        try? await Task.sleep(for: .milliseconds(50))  // most likely parked in next() by now
        writer.cancel()
        let returned = LockedBox<[Frame]??>(nil)
        Task { let value = await writer.value; returned.mutate { $0 = .some(value) } }
        await eventually("the cancelled writer returns", timeout: .seconds(30)) { returned.value != nil }
        #expect(returned.value == .some(nil))
        #expect(!outbox.isClosed)
        // Frames queued after the cancellation wait for the next writer.
        #expect(outbox.enqueue(Self.frame(1)) == .queued)
        #expect(await outbox.next()?.map(\.sequence) == [1])
    }

    @Test("next() in an already cancelled task returns at once; queued frames are still handed out first")
    func alreadyCancelled() async {
        let outbox = FrameOutbox()
        outbox.enqueue(Self.frame(7))
        let results = await Task { () -> [[Frame]?] in
            withUnsafeCurrentTask { $0?.cancel() }
            return [await outbox.next(), await outbox.next()]
        }.value
        #expect(results.count == 2)
        #expect(results[0]?.map(\.sequence) == [7])
        #expect(results[1] == nil)
    }

    @Test("cancellation racing with registration and with enqueue: every writer returns, no frame is lost", arguments: [0, 1, 2])
    func races(seed: Int) async {
        let outbox = FrameOutbox()
        var delivered: [UInt64] = []
        var sequence: UInt64 = 0
        for round in 0..<300 {
            let writer = Task { await outbox.next() }
            // Vary the moment of the cancellation relative to the writer registering its waiter.
            for _ in 0..<((round + seed) % 4) { await Task.yield() }
            if (round + seed) % 3 == 0 {
                sequence += 1
                outbox.enqueue(Self.frame(sequence))
            }
            writer.cancel()
            let returned = LockedBox<[Frame]??>(nil)
            Task { let value = await writer.value; returned.mutate { $0 = .some(value) } }
            await eventually("writer \(round) returns", timeout: .seconds(30)) { returned.value != nil }
            delivered += (returned.value ?? nil)?.map(\.sequence) ?? []
        }
        outbox.close()
        while let batch = await outbox.next() { delivered += batch.map(\.sequence) }
        #expect(delivered == Array(1...sequence), "every frame handed out exactly once, in order")
    }

    @Test("close wakes a waiting writer with nil after it took what was queued")
    func closeWakes() async {
        let outbox = FrameOutbox()
        let writer = Task { () -> [UInt64] in
            var got: [UInt64] = []
            while let batch = await outbox.next() { got += batch.map(\.sequence) }
            return got
        }
        outbox.enqueue(Self.frame(1))
        outbox.enqueue(Self.frame(2))
        outbox.close()
        #expect(await writer.value == [1, 2])
        #expect(outbox.enqueue(Self.frame(3)) == .closed)
    }
}
