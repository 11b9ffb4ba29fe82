import Foundation

extension PlaybackEvent {
    /// The event as one JSON object on one line (no trailing newline), keys in a fixed order:
    /// `type`, `v`, `realtime`, then the fields that are set. Numbers are printed exactly (shortest
    /// round-trip form); non-finite numbers are left out. `originator` is the originator's label
    /// (``originatorLabel``, as the schema has always printed it) and `originatorId` its id.
    ///
    /// ```swift
    /// PlaybackEvent(type: .frame, realtime: 1.5, index: 3, pts: 0.12).jsonLine
    /// // {"type":"frame","v":2,"realtime":1.5,"index":3,"pts":0.12}
    /// ```
    public var jsonLine: String {
        var out = "{\"type\":\"\(type.rawValue)\",\"v\":\(Self.schemaVersion)"
        func number(_ key: String, _ value: Double?) {
            guard let value, value.isFinite else { return }
            out += ",\"\(key)\":\(value)"
        }
        func string(_ key: String, _ value: String?) {
            guard let value else { return }
            out += ",\"\(key)\":\(Self.quoted(value))"
        }
        number("realtime", realtime)
        string("player", player?.rawValue)
        string("originator", originatorLabel)
        string("originatorId", originator?.rawValue)
        string("item", item)
        string("entry", entry)
        if let index { out += ",\"index\":\(index)" }
        number("pts", pts)
        number("itemTime", itemTime)
        number("rate", rate)
        number("referenceTime", referenceTime)
        if let revision { out += ",\"revision\":\(revision)" }
        string("reason", reason)
        string("suspension", suspension)
        if let waits { out += ",\"waits\":\(waits)" }
        if let timedOut { out += ",\"timedOut\":\(timedOut)" }
        number("errorMs", errorMs)
        string("detail", detail)
        string("text", text)
        string("key", key)
        number("sentAt", sentAt)
        if let count { out += ",\"count\":\(count)" }
        out += "}"
        return out
    }

    /// Parses one JSON line written by ``jsonLine``.
    ///
    /// - Parameter line: the JSON object text.
    /// - Throws: `DecodingError` when the line is not a valid event.
    public init(jsonLine line: String) throws {
        let data = Data(line.utf8)
        self = try JSONDecoder().decode(PlaybackEvent.self, from: data)
        // `originator` is the label on the line; with `originatorId` (lines from this version on)
        // the id is that and the label, when it differs, the name.
        if let id = try JSONDecoder().decode(OriginatorID.self, from: data).originatorId {
            let label = originator?.rawValue
            originator = PlaybackParticipantID(id)
            originatorName = label == id ? nil : label
        }
    }

    private struct OriginatorID: Decodable { var originatorId: String? }

    /// A human-readable one-line rendering (the CLI's `--events text`).
    public var textLine: String {
        var parts = [String(format: "%.6f", realtime), type.rawValue]
        if let player { parts.append("player=\(player)") }
        if let originatorLabel { parts.append("by=\(originatorLabel)") }
        if let item { parts.append("item=\(item)") }
        if let entry { parts.append("entry=\(entry)") }
        if let index { parts.append("frame=\(index)") }
        if let pts { parts.append(String(format: "pts=%.3f", pts)) }
        if let itemTime { parts.append(String(format: "t=%.3f", itemTime)) }
        if let rate { parts.append("rate=\(rate)") }
        if let reason { parts.append("reason=\(reason)") }
        if let errorMs { parts.append(String(format: "err=%.3fms", errorMs)) }
        if let detail { parts.append(detail) }
        if let text { parts.append("text=\(Self.quoted(text))") }
        return parts.joined(separator: " ")
    }

    private static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case let c where c.value < 0x20: out += String(format: "\\u%04x", c.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
