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
    /// A connection the relay will serve as a member connection once its first bytes tell what it
    /// is: a frame channel (TCP or WebSocket), or `nil` for an HTTP connection that only fetched
    /// files (or closed before saying anything).
    typealias PendingConnection = EventLoopFuture<NIOAsyncChannel<Frame, Frame>?>

    /// What every connection's pipeline needs.
    struct PipelineSettings: Sendable {
        var configuration: RelayConfiguration
        var timeLimiter: TimeRequestLimiter
        var logger: Logger
    }

    /// Called by the server bootstrap for each accepted connection (on its event loop).
    static func configurePipeline(of channel: Channel, settings: PipelineSettings) throws -> PendingConnection {
        let configuration = settings.configuration
        if let tls = configuration.tls {
            try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: tls))
        }
        let promise = channel.eventLoop.makePromise(of: NIOAsyncChannel<Frame, Frame>?.self)
        channel.closeFuture.whenComplete { _ in promise.succeed(nil) }  // ignored once succeeded
        let sniffer = ConnectionSniffer(
            configure: { channel, kind in
                switch kind {
                case .relay:
                    try channel.pipeline.syncOperations.addHandler(
                        ByteToMessageHandler(FrameDecoder(maximumFrameLength: configuration.maximumFrameLength)))
                    try channel.pipeline.syncOperations.addHandler(MessageToByteHandler(FrameEncoder()))
                    try channel.pipeline.syncOperations.addHandler(
                        TimeRequestResponder(timescale: configuration.timescale, limiter: settings.timeLimiter))
                    promise.succeed(try NIOAsyncChannel<Frame, Frame>(wrappingChannelSynchronously: channel))
                case .http:
                    try configureHTTP(channel, settings: settings, promise: promise)
                }
            },
            undecided: { promise.succeed(nil) })
        try channel.pipeline.syncOperations.addHandler(sniffer)
        return promise.futureResult
    }

    /// HTTP/1.1: the web client's files, and the upgrade of `/ws` to a WebSocket that carries frames.
    private static func configureHTTP(
        _ channel: Channel, settings: PipelineSettings, promise: EventLoopPromise<NIOAsyncChannel<Frame, Frame>?>
    ) throws {
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
                    promise.succeed(try NIOAsyncChannel<Frame, Frame>(wrappingChannelSynchronously: channel))
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
