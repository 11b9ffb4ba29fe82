import Foundation

/// Whether every mpv showed the same picture once a pause had settled: each mpv writes the video frame
/// on screen (`screenshot-to-file PATH video`, which works with `--vo=null`: mpv takes the frame from
/// its video chain, not from a window), and the files are compared byte for byte; files that differ
/// are decoded with ffmpeg and their pixels compared, so a difference in PNG encoding alone does not count.
/// A player that was not paused when asked (mpv's `pause` read right after its screenshot) fails the
/// check whatever its picture: players that did not stop can show the same frame by chance.
///
/// ```swift
/// let check = PauseFrameCheck.compare(label: "15.0 pause", shots: [("p1", url1, 3.6), ("p2", url2, 3.6)])
/// check.identical   // true when every picture is the same
/// ```
package struct PauseFrameCheck: Sendable, Hashable, Codable {
    /// The pause: script time and action (`15.0 pause`, `45.6 suspension`).
    package var label: String
    /// Whether every player's picture was the same.
    package var identical: Bool
    /// One line: `identical (frame 94 on p1, p2, p3)` or what differed.
    package var detail: String

    /// Creates a result.
    package init(label: String, identical: Bool, detail: String) {
        self.label = label
        self.identical = identical
        self.detail = detail
    }

    /// `15.0 pause: identical (frame 94 on p1, p2, p3)`.
    package var line: String { "\(label): \(detail)" }

    /// One screenshot: the player, the file, and the `time-pos` and `pause` mpv reported right after
    /// it (nil if unknown).
    package typealias Shot = (player: String, file: URL, position: Double?, paused: Bool?)

    /// Compares the screenshots of one pause.
    ///
    /// - Parameters:
    ///   - label: the pause's label.
    ///   - shots: one per player; a missing file counts as a difference.
    ///   - frameRate: to name frames by index in the detail (nil: positions in seconds).
    ///   - failures: players whose screenshot could not be taken, with why.
    package static func compare(label: String, shots: [Shot], frameRate: Double? = nil, failures: [String: String] = [:]) -> PauseFrameCheck {
        func frame(_ position: Double?) -> String {
            guard let position else { return "?" }
            if let frameRate { return "frame \(Int((position * frameRate).rounded()))" }
            return String(format: "%.3f s", position)
        }
        if !failures.isEmpty {
            let text = failures.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: "; ")
            return PauseFrameCheck(label: label, identical: false, detail: "no screenshot from \(text)")
        }
        guard let first = shots.first, let reference = try? Data(contentsOf: first.file) else {
            return PauseFrameCheck(label: label, identical: false, detail: "no screenshot")
        }
        var different: [String] = []
        var decoded: [String: Data] = [:]
        for shot in shots.dropFirst() {
            guard let data = try? Data(contentsOf: shot.file) else {
                different.append("\(shot.player) wrote no file")
                continue
            }
            if data == reference { continue }
            // Same pixels, other encoding?
            if decoded[first.player] == nil { decoded[first.player] = pixels(of: first.file) }
            if let mine = pixels(of: shot.file), let theirs = decoded[first.player], mine == theirs { continue }
            different.append("\(shot.player) (\(frame(shot.position))) differs from \(first.player) (\(frame(first.position)))")
        }
        let players = shots.map(\.player).joined(separator: ", ")
        let playing = shots.filter { $0.paused == false }.map(\.player)
        let notPaused = playing.isEmpty ? "" : "not paused: \(playing.joined(separator: ", ")); "
        guard different.isEmpty else {
            return PauseFrameCheck(
                label: label, identical: false, detail: notPaused + "different: " + different.joined(separator: ", "))
        }
        guard playing.isEmpty else {
            return PauseFrameCheck(label: label, identical: false, detail: notPaused + "pictures the same by chance")
        }
        let positions = Set(shots.map { frame($0.position) })
        let shown = positions.count == 1 ? "\(positions.first!) on \(players)" : players
        return PauseFrameCheck(label: label, identical: true, detail: "identical (\(shown))")
    }

    /// The RGB pixels of an image file, decoded by ffmpeg, or nil when ffmpeg is missing or fails.
    static func pixels(of file: URL) -> Data? {
        guard let ffmpeg = SyncplayBaseline.findTool("ffmpeg") else { return nil }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: ffmpeg)
        process.arguments = ["-nostdin", "-v", "error", "-i", file.path, "-f", "rawvideo", "-pix_fmt", "rgb24", "-"]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        do { try process.run() } catch { return nil }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return process.terminationStatus == 0 && !data.isEmpty ? data : nil
    }
}

/// The pauses of one scenario: how many were checked and on how many every picture was the same.
package struct PauseFrames: Sendable, Hashable, Codable {
    /// Pauses checked.
    package var pauses: Int
    /// Pauses on which every player showed the same picture.
    package var identical: Int
    /// One line per pause.
    package var checks: [String]

    /// Summarizes checks.
    package init(_ checks: [PauseFrameCheck]) {
        self.pauses = checks.count
        self.identical = checks.filter(\.identical).count
        self.checks = checks.map(\.line)
    }

    /// `identical frames on 2 of 2 pauses`.
    package var summary: String { "identical frames on \(identical) of \(pauses) pauses" }
}
