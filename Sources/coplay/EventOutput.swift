import ArgumentParser
import Foundation
import PlaybackCoordinator

/// How playback events are printed.
enum EventFormat: String, ExpressibleByArgument, CaseIterable, Sendable {
    /// One JSON object per line (docs/events.md).
    case jsonl
    /// One line per event for a person to read (``HumanEvents``; `coplay demo`: the compact
    /// `PlaybackEvent.textLine`).
    case text

    /// `--events` when given, else text on a terminal and JSON Lines otherwise (piped, redirected).
    static func resolved(_ requested: EventFormat?) -> EventFormat {
        requested ?? (Console.out.isTerminal ? .text : .jsonl)
    }
}

/// Writes events to standard output, one line each, unbuffered (each line is one `write(2)`,
/// so lines from concurrent tasks never interleave). Once standard output is closed (its reader
/// went away) nothing more is printed, and the member plays on.
struct EventOutput: Sendable {
    var format: EventFormat
    var frames: Bool
    var prefix: String = ""
    /// Sees every event, printed or not (the demo's sync summary reads frames here).
    var tap: (@Sendable (PlaybackEvent) -> Void)?
    /// Renders `text` for a person (`host` and `join`); without it `text` is the compact
    /// `PlaybackEvent.textLine` (`demo`).
    var human: HumanEvents?

    func print(_ event: PlaybackEvent) {
        tap?(event)
        if event.type == .frame && !frames { return }
        if Console.out.isClosed { return }
        switch format {
        case .jsonl: Console.out.line(event.jsonLine)
        case .text:
            if let human { human.print(event) } else { Console.out.line(prefix + event.textLine) }
        }
    }

    /// A line of its own (the invite, a notice), unless standard output is closed.
    static func printLine(_ line: String) {
        Console.out.line(line)
    }

    /// A notice for the person at the terminal: on standard output in `text` (among the events), on
    /// standard error with JSON Lines (which must stay one event per line).
    func notice(_ line: String) {
        switch format {
        case .text:
            if let human { human.notice(line) } else { Console.out.line(prefix + line) }
        case .jsonl: Console.err.line("coplay: \(line)")
        }
    }
}
