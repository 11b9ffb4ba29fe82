import ArgumentParser

/// A `HOST:PORT` (or `[IPv6]:PORT`) command-line argument.
struct TimeEndpoint: Sendable, Hashable, CustomStringConvertible {
    var host: String
    var port: Int

    /// Parses `HOST:PORT`; `defaultPort` is used when the port is omitted.
    init(parsing text: String, defaultPort: Int? = nil) throws {
        var host = Substring(text)
        var portText: Substring?
        if host.hasPrefix("[") {
            guard let close = host.firstIndex(of: "]") else {
                throw ValidationError("'\(text)' is not HOST:PORT (unclosed '[')")
            }
            let rest = host[host.index(after: close)...]
            host = host[host.index(after: host.startIndex)..<close]
            if rest.hasPrefix(":") { portText = rest.dropFirst() } else if !rest.isEmpty {
                throw ValidationError("'\(text)' is not [IPv6]:PORT")
            }
        } else if let colon = host.lastIndex(of: ":") {
            portText = host[host.index(after: colon)...]
            host = host[..<colon]
        }
        guard !host.isEmpty else { throw ValidationError("'\(text)' has no host (expected HOST:PORT)") }
        let port: Int
        if let portText {
            guard let value = Int(portText), (0...65535).contains(value) else {
                throw ValidationError("'\(portText)' is not a port number (0-65535) in '\(text)'")
            }
            port = value
        } else if let defaultPort {
            port = defaultPort
        } else {
            throw ValidationError("'\(text)' has no port (expected HOST:PORT)")
        }
        self.host = String(host)
        self.port = port
    }

    var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}
