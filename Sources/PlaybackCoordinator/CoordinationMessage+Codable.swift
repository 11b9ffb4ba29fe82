// The coordination messages' wire format, written by hand: docs/protocol.md ("Coordination
// messages") describes it field by field, `Web/static/sync/messages.js` is the page's copy, and
// `Tests/Vectors/messages/coordination.json` pins both. Change the three together.

extension CoordinationMessage {
    /// The kinds of message this coplay reads and writes, by their wire name.
    ///
    /// Adding a kind: a case here with its ``version``, a case of ``CoordinationMessage``, one line
    /// in `decode(_:from:)` below and one in `body` (which ``CoordinationMessage/encode(to:)``
    /// writes); its payload type's `Codable`; then the same in
    /// `Web/static/sync/messages.js` (its `KINDS` table), docs/protocol.md and the shared vectors.
    public enum Kind: String, CaseIterable, Hashable, Sendable {
        case state, suspension, presence, queueEdit, queueRequest, queueSnapshot

        /// The version of this kind that coplay writes, and the newest it reads. A reader takes
        /// every version from 1 up to it, and reports a newer one as
        /// ``CoordinationMessage/unsupported(kind:version:)``.
        public var version: Int {
            switch self {
            case .state, .suspension, .presence, .queueEdit, .queueRequest, .queueSnapshot: 1
            }
        }

        /// The message of this kind in `decoder`'s object (its kind and `version`, at most
        /// ``version``, already read; a kind that reaches v2 reads its older versions here too).
        func decode(_ version: Int, from decoder: any Decoder) throws -> CoordinationMessage {
            switch self {
            case .state: .state(try StateProposal(from: decoder))
            case .suspension: .suspension(try SuspensionNotice(from: decoder))
            case .presence: .presence(try PresenceReport(from: decoder))
            case .queueEdit: .queueEdit(try QueueEditNotice(from: decoder))
            case .queueRequest: .queueRequest(try QueueRequest(from: decoder))
            case .queueSnapshot: .queueSnapshot(try QueueSnapshotPart(from: decoder))
            }
        }
    }

    /// The message's kind, `nil` for an ``unsupported(kind:version:)`` or a ``signed(_:)`` one
    /// (an envelope around one of the kinds; docs/protocol.md, "Roles").
    public var kind: Kind? { body?.kind }

    /// The message's kind and the value that writes its fields; `nil` for an unsupported message.
    private var body: (kind: Kind, fields: any Encodable)? {
        switch self {
        case .state(let proposal): (.state, proposal)
        case .suspension(let notice): (.suspension, notice)
        case .presence(let report): (.presence, report)
        case .queueEdit(let notice): (.queueEdit, notice)
        case .queueRequest(let request): (.queueRequest, request)
        case .queueSnapshot(let part): (.queueSnapshot, part)
        case .signed, .unsupported: nil
        }
    }

    /// What a person reads about an unsupported message: what it is and what to do.
    ///
    /// ```swift
    /// CoordinationMessage.unsupportedDescription(kind: "state", version: 2)
    /// // coordination message "state" v2, newer than this coplay reads (v1): update coplay
    /// ```
    public static func unsupportedDescription(kind: String, version: Int) -> String {
        if version < 1 {
            return "coordination message \"\(kind)\" in the unversioned form of older coplay builds: that member should update coplay"
        }
        if let known = Kind(rawValue: kind) {
            return "coordination message \"\(kind)\" v\(version), newer than this coplay reads (v\(known.version)): update coplay"
        }
        return "coordination message \"\(kind)\" v\(version), a kind this coplay does not know: update coplay"
    }
}

extension CoordinationMessage: Codable {
    private enum HeaderKeys: String, CodingKey {
        case kind, v
    }

    /// Any key, to recognize the form of builds before this format: `{"presence": {"_0": {…}}}`.
    private struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    /// The kind of a message in the unversioned form of older builds (Swift's synthesized enum
    /// coding: one key, the case name, around `{"_0": payload}`), or `nil`.
    private static func unversionedKind(in decoder: any Decoder) -> String? {
        guard let object = try? decoder.container(keyedBy: AnyKey.self), object.allKeys.count == 1, let key = object.allKeys.first,
            ["state", "suspension", "presence"].contains(key.stringValue),
            let payload = try? object.nestedContainer(keyedBy: AnyKey.self, forKey: key), payload.contains(AnyKey(stringValue: "_0"))
        else { return nil }
        return key.stringValue
    }

