import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A port on 127.0.0.1 that is free for both TCP and UDP right now (bound, then released), for a
/// server that cannot bind port 0 and say which port it got (a relay restarted on the same port,
/// PostgreSQL, a `--web` listener). Prefer `--listen 127.0.0.1:0` and the printed port where a
/// command offers it: this is racy against other processes.
///
/// Drawn below Linux's ephemeral range (32768-60999), so that no outgoing connection or port-0 bind
/// of another test takes it between this check and the server's bind.
///
/// ```swift
/// let port = freePort()
/// let relay = try await CoplayProcess.start(["serve", "--listen", "127.0.0.1:\(port)"])
/// ```
public func freePort() -> Int {
    for _ in 0..<1000 {
        let port = Int.random(in: 20000..<32768)
        if canBind(port: port, stream: true) && canBind(port: port, stream: false) { return port }
    }
    preconditionFailure("no free port on 127.0.0.1 in 20000-32767 after 1000 tries")
}

/// Whether a TCP connection to 127.0.0.1:`port` is accepted now (a server is up).
public func canConnect(port: Int) -> Bool {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard descriptor >= 0 else { return false }
    defer { close(descriptor) }
    return withLoopback(port: port) { connect(descriptor, $0, $1) } == 0
}

private func canBind(port: Int, stream: Bool) -> Bool {
    let descriptor = socket(AF_INET, Int32(stream ? SOCK_STREAM.rawValue : SOCK_DGRAM.rawValue), 0)
    guard descriptor >= 0 else { return false }
    defer { close(descriptor) }
    return withLoopback(port: port) { bind(descriptor, $0, $1) } == 0
}

/// Calls `body` with the address 127.0.0.1:`port` as a `sockaddr` and its length.
private func withLoopback(port: Int, _ body: (UnsafePointer<sockaddr>, socklen_t) -> Int32) -> Int32 {
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    return withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
}
