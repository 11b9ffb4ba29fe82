import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A loopback TCP exchange: connect, send `request`, read until the peer closes or `expect` bytes
/// arrived or `timeout` passes (blocking calls, on a thread of their own).
private func exchange(port: Int, request: [UInt8], expect: Int = .max, timeout: TimeInterval = 30) async -> [UInt8] {
    await onOwnThread { blockingExchange(port: port, request: request, expect: expect, timeout: timeout) }
}

private func blockingExchange(port: Int, request: [UInt8], expect: Int, timeout: TimeInterval) -> [UInt8] {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { return [] }
    defer { close(fd) }
    var tv = timeval(tv_sec: Int(timeout), tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
    var addr = sockaddr_in()
    addr.sin_family = sa_family_t(AF_INET)
    addr.sin_port = in_port_t(UInt16(port).bigEndian)
    addr.sin_addr.s_addr = inet_addr("127.0.0.1")
    let connected = withUnsafePointer(to: &addr) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard connected == 0 else { return [] }
    _ = request.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) }
    var received: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65536)
    while received.count < expect {
        let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if n <= 0 { break }
        received += buffer[0..<n]
    }
    return received
}

/// A relay-protocol ping frame (docs/protocol.md): length 36, version 1, type 0x0B, sequence 42.
private let pingFrame: [UInt8] = [0, 0, 0, 36, 1, 0x0B, 0, 0] + [UInt8](repeating: 0, count: 24) + [0, 0, 0, 0, 0, 0, 0, 42]

/// Starts `coplay serve ARGS` and waits for its "listening" lines.
private func startServe(_ arguments: [String]) async throws -> (ChildProcess, [String]) {
    let process = try await CoplayProcess.start(["serve"] + arguments)
    let wantsMetrics = arguments.contains("--metrics")
    _ = await process.waitForLine(timeout: .seconds(60)) { _ in
        let lines = process.stdoutLines
        return lines.contains { $0.contains("listening on") } && (!wantsMetrics || lines.contains { $0.contains("metrics on") })
    }
    return (process, process.stdoutLines)
}

private func port(in line: String?) -> Int? {
    CoplayProcess.port(in: line)
}

@Suite("coplay serve")
struct ServeCommandTests {
    @Test("serve answers a ping, exposes metrics, and exits 0 on SIGTERM")
    func serveAndStop() async throws {
        let (process, lines) = try await startServe(["--listen", "127.0.0.1:0", "--metrics", "127.0.0.1:0"])
        defer { if process.isRunning { process.terminate() } }
        let relayPort = try #require(port(in: lines.first { $0.hasPrefix("coplay relay listening on") }))
        let metricsPort = try #require(port(in: lines.first { $0.contains("/metrics") }?.replacingOccurrences(of: "/metrics", with: "")))

        let reply = await exchange(port: relayPort, request: pingFrame, expect: 40)
        #expect(reply.count == 40)
        #expect(reply.count > 5 && reply[5] == 0x0C, "pong type")
        #expect(reply.suffix(8) == [0, 0, 0, 0, 0, 0, 0, 42], "pong echoes the sequence")

        let http = String(decoding: await exchange(port: metricsPort, request: Array("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n".utf8)), as: UTF8.self)
        #expect(http.hasPrefix("HTTP/1.1 200 OK"))
        #expect(http.contains("coplay_relay_sessions 0"))
        #expect(http.contains("coplay_relay_frames_received_total 1"))

        process.terminate()  // SIGTERM
        #expect(await process.wait() == .exited(0))
    }

    @Test("bad arguments are usage errors with a clear message", arguments: [
        (["serve", "--listen", "nonsense"], "HOST:PORT"),
        (["serve", "--listen", "127.0.0.1:99999"], "0...65535"),
        (["serve", "--tls", "only-one.pem"], "CERT KEY"),
        (["serve", "--tls", "/nonexistent/cert.pem", "/nonexistent/key.pem", "--listen", "127.0.0.1:0"], "cannot load --tls"),
    ])
    func badArguments(arguments: [String], message: String) async throws {
        let result = try await CoplayProcess.run(arguments)
        #expect(result.status != 0)
        #expect(result.stderr.contains(message), "\(result.stderr)")
    }

    @Test("serve --tls with an openssl-generated certificate starts in TLS mode")
    func tls() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("coplay-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let cert = dir.appendingPathComponent("cert.pem").path
        let key = dir.appendingPathComponent("key.pem").path
        let openssl = try await CoplayProcess.run(
            ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "1",
             "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
             "-keyout", key, "-out", cert],
            executable: URL(fileURLWithPath: "/usr/bin/openssl"))
        try #require(openssl.status == 0, "\(openssl.stderr)")
        let (process, lines) = try await startServe(["--listen", "127.0.0.1:0", "--tls", cert, key])
        defer { if process.isRunning { process.terminate() } }
        let line = try #require(lines.first { $0.hasPrefix("coplay relay listening on") })
        #expect(line.contains(" (TLS, key pin ") && line.hasSuffix(")"))
        // A plain-TCP ping gets no pong: the relay expects a TLS handshake.
        let address = String(line.prefix { $0 != "(" }).trimmingCharacters(in: .whitespaces)
        let reply = await exchange(port: try #require(port(in: address)), request: pingFrame, timeout: 5)
        #expect(!(reply.count >= 40 && reply[5] == 0x0C))
        process.terminate()
        #expect(await process.wait() == .exited(0))
    }
}
