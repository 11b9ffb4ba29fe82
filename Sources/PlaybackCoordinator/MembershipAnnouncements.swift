/// Decides when another member's `joined` and `left` events are told, so that people hear of
/// people, by name, and not of a member that joins only to send one command (`coplay control`).
///
/// The channel reports a member as soon as it joins, before its first presence report says who it
/// is. This holds another member's `joined` until that report arrives (then it is told with the
/// member's name), or until ``nameWait`` passes without one (then it is told with the id). A member
/// whose report says ``PresenceReport/oneShot`` is never announced, and neither is its `left`; nor is a
/// member that came and went before its `joined` was told. Everything else passes at once. Sans-IO:
/// ``PlaybackCoordinator`` feeds it its core's events and the core's knowledge of presence.
///
/// ```swift
/// var gate = MembershipAnnouncements()
/// gate.pass(joinedEvent, now: t)                                  // [] (held)
/// gate.release(now: t + 0.01) { _ in (reported: true, oneShot: false, name: "dave") }
/// // -> [joined, originatorName "dave"]
/// ```
public struct MembershipAnnouncements: Sendable {
    /// How long a `joined` waits for the member's first presence report before it is told anyway.
    public var nameWait: Duration

    private var held: [(event: PlaybackEvent, since: ReferenceTime)] = []
    private var silenced: Set<PlaybackParticipantID> = []

    /// Creates a gate; `nameWait` is how long a `joined` waits for the member's presence report.
    public init(nameWait: Duration = .seconds(3)) {
        self.nameWait = nameWait
    }

    /// The deadline of the oldest held `joined`, if any (call ``release(now:presence:)`` then).
    public var nextDeadline: ReferenceTime? { held.map { $0.since + nameWait }.min() }

    /// The events to tell now for `event`, which the core reported at `now`.
    ///
    /// - Parameters:
    ///   - event: the event the core reported.
    ///   - local: the local member (its own `joined` and `left` pass at once).
    ///   - now: the reference time it was reported at.
    ///   - presence: what the core knows of a member from its presence reports.
    public mutating func pass(
        _ event: PlaybackEvent, local: PlaybackParticipantID?, now: ReferenceTime,
        presence: (PlaybackParticipantID) -> (reported: Bool, oneShot: Bool, name: String?)
    ) -> [PlaybackEvent] {
        guard [.joined, .left].contains(event.type), let member = event.originator, member != local else { return [event] }
        if event.type == .joined {
            held.removeAll { $0.event.originator == member }
            silenced.remove(member)
            held.append((event, now))
            return release(now: now, presence: presence)
        }
        // A member whose `joined` was never told: a one-shot member, or one that came and went unnamed.
        if let index = held.firstIndex(where: { $0.event.originator == member }) {
            held.remove(at: index)
            return []
        }
        if silenced.remove(member) != nil || presence(member).oneShot { return [] }
        return [event]
    }

    /// The held `joined` events that can be told at `now`: the member's report arrived (not a
    /// one-shot member), or ``nameWait`` passed.
    ///
    /// - Parameters:
    ///   - now: the reference time now.
    ///   - presence: what the core knows of a member from its presence reports.
    public mutating func release(
        now: ReferenceTime, presence: (PlaybackParticipantID) -> (reported: Bool, oneShot: Bool, name: String?)
    ) -> [PlaybackEvent] {
        var told: [PlaybackEvent] = []
        var kept: [(event: PlaybackEvent, since: ReferenceTime)] = []
        for entry in held {
            guard let member = entry.event.originator else { continue }
            let known = presence(member)
            if known.oneShot {
                silenced.insert(member)
            } else if known.reported || now >= entry.since + nameWait {
                var event = entry.event
                event.originatorName = known.name ?? event.originatorName
                told.append(event)
            } else {
                kept.append(entry)
            }
        }
        held = kept
        return told
    }
}
