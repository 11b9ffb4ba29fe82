import ClockSync
import GroupSessions
import Logging
import NIOCore
import NIOHTTP1
import NIOSSL
import NIOWebSocket

/// How an accepted connection's pipeline is built: one port serves the relay protocol over TCP,
/// the browser client's files over HTTP, and the relay protocol over a WebSocket at `/ws`.
extension RelayServer {
    /// What every connection's pipeline needs.
    struct PipelineSettings: Sendable {
        var configuration: RelayConfiguration
        var timeLimiter: TimeRequestLimiter
        var logger: Logger
        /// Serves the member connections (``MemberConnection``).
        var relay: RelayServer
    }

    /// Called by the server bootstrap for each accepted connection (on its event loop): once its
    /// first bytes tell what it is, a member connection (TCP or WebSocket) is served by a
    /// ``MemberConnection`` at the end of its pipeline; an HTTP connection only fetches files.
    static func configurePipeline(of channel: Channel, settings: PipelineSettings) throws {
        let configuration = settings.configuration
        if let tls = configuration.tls {
            try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: tls))
        }
        let sniffer = ConnectionSniffer(
            configure: { channel, kind in
                switch kind {
                case .relay:
                    try channel.pipeline.syncOperations.addHandler(
                        ByteToMessageHandler(FrameDecoder(maximumFrameLength: configuration.maximumFrameLength)))
                    try channel.pipeline.syncOperations.addHandler(MessageToByteHandler(FrameEncoder()))
                    try channel.pipeline.syncOperations.addHandler(
                        TimeRequestResponder(timescale: configuration.timescale, limiter: settings.timeLimiter))
                    try channel.pipeline.syncOperations.addHandler(MemberConnection(relay: settings.relay))
                case .http:
                    try configureHTTP(channel, settings: settings)
                }
            })
        try channel.pipeline.syncOperations.addHandler(sniffer)
    }

    /// HTTP/1.1: the web client's files, and the upgrade of `/ws` to a WebSocket that carries frames.
    private static func configureHTTP(_ channel: Channel, settings: PipelineSettings) throws {
        let configuration = settings.configuration
        let files = WebClientHandler(files: configuration.webClient, logger: settings.logger)
        let boundFiles = NIOLoopBound(files, eventLoop: channel.eventLoop)
        // A WebSocket message holds one frame and its 4-byte length prefix.
        let messageLimit = configuration.maximumFrameLength + Frame.lengthPrefix
        let upgrader = NIOWebSocketServerUpgrader(
            maxFrameSize: messageLimit,
            automaticErrorHandling: true,
            shouldUpgrade: { channel, head in
                let path = head.uri.prefix { $0 != "?" }
                return channel.eventLoop.makeSucceededFuture(path == "/ws" ? HTTPHeaders() : nil)
            },
            upgradePipelineHandler: { channel, _ in
                channel.eventLoop.makeCompletedFuture {
                    let sync = channel.pipeline.syncOperations
                    try sync.addHandler(
                        NIOWebSocketFrameAggregator(
                            minNonFinalFragmentSize: 0, maxAccumulatedFrameCount: 256, maxAccumulatedFrameSize: messageLimit))
                    try sync.addHandler(WebSocketFrameBridge(maximumFrameLength: configuration.maximumFrameLength))
                    try sync.addHandler(
                        TimeRequestResponder(timescale: configuration.timescale, limiter: settings.timeLimiter))
                    try sync.addHandler(MemberConnection(relay: settings.relay))
                }
            })
        try channel.pipeline.syncOperations.configureHTTPServerPipeline(
            withServerUpgrade: (
                upgraders: [upgrader],
                completionHandler: { context in
                    context.pipeline.syncOperations.removeHandler(boundFiles.value, promise: nil)
                }
            ),
            withErrorHandling: true)
        try channel.pipeline.syncOperations.addHandler(files)
    }
}
