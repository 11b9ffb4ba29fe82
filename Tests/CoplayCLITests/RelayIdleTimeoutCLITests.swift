import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Connects to `127.0.0.1:port`, sends `request`, then reads until the peer closes (returns
/// the bytes and `true`) or `timeout` seconds pass without a close (`false`).
private func readUntilClosed(port: Int, request: [UInt8], timeout: Int) -> (bytes: [UInt8], closed: Bool) {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { return ([], false) }
    defer { close(fd) }
    var tv = timeval(tv_sec: timeout, tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
    var addr = sockaddr_in()
    addr.sin_family = sa_family_t(AF_INET)
    addr.sin_port = in_port_t(UInt16(port).bigEndian)
    addr.sin_addr.s_addr = inet_addr("127.0.0.1")
    let connected = withUnsafePointer(to: &addr) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard connected == 0 else { return ([], false) }
    _ = request.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) }
    var received: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
        let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if n == 0 { return (received, true) }
        if n < 0 { return (received, false) }  // timed out (or failed) without a close
        received += buffer[0..<n]
    }
}

@Suite("coplay serve --idle-timeout (relay keepalive)")
struct RelayIdleTimeoutCLITests {
    @Test("a connection that pings once and then says nothing is closed after the idle timeout")
    func closesSilentConnection() async throws {
        let (process, port) = try await CoplayProcess.startRelay(["--listen", "127.0.0.1:0", "--idle-timeout", "1"])
        defer { process.kill() }
        // A relay-protocol ping (docs/protocol.md): length 36, version 1, type 0x0B, sequence 7.
        let ping: [UInt8] = [0, 0, 0, 36, 1, 0x0B, 0, 0] + [UInt8](repeating: 0, count: 24) + [0, 0, 0, 0, 0, 0, 0, 7]
        let started = Date()
        let (bytes, closed) = await onOwnThread { readUntilClosed(port: port, request: ping, timeout: 30) }
        let elapsed = Date().timeIntervalSince(started)
        #expect(bytes.count == 40 && bytes[5] == 0x0C, "the ping was answered with a pong first")
        #expect(closed, "the relay closed the silent connection")
        #expect(elapsed >= 0.5, "not before the idle timeout: \(elapsed) s")
        process.terminate()
        #expect(await process.wait() == .exited(0))
    }

    @Test("a negative or absurd idle timeout is a usage error", arguments: ["-1", "1e12", "nan"])
    func badValue(value: String) async throws {
        let result = try await CoplayProcess.run(["serve", "--listen", "127.0.0.1:0", "--idle-timeout", value])
        #expect(result.status != 0)
        #expect(result.stderr.contains("idle-timeout"), "\(result.stderr)")
    }
}
