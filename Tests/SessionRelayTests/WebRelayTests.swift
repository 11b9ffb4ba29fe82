import ClockSync
import Foundation
@testable import GroupSessions
import Logging
import NIOCore
import NIOWebSocket
import SessionRelay
import Testing
import TestSupport

/// The relay's one port as a browser sees it: the page over HTTP, members over a WebSocket at
/// `/ws`, time requests in band; TCP members on the same port meanwhile.
@Suite("Relay: the web client's port (HTTP, WebSocket, in-band time)", .timeLimit(.minutes(5)))
struct WebRelayTests {
    /// A relay that serves a small page directory.
    func withWebRelay(
        logger: Logger = Logger(label: "test.relay"), _ body: (RelayServer, Int) async throws -> Void
    ) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("coplay-web-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("lib"), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try Data("<!doctype html><title>coplay</title>".utf8).write(to: directory.appendingPathComponent("index.html"))
        try Data("export const x = 1;".utf8).write(to: directory.appendingPathComponent("lib/app.js"))
        var configuration = RelayConfiguration(host: "127.0.0.1", port: 0)
        configuration.webClient = try WebClientFiles(directory: directory.path)
        try await withRelay(configuration, logger: logger, body)
    }

    @Test("the page is served with cross-origin isolation; unknown paths, other methods and .. get errors")
    func servesThePage() async throws {
        try await withWebRelay { _, port in
            let page = try RawHTTP.exchange(port: port, request: "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            #expect(page.status.contains("200"))
            #expect(page.headers["content-type"] == "text/html; charset=utf-8")
            #expect(page.headers["cross-origin-opener-policy"] == "same-origin")
            #expect(page.headers["cross-origin-embedder-policy"] == "require-corp")
            #expect(page.headers["content-security-policy"]?.contains("script-src 'self'") == true)
            #expect(page.body.contains("<title>coplay</title>"))
            let script = try RawHTTP.exchange(port: port, request: "GET /lib/app.js?v=1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            #expect(script.headers["content-type"] == "text/javascript; charset=utf-8")
            let etag = try #require(script.headers["etag"])
            let cached = try RawHTTP.exchange(
                port: port, request: "GET /lib/app.js HTTP/1.1\r\nHost: x\r\nIf-None-Match: \(etag)\r\nConnection: close\r\n\r\n")
            #expect(cached.status.contains("304"))
            for (request, status) in [
                ("GET /nope.js HTTP/1.1", "404"), ("GET /../../etc/passwd HTTP/1.1", "404"), ("GET /lib/../index.html HTTP/1.1", "404"),
                ("POST / HTTP/1.1", "405"), ("GET /ws HTTP/1.1", "426"),
            ] {
                let answer = try RawHTTP.exchange(port: port, request: "\(request)\r\nHost: x\r\nConnection: close\r\nContent-Length: 0\r\n\r\n")
                #expect(answer.status.contains(status), "\(request): \(answer.status)")
            }
            let head = try RawHTTP.exchange(port: port, request: "HEAD / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            #expect(head.status.contains("200") && head.body.isEmpty)
        }
    }

    @Test("a WebSocket member and a TCP member share an AES-256-GCM session, both ways, end to end")
    func webSocketMember() async throws {
        try await withWebRelay { relay, port in
            let invite = Invite.generate(host: "127.0.0.1", port: port, suite: .aes256GCM)
            let center = GroupActivityCenter<WatchMovie>(transport: RelayTransport(host: "127.0.0.1", port: port), logger: Logger(label: "test"))
            let native = try await center.activate(WatchMovie(movie: "m"), invite: invite)
            let fromBrowser = Collector(GroupSessionMessenger(session: native).messages(of: Data.self))
            try await native.join()

            let browser = try await WebSocketTestClient.connect(port: port)
            defer { browser.close() }
            let me = ParticipantID(rawValue: 0xB0B)
            browser.send(Frame(type: .hello, session: invite.session, sender: me,
                               payload: HelloPayload(token: SessionKeys(invite: invite).joinToken).encoded()))
            browser.send(Frame(type: .join, session: invite.session, sender: me))
            await eventually("the native member sees the browser join") { native.activeParticipants.count == 2 }
            #expect(browser.frames.contains { $0.type == .welcome })

            // Native to browser: the browser opens it with the AES suite.
            try GroupSessionMessenger(session: native).send(Data("to the browser".utf8))
            var cipher = PayloadCipher(keys: SessionKeys(invite: invite))
            let expected = Envelope(kind: .message, name: Envelope.rawDataName, body: Array("to the browser".utf8)).encoded()
            await eventually("the browser got the message (after the retained activity)") {
                browser.frames.filter { $0.type == .data }.count >= 2
            }
            // Every data frame opens under the AES suite: the activity, then the message.
            let opened = try browser.frames.filter { $0.type == .data }.map { try cipher.open($0).plaintext }
            #expect(opened.first?[1] == Envelope.Kind.activity.rawValue)
            #expect(opened.contains(expected))

            // Browser to native: sealed by the browser's side with the same rules.
            let envelope = Envelope(kind: .message, name: Envelope.rawDataName, body: Array("from the browser".utf8)).encoded()
            browser.send(try cipher.seal(envelope, route: DataRoute(senderSequence: 1), flags: [], sender: me))
            await eventually("the native member got it") { fromBrowser.count == 1 }
            #expect(fromBrowser.values.first.map { Data($0.0) } == Data("from the browser".utf8))
            await eventually("the browser got its ack") { browser.frames.contains { $0.type == .ack } }
            #expect(relay.metrics.participants == 2)
            native.leave()
        }
    }

    @Test("time requests are answered in band on the relay's NTP timescale, before hello, over TCP and WebSocket")
    func timeRequests() async throws {
        try await withWebRelay { relay, port in
            let browser = try await WebSocketTestClient.connect(port: port)
            defer { browser.close() }
            let session = SessionID.random()
            let t1 = NTPTimestamp.systemNow().rawValue
            browser.send(Frame(type: .timeRequest, session: session, sender: ParticipantID(rawValue: 7),
                               payload: TimeExchangePayload(clientTransmit: t1).encoded()))
            await eventually("a reply") { browser.frames.contains { $0.type == .timeReply } }
            let reply = try #require(browser.frames.first { $0.type == .timeReply })
            #expect(reply.sender.rawValue == 0 && reply.sequence == 0 && reply.session == session)
            let times = try TimeExchangePayload(decoding: reply.payload, reply: true)
            #expect(times.clientTransmit == t1)
            let t2 = NTPTimestamp(rawValue: try #require(times.relayReceive))
            let t3 = NTPTimestamp(rawValue: try #require(times.relayTransmit))
            #expect(t3.seconds(since: t2) >= 0 && t3.seconds(since: t2) < 0.5)
            let timescaleNow = relay.configuration.timescale.now()
            #expect(abs(timescaleNow.seconds(since: t3)) < 5, "on the relay's timescale")
            #expect(abs(t2.seconds(since: NTPTimestamp(rawValue: t1))) < 5, "close to UTC")

            // TCP members may use it too (no hello either).
            let connection = try await RelayTransport(host: "127.0.0.1", port: port).connect(logger: Logger(label: "x"))
            let received = Collector(connection.inbound)
            try connection.send(Frame(type: .timeRequest, session: session, sender: ParticipantID(rawValue: 8),
                                      payload: TimeExchangePayload(clientTransmit: 42).encoded()))
            await eventually("a TCP reply") { received.values.contains { $0.type == .timeReply } }
            // A truncated request is dropped, not answered and not fatal.
            browser.send(Frame(type: .timeRequest, session: session, sender: ParticipantID(rawValue: 7), payload: ByteBuffer(bytes: [1, 2])))
            browser.send(Frame(type: .timeRequest, session: session, sender: ParticipantID(rawValue: 7),
                               payload: TimeExchangePayload(clientTransmit: 99).encoded()))
            await eventually("the next request is answered") { browser.frames.filter { $0.type == .timeReply }.count == 2 }
            #expect(relay.metrics.sessions == 0, "time frames never open a session")
        }
    }

    @Test("WebSocket garbage: a malformed message gets an error frame and close 1002, text gets 1003; the others carry on")
    func garbage() async throws {
        try await withWebRelay { _, port in
            let invite = Invite.generate(host: "127.0.0.1", port: port, suite: .aes256GCM)
            let calm = try await RawClient.connect(port: port, invite: invite)

            let truncated = try await WebSocketTestClient.connect(port: port)
            truncated.send(.binary, [0, 0, 0, 40, 1, 6, 0])  // announces 40 bytes, carries 3
            await eventually("closed 1002", timeout: .seconds(60)) { truncated.closed.value }
            #expect(truncated.closeCode == .protocolError)
            let error = try #require(truncated.frames.first { $0.type == .error })
            #expect(try ErrorPayload(decoding: error.payload).code == .malformed)

            let trailing = try await WebSocketTestClient.connect(port: port)
            var two = ByteBuffer()
            FrameCodec.encode(Frame(type: .ping, session: invite.session, sender: ParticipantID(rawValue: 9)), into: &two)
            FrameCodec.encode(Frame(type: .ping, session: invite.session, sender: ParticipantID(rawValue: 9)), into: &two)
            trailing.send(.binary, Array(two.readableBytesView))  // two frames in one message
            await eventually("closed", timeout: .seconds(60)) { trailing.closed.value }
            #expect(trailing.closeCode == .protocolError)

            let huge = try await WebSocketTestClient.connect(port: port)
            huge.send(.binary, [0x7F, 0, 0, 0, 1])
            await eventually("closed", timeout: .seconds(60)) { huge.closed.value }
            #expect(try huge.frames.first.map { try ErrorPayload(decoding: $0.payload).code } == .frameTooLarge)

            let text = try await WebSocketTestClient.connect(port: port)
            text.send(.text, Array("hello".utf8))
            await eventually("closed 1003", timeout: .seconds(60)) { text.closed.value }
            #expect(text.closeCode == .unacceptableData)
            #expect(text.frames.isEmpty)

            // The calm member is untouched and still served.
            try calm.connection.send(Frame(type: .ping, session: invite.session, sender: calm.id, sequence: 5))
            await eventually("calm gets its pong") { calm.received.values.contains { $0.type == .pong } }
            #expect(calm.errors().isEmpty)
        }
    }

    @Test("no request the relay receives and no log line carries the invite's secret")
    func secretStaysInTheFragment() async throws {
        let records = LockedBox<[String]>([])
        let logger = Logger(label: "relay") { _ in CapturingLogHandler(records: records) }
        try await withWebRelay(logger: logger) { _, port in
            let invite = Invite.generate(host: "127.0.0.1", port: port, suite: .aes256GCM)
            let link = invite.webPageURL(media: "http://127.0.0.1:1/clip.mp4", name: "Ann")
            let secret = String(invite.description.split(separator: "#")[1])
            // What a browser requests for the link is the part before '#': "/" here.
            let beforeFragment = String(link.split(separator: "#")[0])
            #expect(beforeFragment == "http://127.0.0.1:\(port)/")
            #expect(!beforeFragment.contains(secret))
            _ = try RawHTTP.exchange(port: port, request: "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            #expect(link.hasPrefix("http://127.0.0.1:\(port)/#invite=coplay%3A%2F%2F127.0.0.1%3A\(port)%2F"))
            #expect(link.contains("%3Faead%3Daes-256-gcm%23"))
            #expect(link.hasSuffix("&media=http%3A%2F%2F127.0.0.1%3A1%2Fclip.mp4&name=Ann"))
            for record in records.value { #expect(!record.contains(secret)) }
        }
    }
}

/// A single HTTP/1.1 exchange over a blocking loopback socket (tests only).
enum RawHTTP {
    static func exchange(port: Int, request: String) throws -> (status: String, headers: [String: String], body: String) {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw RawHTTPError.socket }
        defer { close(descriptor) }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw RawHTTPError.connect }
        let bytes = Array(request.utf8)
        guard write(descriptor, bytes, bytes.count) == bytes.count else { throw RawHTTPError.write }
        var response: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = read(descriptor, &chunk, chunk.count)
            if count <= 0 { break }
            response += chunk[0..<count]
        }
        let text = String(decoding: response, as: UTF8.self)
        let parts = text.components(separatedBy: "\r\n\r\n")
        let lines = parts[0].components(separatedBy: "\r\n")
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return (lines.first ?? "", headers, parts.dropFirst().joined(separator: "\r\n\r\n"))
    }
}

enum RawHTTPError: Error {
    case socket, connect, write
}
