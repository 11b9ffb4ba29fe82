import GroupSessions
import Logging
import TestSupport

/// A relay transport whose current connection a test can cut abruptly: frames the relay sends
/// after the cut are never delivered, and sends after it fail, as on a broken link.
final class CuttableTransport: SessionTransport {
    let base: RelayTransport
    private let connections = LockedBox<[CuttableConnection]>([])

    init(port: Int) { base = RelayTransport(host: "127.0.0.1", port: port) }

    func connect(logger: Logger) async throws -> any TransportConnection {
        let connection = CuttableConnection(try await base.connect(logger: logger))
        connections.mutate { $0.append(connection) }
        return connection
    }

    /// Cuts the newest connection.
    func cut() { connections.value.last?.cut() }

    /// Connections made so far.
    var connectionCount: Int { connections.value.count }
}

struct LinkCut: Error {}

final class CuttableConnection: TransportConnection {
    let inbound: AsyncThrowingStream<Frame, any Error>
    private let base: any TransportConnection
    private let isCut = LockedBox(false)
    private let continuation: AsyncThrowingStream<Frame, any Error>.Continuation

    init(_ base: any TransportConnection) {
        self.base = base
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: Frame.self)
        inbound = stream
        self.continuation = continuation
        let isCut = self.isCut
        // Forwards the relay's frames until the connection ends or is cut.
        Task {
            do {
                for try await frame in base.inbound {
                    if isCut.value { break }
                    continuation.yield(frame)
                }
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
    }

    func send(_ frame: Frame) throws {
        if isCut.value { throw GroupSessionError.connectionClosed }
        try base.send(frame)
    }

    func close() { base.close() }

    func cut() {
        isCut.mutate { $0 = true }
        continuation.finish(throwing: LinkCut())
        base.close()
    }
}
