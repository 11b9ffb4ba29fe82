import NIOConcurrencyHelpers
import NIOCore

/// The channels a proxy has open, so stopping it closes them all.
final class OpenChannels: Sendable {
    private let channels = NIOLockedValueBox<[ObjectIdentifier: any Channel]>([:])

    func insert(_ channel: any Channel) {
        let key = ObjectIdentifier(channel)
        channels.withLockedValue { $0[key] = channel }
        channel.closeFuture.whenComplete { [channels] _ in
            _ = channels.withLockedValue { $0.removeValue(forKey: key) }
        }
    }

    func closeAll() async {
        let all = channels.withLockedValue { Array($0.values) }
        for channel in all {
            try? await channel.close()
        }
    }
}
