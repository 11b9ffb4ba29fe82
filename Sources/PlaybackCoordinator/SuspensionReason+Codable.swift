extension SuspensionReason: Codable {
    /// The reasons that have a name of their own on the wire (every case but ``custom(_:)``).
    static let named: [SuspensionReason] = [
        .stallRecovery, .buffering, .userChangingTime, .interruption, .playingInterstitial,
        .coordinatedPlaybackNotPossible, .userActionRequired,
    ]

    /// The reason a JSON string names: one of ``named`` by its ``description``, or `custom:NAME`;
    /// `nil` for any other text.
    init?(wireName: String) {
        if let reason = Self.named.first(where: { $0.description == wireName }) {
            self = reason
        } else if wireName.hasPrefix("custom:") {
            self = .custom(String(wireName.dropFirst("custom:".count)))
        } else {
            return nil
        }
    }

    /// Reads a reason from its JSON string (docs/protocol.md, "Coordination messages").
    ///
    /// - Throws: `DecodingError.dataCorrupted` for text that names no reason (a newer reason
    ///   comes with a new version of the message kinds that carry it).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let name = try container.decode(String.self)
        guard let reason = SuspensionReason(wireName: name) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "unknown suspension reason \(name)")
        }
        self = reason
    }

    /// Writes the reason as its ``description``: `"buffering"`, `"custom:ad break"`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
