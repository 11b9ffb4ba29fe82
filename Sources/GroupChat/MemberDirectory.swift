import GroupSessions

/// Who is who: members' names bound to their keys, and the labels people see (sans-IO).
///
/// - A participant's identity (``MemberIdentity``, verified) binds it to one key and one name for
///   the session: a later statement of the same participant with another key or name is ignored.
/// - Every key seen with a name (identities, chat messages, history) counts for that name. A name
///   used by one key is shown as it is; a name used by several keys, or containing `#`, is shown
///   with each key's tag: `alice#3f9a2c` and `alice#b71c04`. The label never depends on who came
///   first, so every member shows the same labels for the same keys, and nobody can take a
///   person's plain name by being quicker.
/// - Names compare as Swift strings (canonical equivalence: a decomposed `é` is the same name as a
///   precomposed one; the page compares NFC forms).
///
/// Next steps build on it: control grants name keys (`grant alice#3f9a2c` when the name is shared),
/// and the host's key, named in the invite, is the session's root of authority.
public struct MemberDirectory: Sendable {
    /// Verified identities by participant.
    public private(set) var identities: [ParticipantID: MemberIdentity] = [:]
    private var keysByName: [String: [MemberPublicKey]] = [:]

    /// An empty directory.
    public init() {}

    /// Binds a verified identity; `false` when its participant is bound already to another key or
    /// name (the statement is ignored).
    @discardableResult
    public mutating func bind(_ identity: MemberIdentity) -> Bool {
        if let known = identities[identity.participant] {
            return known.key == identity.key && Array(known.name.unicodeScalars) == Array(identity.name.unicodeScalars)
        }
        identities[identity.participant] = identity
        record(name: identity.name, key: identity.key)
        return true
    }

    /// Counts `key` as a user of `name`.
    public mutating func record(name: String, key: MemberPublicKey) {
        var keys = keysByName[name, default: []]
        if !keys.contains(key) {
            keys.append(key)
            keysByName[name] = keys
        }
    }

    /// The keys seen with `name`, in the order they were first seen.
    public func keys(named name: String) -> [MemberPublicKey] { keysByName[name] ?? [] }

    /// The label people see for `name` signed by `key`: the name, or `name#tag` when the name is
    /// shared by several keys or contains `#`.
    public func label(name: String, key: MemberPublicKey) -> String {
        let shared = (keysByName[name]?.count ?? 0) > 1 || name.contains("#")
        return shared ? "\(name)#\(key.tag)" : name
    }

    /// The label of a participant with a verified identity.
    public func label(of participant: ParticipantID) -> String? {
        identities[participant].map { label(name: $0.name, key: $0.key) }
    }
}
