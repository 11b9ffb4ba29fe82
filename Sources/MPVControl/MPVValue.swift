/// A JSON value in mpv's IPC (a reply's `data`, an event's property value), reduced to what coplay reads.
public enum MPVValue: Sendable, Hashable, Decodable {
    case number(Double)
    case bool(Bool)
    case string(String)
    /// An array (mpv's `af`, `playlist`).
    case array([MPVValue])
    /// An object (an entry of `af` or `playlist`).
    case object([String: MPVValue])
    /// `null`.
    case none

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([MPVValue].self) {
            self = .array(value)
        } else if let value = try? container.decode([String: MPVValue].self) {
            self = .object(value)
        } else {
            self = .none
        }
    }

    /// The number, if this is one.
    public var number: Double? { if case .number(let value) = self { value } else { nil } }
    /// The boolean, if this is one.
    public var bool: Bool? { if case .bool(let value) = self { value } else { nil } }
    /// The string, if this is one.
    public var string: String? { if case .string(let value) = self { value } else { nil } }
    /// The elements, if this is an array.
    public var array: [MPVValue]? { if case .array(let value) = self { value } else { nil } }
    /// The member `key`, if this is an object that has it.
    public subscript(key: String) -> MPVValue? { if case .object(let value) = self { value[key] } else { nil } }

    /// The value as a command argument (`set_property NAME VALUE`): scalars only, nil otherwise.
    public var argument: (any Sendable)? {
        switch self {
        case .number(let value): value
        case .bool(let value): value
        case .string(let value): value
        case .array, .object, .none: nil
        }
    }
}

/// One reply on mpv's JSON IPC, with the instants (on the connection's stamp clock) its request was
/// written and its bytes were read.
public struct MPVReply: Sendable, Hashable {
    /// `success`, or mpv's error text.
    public var error: String
    /// The reply's data.
    public var data: MPVValue
    /// When the request was written (stamp clock, seconds).
    public var sent: Double
    /// When the reply was read (stamp clock, seconds).
    public var received: Double

    /// Whether mpv answered `success`.
    public var succeeded: Bool { error == "success" }
    /// The midpoint of request and reply: the best instant to attribute a sampled value to.
    public var midpoint: Double { (sent + received) / 2 }
}

/// One event line of mpv's IPC (`file-loaded`, `playback-restart`, `seek`, `end-file`,
/// `property-change`, ...), stamped when it was read.
public struct MPVEvent: Sendable, Hashable {
    /// The event's name (`event` field).
    public var name: String
    /// For `property-change`: the property.
    public var property: String?
    /// For `property-change`: the new value.
    public var data: MPVValue
    /// For `end-file`: why (`eof`, `stop`, `quit`, `error`, `redirect`).
    public var reason: String?
    /// For `end-file` with an error: mpv's error text.
    public var fileError: String?
    /// For `client-message` (a `script-message` from a key binding or a script): its arguments.
    public var args: [String]?
    /// When it was read (stamp clock, seconds).
    public var received: Double
    /// For `start-file` and `end-file`: the playlist entry's id (`playlist_entry_id`).
    public var playlistEntryID: Int? = nil
}
