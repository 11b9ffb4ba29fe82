extension PlaybackState: Codable {
    private enum CodingKeys: String, CodingKey {
        case item, rate, intendedRate, anchorItemTime, anchorReferenceTime, originator, revision, duration, entry
    }

    /// Reads the state's fields (flat, as in a `state` coordination message; docs/protocol.md,
    /// "Coordination messages"). A missing `revision` is 0.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            item: try container.decode(String.self, forKey: .item),
            rate: try container.decode(Double.self, forKey: .rate),
            anchorItemTime: try container.decode(Double.self, forKey: .anchorItemTime),
            anchorReferenceTime: try container.decode(ReferenceTime.self, forKey: .anchorReferenceTime),
            originator: try container.decode(PlaybackParticipantID.self, forKey: .originator),
            revision: try container.decodeIfPresent(UInt64.self, forKey: .revision) ?? 0,
            intendedRate: try container.decode(Double.self, forKey: .intendedRate),
            duration: try container.decodeIfPresent(Double.self, forKey: .duration),
            entry: try container.decodeIfPresent(String.self, forKey: .entry))
    }

    /// Writes the state's fields into the encoder's object; `revision` only when not 0 (a proposal's
    /// is 0: receivers take the channel's sequence), `duration` only when known.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(item, forKey: .item)
        try container.encode(rate, forKey: .rate)
        try container.encode(intendedRate, forKey: .intendedRate)
        try container.encode(anchorItemTime, forKey: .anchorItemTime)
        try container.encode(anchorReferenceTime, forKey: .anchorReferenceTime)
        try container.encode(originator, forKey: .originator)
        if revision != 0 { try container.encode(revision, forKey: .revision) }
        try container.encodeIfPresent(duration, forKey: .duration)
        try container.encodeIfPresent(entry, forKey: .entry)
    }
}
