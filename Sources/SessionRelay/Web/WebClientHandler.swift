import Logging
import NIOCore
import NIOHTTP1

/// Serves the browser client's files over HTTP/1.1 on the relay's port (`GET` and `HEAD`).
///
/// The page is served cross-origin isolated (`Cross-Origin-Opener-Policy: same-origin`,
/// `Cross-Origin-Embedder-Policy: require-corp`), which gives it a 5 µs `performance.now()`
/// instead of 100 µs, and with a content security policy that lets it load scripts only from the
/// relay. Requests carry no secret: the invite lives in the page URL's fragment, which browsers
/// never send; the log records only the method, the path without its query, and the status.
final class WebClientHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    /// How long an HTTP connection may stay silent before it is closed.
    static let idleTimeout = TimeAmount.seconds(30)

    private let files: WebClientFiles?
    private let logger: Logger
    private var request: HTTPRequestHead?
    private var idleClose: Scheduled<Void>?

    /// - Parameter files: the client's files, or `nil` on a relay that serves only the WebSocket.
    init(files: WebClientFiles?, logger: Logger) {
        self.files = files
        self.logger = logger
    }

    func handlerAdded(context: ChannelHandlerContext) {
        scheduleIdleClose(context: context)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        idleClose?.cancel()  // upgraded to a WebSocket: the hub's keepalive rules from here on
    }

    private func scheduleIdleClose(context: ChannelHandlerContext) {
        idleClose?.cancel()
        let channel = context.channel
        idleClose = context.eventLoop.scheduleTask(in: Self.idleTimeout) { channel.close(promise: nil) }
    }

    /// Headers on every response.
    static let commonHeaders: [(String, String)] = [
        ("Cross-Origin-Opener-Policy", "same-origin"),
        ("Cross-Origin-Embedder-Policy", "require-corp"),
        ("Cross-Origin-Resource-Policy", "same-origin"),
        ("X-Content-Type-Options", "nosniff"),
        ("Referrer-Policy", "no-referrer"),
        ("Content-Security-Policy",
         "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; "
            + "media-src 'self' blob: http: https:; connect-src 'self' http: https: ws: wss:; "
            + "object-src 'none'; base-uri 'none'; frame-ancestors 'none'"),
    ]

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        scheduleIdleClose(context: context)
        switch unwrapInboundIn(data) {
        case .head(let head):
            request = head
        case .body:
            break  // GET and HEAD carry none worth reading; anything else is refused at .end
        case .end:
            guard let head = request else { return }
            request = nil
            respond(to: head, context: context)
        }
    }

    private func respond(to head: HTTPRequestHead, context: ChannelHandlerContext) {
        let path = String(head.uri.prefix { $0 != "?" && $0 != "#" })
        var status: HTTPResponseStatus
        var headers = HTTPHeaders(Self.commonHeaders)
        var body: ByteBuffer?
        if head.method != .GET && head.method != .HEAD {
            status = .methodNotAllowed
            headers.add(name: "Allow", value: "GET, HEAD")
            body = Self.message("Only GET and HEAD are served here.")
        } else if path == "/ws" {
            status = .upgradeRequired
            headers.add(name: "Upgrade", value: "websocket")
            body = Self.message("/ws is the relay's WebSocket endpoint: connect with a WebSocket client.")
        } else if files == nil {
            status = .notFound
            body = Self.message("This relay does not serve the web client (coplay serve does); its WebSocket is /ws.")
        } else if let file = files?.file(for: path) {
            headers.add(name: "Content-Type", value: file.contentType)
            headers.add(name: "Cache-Control", value: "no-cache")
            headers.add(name: "ETag", value: file.etag)
            if head.headers["If-None-Match"].contains(file.etag) {
                status = .notModified
            } else {
                status = .ok
                body = file.body
            }
        } else {
            status = .notFound
            body = Self.message("Nothing here. The coplay page is at /.")
        }
        if body != nil, !headers.contains(name: "Content-Type") {
            headers.add(name: "Content-Type", value: "text/plain; charset=utf-8")
        }
        headers.add(name: "Content-Length", value: "\(body?.readableBytes ?? 0)")
        let keepAlive = head.isKeepAlive
        headers.add(name: "Connection", value: keepAlive ? "keep-alive" : "close")
        logger.debug("http", metadata: ["method": "\(head.method)", "path": "\(path)", "status": "\(status.code)"])

        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: status, headers: headers))), promise: nil)
        if let body, head.method != .HEAD {
            context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
        }
        let done = context.writeAndFlush(wrapOutboundOut(.end(nil)))
        if !keepAlive {
            let channel = context.channel
            done.whenComplete { _ in channel.close(promise: nil) }
        }
    }

    private static func message(_ text: String) -> ByteBuffer {
        ByteBuffer(string: text + "\n")
    }
}
