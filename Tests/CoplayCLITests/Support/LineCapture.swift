import Foundation

/// Captures a child process's output line by line while it runs, so a test can wait for a line.
final class LineCapture: @unchecked Sendable {
    // @unchecked: `lines` and `partial` are only touched under `lock`; the pipe is set up once.
    let pipe = Pipe()
    private let lock = NSLock()
    private var lines: [String] = []
    private var partial = Data()

    init() {
        pipe.fileHandleForReading.readabilityHandler = { [weak self] handle in
            let data = handle.availableData
            guard let self else { return }
            if data.isEmpty {
                handle.readabilityHandler = nil
                return
            }
            self.lock.withLock {
                self.partial.append(data)
                while let newline = self.partial.firstIndex(of: 0x0A) {
                    self.lines.append(String(decoding: self.partial[self.partial.startIndex..<newline], as: UTF8.self))
                    self.partial.removeSubrange(self.partial.startIndex...newline)
                }
            }
        }
    }

    var snapshot: [String] { lock.withLock { lines } }

    /// Waits (polling) until `condition` holds for the lines so far; false after `timeout`.
    func wait(for timeout: Duration, _ condition: ([String]) -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if condition(snapshot) { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return condition(snapshot)
    }
}
