import Foundation
import GroupSessions
import PlaybackCoordinator
import Synchronization

/// Tells the person, once per member and item, which other members play an item from a near copy
/// (another encode, not frame-identical), as their presence reports say
/// (`PresenceReport.ItemSummary.frameIdentical` false): a `nearCopy` event.
enum NearCopyWatch {
    /// Watches `session`'s presence reports until the subscription is cancelled; `name` labels this
    /// member in the events' `player`, as the coordinator's events do.
    static func start(
        session: GroupSession<WatchTogetherActivity>, name: String?, output: EventOutput
    ) -> GroupSessionMessenger.Subscription {
        let messenger = GroupSessionMessenger(session: session, deliveryMode: .reliable)
        let local = session.localParticipant.id
        let told = Mutex<Set<String>>([])
        return messenger.receive(CoordinationMessage.self) { message, context in
            guard case .presence(let report) = message, context.source.id != local else { return }
            for summary in report.items ?? [] where summary.frameIdentical == false {
                let key = "\(context.source.id) \(summary.item)"
                guard told.withLock({ $0.insert(key).inserted }) else { continue }
                output.print(PlaybackEvent(
                    type: .nearCopy, realtime: Date().timeIntervalSince1970,
                    player: PlaybackParticipantID(name ?? local.description),
                    originator: PlaybackParticipantID(context.source.id.description), originatorName: report.name,
                    item: summary.item, detail: "duration within \(MemberMedia.nearTolerance) s"))
            }
        }
    }
}
