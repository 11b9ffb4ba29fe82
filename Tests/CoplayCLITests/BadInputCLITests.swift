import Foundation
import Testing

/// Inputs a new user tried that were refused for the wrong reason or accepted although meaningless.
@Suite("coplay: bad input gets a clear answer")
struct BadInputCLITests {
    static let invite = "coplay://127.0.0.1:9/0123456789abcdef0123456789abcdef#eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHg"

    @Test("time serve --offset -0.75 (a negative offset with a space) is taken as the offset")
    func negativeOffset() async throws {
        // startServer throws unless the server prints its listening line; the offset is checked by query.
        let (server, port) = try await TimeCommandTests.startServer(offset: -0.75, offsetArguments: ["--offset", "-0.75"])
        defer { server.terminate() }
        let query = try await CoplayProcess.run(["time", "query", "127.0.0.1:\(port)", "--json"], timeout: 30)
        #expect(query.status == 0, "\(query.stderr)")
        let offset = (try JSONSerialization.jsonObject(with: Data(query.stdout.utf8)) as? [String: Any])?["offset"] as? Double
        #expect(offset.map { abs($0 + 0.75) < 0.01 } == true, "served offset \(String(describing: offset))")
    }

    @Test("control rate outside 1/16...16 is refused before connecting", arguments: ["1e9", "0.01", "17", "-1", "nan"])
    func rateOutOfRange(rate: String) async throws {
        let result = try await CoplayProcess.run(["control", Self.invite, "rate", rate], timeout: 30)
        #expect(result.status != 0)
        #expect(result.stderr.contains("rate needs 0 (paused) or a rate between 0.0625 and 16"), "\(result.stderr)")
    }

    @Test("join --reconnect-for outside 1...86400 s is a usage error", arguments: ["0", "0.5", "1e9", "nan"])
    func reconnectForOutOfRange(value: String) async throws {
        let result = try await CoplayProcess.run(["join", Self.invite, "samples/cfr-25.mp4", "--reconnect-for", value], timeout: 30)
        #expect(result.status == 64, "status \(result.status): \(result.stderr)")
        #expect(result.stderr.contains("--reconnect-for needs seconds between 1 and 86400"), "\(result.stderr)")
    }

    @Test("control item with something that is not a stream identity (or a media fingerprint) is refused before connecting")
    func itemNotAFingerprint() async throws {
        let result = try await CoplayProcess.run(["control", Self.invite, "item", "v1:nonexistent"], timeout: 30)
        #expect(result.status != 0)
        #expect(result.stderr.contains("item needs a stream identity as `coplay probe` prints it"), "\(result.stderr)")
    }
}