    /// Reads a message: `kind` and `v` first, then that kind's fields from the same object.
    ///
    /// An unknown `kind`, or a `v` above the kind's ``Kind/version``, gives
    /// ``unsupported(kind:version:)`` without reading further, and so does a message in the
    /// unversioned form of builds before this format (`{"presence": {"_0": …}}`), as version 0.
    /// Fields a kind does not define are ignored.
    ///
    /// - Throws: `DecodingError` for anything else that is not a message: no `kind` or `v`, a `v`
    ///   below 1, a missing or mistyped field, an unknown command, phase or suspension reason.
    public init(from decoder: any Decoder) throws {
        let header = try decoder.container(keyedBy: HeaderKeys.self)
        if !header.contains(.kind), let kind = Self.unversionedKind(in: decoder) {
            self = .unsupported(kind: kind, version: 0)
            return
        }
        let name = try header.decode(String.self, forKey: .kind)
        let version = try header.decode(Int.self, forKey: .v)
        guard version >= 1 else {
            throw DecodingError.dataCorruptedError(forKey: .v, in: header, debugDescription: "version \(version) is below 1")
        }
        if name == SignedCoordinationMessage.kind, version <= SignedCoordinationMessage.version {
            self = .signed(try SignedCoordinationMessage(from: decoder))
            return
        }
        guard let kind = Kind(rawValue: name), version <= kind.version else {
            self = .unsupported(kind: name, version: version)
            return
        }
        self = try kind.decode(version, from: decoder)
    }

    /// Writes the message as one object: `kind`, `v` (the kind's ``Kind/version``), its fields.
    /// An ``unsupported(kind:version:)`` value writes only its kind and version.
    public func encode(to encoder: any Encoder) throws {
        var header = encoder.container(keyedBy: HeaderKeys.self)
        if case .signed(let signed) = self {
            try header.encode(SignedCoordinationMessage.kind, forKey: .kind)
            try header.encode(SignedCoordinationMessage.version, forKey: .v)
            try signed.encode(to: encoder)
            return
        }
        guard let body else {
            if case .unsupported(let kind, let version) = self {
                try header.encode(kind, forKey: .kind)
                try header.encode(version, forKey: .v)
            }
            return
        }
        try header.encode(body.kind.rawValue, forKey: .kind)
        try header.encode(body.kind.version, forKey: .v)
        try body.fields.encode(to: encoder)
    }
}

extension CommandLabel: Codable {}  // its raw value: "play", "pause", "seek", "rate", "item", "next", …

extension SuspensionNotice.Phase: Codable {}  // "begin", "end"

extension Duration {
    /// Reads a duration written as integer nanoseconds (the `…Ns` fields of coordination messages).
    static func decodeNanoseconds<Key: CodingKey>(_ container: KeyedDecodingContainer<Key>, forKey key: Key) throws -> Duration {
        .nanoseconds(try container.decode(Int64.self, forKey: key))
    }
}

extension StateProposal: Codable {
    private enum CodingKeys: String, CodingKey {
        case command, sentAt, follows
    }

    /// Reads a `state` message's fields: `command`, `sentAt` and the ``PlaybackState``'s, flat.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            state: try PlaybackState(from: decoder), command: try container.decode(CommandLabel.self, forKey: .command),
            sentAt: try container.decode(ReferenceTime.self, forKey: .sentAt),
            follows: try container.decodeIfPresent(String.self, forKey: .follows))
    }

    /// Writes `sentAt`, `command`, `follows` (an `advance`'s) and the state's fields into one object.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(sentAt, forKey: .sentAt)
        try container.encode(command, forKey: .command)
        try container.encodeIfPresent(follows, forKey: .follows)
        try state.encode(to: encoder)
    }
}

extension SuspensionNotice: Codable {
    private enum CodingKeys: String, CodingKey {
        case sentAt, id, phase, reason, effectiveAt, waits, timeoutNs, proposedItemTime, history
    }

    /// Reads a `suspension` message's fields.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            id: try container.decode(String.self, forKey: .id),
            phase: try container.decode(Phase.self, forKey: .phase),
            reason: try container.decode(SuspensionReason.self, forKey: .reason),
            effectiveAt: try container.decode(ReferenceTime.self, forKey: .effectiveAt),
            waits: try container.decode(Bool.self, forKey: .waits),
            timeout: try Duration.decodeNanoseconds(container, forKey: .timeoutNs),
            proposedItemTime: try container.decodeIfPresent(Double.self, forKey: .proposedItemTime),
            sentAt: try container.decode(ReferenceTime.self, forKey: .sentAt),
            history: try container.decodeIfPresent(SuspensionHistory.self, forKey: .history))
    }

    /// Writes the notice's fields; `timeoutNs` in whole nanoseconds; absent optionals left out.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(sentAt, forKey: .sentAt)
        try container.encode(id, forKey: .id)
        try container.encode(phase, forKey: .phase)
        try container.encode(reason, forKey: .reason)
        try container.encode(effectiveAt, forKey: .effectiveAt)
        try container.encode(waits, forKey: .waits)
        try container.encode(timeout.nanosecondsValue, forKey: .timeoutNs)
        try container.encodeIfPresent(proposedItemTime, forKey: .proposedItemTime)
        try container.encodeIfPresent(history, forKey: .history)
    }
}

