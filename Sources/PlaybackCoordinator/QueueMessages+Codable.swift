// The queue's messages on the wire, written by hand like the other coordination messages:
// docs/protocol.md ("Coordination messages": queueEdit, queueRequest, queueSnapshot) describes
// them field by field, `Web/static/sync/messages.js` is the page's copy, and
// `Tests/Vectors/messages/coordination.json` pins both.

extension QueueEditNotice: Codable {
    private enum CodingKeys: String, CodingKey { case sentAt, edit }

    /// Reads a `queueEdit` message's fields: `sentAt` and `edit`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(edit: try container.decode(QueueEdit.self, forKey: .edit), sentAt: try container.decode(ReferenceTime.self, forKey: .sentAt))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(sentAt, forKey: .sentAt)
        try container.encode(edit, forKey: .edit)
    }
}

extension QueueRequest: Codable {
    private enum CodingKeys: String, CodingKey { case sentAt }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(sentAt: try container.decode(ReferenceTime.self, forKey: .sentAt))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(sentAt, forKey: .sentAt)
    }
}

extension QueueEdit: Codable {
    private enum CodingKeys: String, CodingKey { case op, entries, at, ids, id, to, mode, seed }

    /// `{"op":"add","entries":[…],"at":POSITION}`, `{"op":"remove","ids":[…]}`,
    /// `{"op":"move","id":…,"to":POSITION}`, `{"op":"clear"}`, `{"op":"repeat","mode":"all"}`,
    /// `{"op":"shuffle","seed":42}` (no `seed`: shuffle off).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let op = try container.decode(String.self, forKey: .op)
        switch op {
        case "add": self = .add(try container.decode([QueueEntry].self, forKey: .entries), at: try container.decode(QueuePosition.self, forKey: .at))
        case "remove": self = .remove(try container.decode([String].self, forKey: .ids))
        case "move": self = .move(try container.decode(String.self, forKey: .id), to: try container.decode(QueuePosition.self, forKey: .to))
        case "clear": self = .clear
        case "repeat": self = .repeatMode(try container.decode(RepeatMode.self, forKey: .mode))
        case "shuffle": self = .shuffle(seed: try container.decodeIfPresent(UInt32.self, forKey: .seed))
        default: throw DecodingError.dataCorruptedError(forKey: .op, in: container, debugDescription: "unknown queue edit \"\(op)\"")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .add(let entries, let position):
            try container.encode("add", forKey: .op)
            try container.encode(entries, forKey: .entries)
            try container.encode(position, forKey: .at)
        case .remove(let ids):
            try container.encode("remove", forKey: .op)
            try container.encode(ids, forKey: .ids)
        case .move(let id, let position):
            try container.encode("move", forKey: .op)
            try container.encode(id, forKey: .id)
            try container.encode(position, forKey: .to)
        case .clear:
            try container.encode("clear", forKey: .op)
        case .repeatMode(let mode):
            try container.encode("repeat", forKey: .op)
            try container.encode(mode, forKey: .mode)
        case .shuffle(let seed):
            try container.encode("shuffle", forKey: .op)
            try container.encodeIfPresent(seed, forKey: .seed)
        }
    }
}

extension QueuePosition: Codable {
    private enum CodingKeys: String, CodingKey { case after }

    /// `"end"`, `"start"`, or `{"after": ENTRY_ID}`.
    public init(from decoder: any Decoder) throws {
        if let word = try? decoder.singleValueContainer().decode(String.self) {
            switch word {
            case "end": self = .end
            case "start": self = .start
            default:
                throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "unknown queue position \"\(word)\""))
            }
            return
        }
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self = .after(try container.decode(String.self, forKey: .after))
    }

    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .end:
            var container = encoder.singleValueContainer()
            try container.encode("end")
        case .start:
            var container = encoder.singleValueContainer()
            try container.encode("start")
        case .after(let id):
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(id, forKey: .after)
        }
    }
}
