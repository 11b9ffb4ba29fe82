import ArgumentParser
import Foundation
import PlaybackCoordinator

/// How playback events are printed.
enum EventFormat: String, ExpressibleByArgument, CaseIterable, Sendable {
    /// One JSON object per line (docs/events.md).
    case jsonl
    /// One human-readable line per event.
    case text
}

/// Writes events to standard output, one line each, unbuffered (each line is one `write(2)`,
/// so lines from concurrent tasks never interleave).
struct EventOutput: Sendable {
    var format: EventFormat
    var frames: Bool
    var prefix: String = ""
    /// Sees every event, printed or not (the demo's sync summary reads frames here).
    var tap: (@Sendable (PlaybackEvent) -> Void)?

    func print(_ event: PlaybackEvent) {
        tap?(event)
        if event.type == .frame && !frames { return }
        let line = format == .jsonl ? event.jsonLine : prefix + event.textLine
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }

    static func printLine(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }
}