extension SuspensionHistory: Codable {
    private enum CodingKeys: String, CodingKey {
        case revision, anchorReferenceTime, anchorItemTime, suspensions
    }

    /// Reads a notice's `history` object.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            revision: try container.decodeIfPresent(UInt64.self, forKey: .revision),
            anchorReferenceTime: try container.decodeIfPresent(ReferenceTime.self, forKey: .anchorReferenceTime),
            anchorItemTime: try container.decodeIfPresent(Double.self, forKey: .anchorItemTime),
            suspensions: try container.decode([Entry].self, forKey: .suspensions))
    }

    /// Writes the history; absent optionals left out.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(revision, forKey: .revision)
        try container.encodeIfPresent(anchorReferenceTime, forKey: .anchorReferenceTime)
        try container.encodeIfPresent(anchorItemTime, forKey: .anchorItemTime)
        try container.encode(suspensions, forKey: .suspensions)
    }
}

extension SuspensionHistory.Entry: Codable {
    private enum CodingKeys: String, CodingKey {
        case id, participant, reason, begin, end, timeoutNs, waits
    }

    /// Reads one entry of a history's `suspensions`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            id: try container.decode(String.self, forKey: .id),
            participant: try container.decode(PlaybackParticipantID.self, forKey: .participant),
            reason: try container.decode(SuspensionReason.self, forKey: .reason),
            begin: try container.decode(ReferenceTime.self, forKey: .begin),
            end: try container.decodeIfPresent(ReferenceTime.self, forKey: .end),
            timeout: try Duration.decodeNanoseconds(container, forKey: .timeoutNs),
            waits: try container.decode(Bool.self, forKey: .waits))
    }

    /// Writes the entry; `end` only once known.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(participant, forKey: .participant)
        try container.encode(reason, forKey: .reason)
        try container.encode(begin, forKey: .begin)
        try container.encodeIfPresent(end, forKey: .end)
        try container.encode(timeout.nanosecondsValue, forKey: .timeoutNs)
        try container.encode(waits, forKey: .waits)
    }
}

extension PresenceReport: Codable {
    private enum CodingKeys: String, CodingKey {
        case sentAt, observedDelayNs, prerollNs, item, name, items, oneShot, caughtUp
    }

    /// Reads a `presence` message's fields.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            sentAt: try container.decode(ReferenceTime.self, forKey: .sentAt),
            observedDelay: try Duration.decodeNanoseconds(container, forKey: .observedDelayNs),
            preroll: try Duration.decodeNanoseconds(container, forKey: .prerollNs),
            item: try container.decodeIfPresent(String.self, forKey: .item),
            name: try container.decodeIfPresent(String.self, forKey: .name),
            items: try container.decodeIfPresent([ItemSummary].self, forKey: .items),
            oneShot: try container.decodeIfPresent(Bool.self, forKey: .oneShot),
            caughtUp: try container.decodeIfPresent(Double.self, forKey: .caughtUp).flatMap { $0.isFinite ? $0 : nil })
    }

    /// Writes the report; durations in whole nanoseconds; absent optionals left out.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(sentAt, forKey: .sentAt)
        try container.encode(observedDelay.nanosecondsValue, forKey: .observedDelayNs)
        try container.encode(preroll.nanosecondsValue, forKey: .prerollNs)
        try container.encodeIfPresent(item, forKey: .item)
        try container.encodeIfPresent(name, forKey: .name)
        try container.encodeIfPresent(items, forKey: .items)
        try container.encodeIfPresent(oneShot, forKey: .oneShot)
        try container.encodeIfPresent(caughtUp.flatMap { $0.isFinite ? $0 : nil }, forKey: .caughtUp)
    }
}

extension PresenceReport.ItemSummary: Codable {
    private enum CodingKeys: String, CodingKey {
        case item, duration, frameIdentical
    }

    /// Reads one of a report's `items`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            item: try container.decode(String.self, forKey: .item), duration: try container.decodeIfPresent(Double.self, forKey: .duration),
            frameIdentical: try container.decodeIfPresent(Bool.self, forKey: .frameIdentical))
    }

    /// Writes `item`, `duration` (seconds) when known, and `frameIdentical` only when false (a
    /// near copy).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(item, forKey: .item)
        try container.encodeIfPresent(duration, forKey: .duration)
        try container.encodeIfPresent(frameIdentical, forKey: .frameIdentical)
    }
}
