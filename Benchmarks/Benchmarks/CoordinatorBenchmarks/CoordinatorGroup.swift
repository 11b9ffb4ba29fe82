import PlaybackCoordinator

/// One member's ``CoordinatorCore`` in a group of `members`, playing `clip`, with reference time
/// advanced by hand and the channel's sequence numbers kept here.
struct CoordinatorGroup {
    private(set) var core: CoordinatorCore
    private var now = ReferenceTime(seconds: 1_000)
    private var sequence: UInt64 = 0
    private var playing = true
    private let others: [PlaybackParticipantID]

    init(members: Int) {
        let me: PlaybackParticipantID = "member-0"
        others = (1..<max(members, 2)).map { PlaybackParticipantID("member-\($0)") }
        core = CoordinatorCore(participant: me, localItem: clip.identifier)
        for member in [me] + others { _ = core.receive(.joined(member), now: now) }
        _ = receive(.state(StateProposal(
            state: PlaybackState(item: clip.identifier, rate: 1, anchorItemTime: 0, anchorReferenceTime: now, originator: me),
            command: .play, sentAt: now)), from: me)
    }

    private mutating func receive(_ message: CoordinationMessage, from sender: PlaybackParticipantID) -> [CoordinatorAction] {
        sequence += 1
        return core.receive(.message(message, sender: sender, sequence: sequence), now: now)
    }

    /// Proposes a seek and receives it back; returns the actions of both steps.
    mutating func localSeek() throws -> Int {
        now = now + .milliseconds(10)
        var count = 0
        for action in try core.proposeSeek(to: 30 + Double(sequence % 500), now: now) {
            count += 1
            if case .send(let message, _) = action { count += receive(message, from: core.participant).count }
        }
        return count
    }

    /// Receives a play or pause (alternating) from another member.
    mutating func remoteToggle() -> Int {
        now = now + .milliseconds(10)
        playing.toggle()
        let sender = others[Int(sequence % UInt64(others.count))]
        let state = PlaybackState(
            item: clip.identifier, rate: playing ? 1 : 0, anchorItemTime: Double(sequence % 500),
            anchorReferenceTime: now + .milliseconds(60), originator: sender)
        return receive(.state(StateProposal(state: state, command: playing ? .play : .pause, sentAt: now)), from: sender).count
    }

    /// Receives a presence report from every other member, then ticks.
    mutating func presenceRound() -> Int {
        now = now + .milliseconds(100)
        var count = 0
        for member in others {
            let report = PresenceReport(
                sentAt: now - .milliseconds(2), observedDelay: .microseconds(300 + Int(sequence % 200)), preroll: .zero,
                item: clip.identifier)
            count += receive(.presence(report), from: member).count
        }
        return count + core.tick(now: now).count
    }
}
