import Foundation

/// The events one player emitted during a scenario, in file order.
///
/// Streams are read from and written to JSON Lines: one ``BenchEvent`` object per line, blank lines
/// ignored. The player's name comes from the caller (usually the file name), and fills in events that
/// carry no `player` field.
///
/// ```swift
/// let stream = try PlayerEventStream(player: "a", jsonLines: Data(contentsOf: url))
/// ```
package struct PlayerEventStream: Sendable, Hashable {
    /// The player's name.
    package var player: String
    /// The player's events.
    package var events: [BenchEvent]

    /// Creates a stream from events already in memory.
    package init(player: String, events: [BenchEvent]) {
        self.player = player
        self.events = events
    }

    /// Parses a JSON Lines stream.
    ///
    /// - Parameters:
    ///   - player: the player's name, used for events that do not name one.
    ///   - jsonLines: UTF-8 text, one JSON object per line.
    /// - Throws: ``BenchError`` naming the first malformed line.
    package init(player: String, jsonLines: Data) throws {
        self.player = player
        var events: [BenchEvent] = []
        let decoder = JSONDecoder()
        var lineNumber = 0
        for line in jsonLines.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            lineNumber += 1
            if line.allSatisfy({ $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\r") || $0 == UInt8(ascii: "\t") }) {
                continue
            }
            do {
                var event = try decoder.decode(BenchEvent.self, from: Data(line))
                if event.player == nil { event.player = player }
                events.append(event)
            } catch {
                throw BenchError.malformedLine(player: player, line: lineNumber, reason: "\(error)")
            }
        }
        self.events = events
    }

    /// The stream as JSON Lines (sorted keys, one event per line, a trailing newline).
    package func jsonLines() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var data = Data()
        for event in events {
            data.append(try encoder.encode(event))
            data.append(UInt8(ascii: "\n"))
        }
        return data
    }
}
