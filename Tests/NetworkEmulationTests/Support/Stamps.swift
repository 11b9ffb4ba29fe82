import NIOConcurrencyHelpers
import NIOCore

/// Monotonic timestamps (NIO uptime nanoseconds) of numbered records, shared between handlers and tests.
final class Stamps: Sendable {
    private let box = NIOLockedValueBox<[(sequence: UInt64, at: UInt64)]>([])

    func record(_ sequence: UInt64, at: UInt64 = NIODeadline.now().uptimeNanoseconds) {
        box.withLockedValue { $0.append((sequence, at)) }
    }

    var all: [(sequence: UInt64, at: UInt64)] { box.withLockedValue { $0 } }

    var bySequence: [UInt64: UInt64] {
        var result: [UInt64: UInt64] = [:]
        for (sequence, at) in all where result[sequence] == nil { result[sequence] = at }
        return result
    }

    var count: Int { box.withLockedValue { $0.count } }

    /// Waits (polling) until `count >= expected` or `timeout` seconds pass.
    func wait(for expected: Int, timeout: Double) async throws {
        let deadline = NIODeadline.now() + .milliseconds(Int64(timeout * 1000))
        while count < expected && NIODeadline.now() < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
    }
}
