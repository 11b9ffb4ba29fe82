import Foundation
import Testing

@Suite("coplay demo")
struct DemoCommandTests {
    @Test("runs an embedded relay and players on a queue of two clips, moves on at an entry's end in step, pauses everyone on one frame, ends by itself",
          .timeLimit(.minutes(3)))
    func demo() async throws {
        let sample = CoplayProcess.packageRoot.appendingPathComponent("samples/cfr-25.mp4").path
        let second = CoplayProcess.packageRoot.appendingPathComponent("samples/cfr-60.mp4").path
        if !FileManager.default.fileExists(atPath: sample) || !FileManager.default.fileExists(atPath: second) {
            let made = try await CoplayProcess.run(
                [CoplayProcess.packageRoot.appendingPathComponent("scripts/make-samples.sh").path],
                executable: URL(fileURLWithPath: "/bin/bash"), timeout: 120)
            try #require(made.status == 0, "make-samples failed: \(made.stderr)")
        }
        let result = try await CoplayProcess.run(
            ["demo", sample, second, "--players", "3", "--duration", "12", "--events", "jsonl"], timeout: 120)
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix("demo: relay on 127.0.0.1:") == true)
        let final = try #require(lines.last { $0.hasPrefix("final: ") })
        // "final: N frames seen by every player; ..."
        let frames = Int(final.dropFirst("final: ".count).prefix { $0.isNumber }) ?? 0
        #expect(frames > 20, "\(final)")
        // The tour ends paused: every player's last stop is the same frame.
        var lastStop: [String: Int] = [:]
        for line in lines where line.hasPrefix("{") {
            guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                  object["type"] as? String == "stopped", let player = object["player"] as? String,
                  let index = object["index"] as? Int else { continue }
            lastStop[player] = index
        }
        #expect(lastStop.count == 3, "\(lastStop)")
        #expect(Set(lastStop.values).count == 1, "\(lastStop)")
        // The queue moved on at an entry's end, for every player, and the final line says how closely.
        var changed: Set<String> = []
        for line in lines where line.hasPrefix("{") {
            guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                  object["type"] as? String == "itemChanged", object["reason"] as? String == "end", let player = object["player"] as? String
            else { continue }
            changed.insert(player)
        }
        #expect(changed.count == 3, "not every player saw the queue move on: \(changed)")
        let spread = try #require(final.firstMatch(of: /to the next entry, first frames within ([0-9.]+) ms/), "\(final)")
        let milliseconds = try #require(Double(spread.1))
        // Half a frame interval of the faster clip (60 fps): 8.3 ms.
        #expect(milliseconds < 8.3, "\(final)")
        print("coplay demo test: \(final)")
    }

    @Test("bad input is a usage error")
    func usage() async throws {
        let players = try await CoplayProcess.run(["demo", "--players", "1"])
        #expect(players.status == 64)
        let missing = try await CoplayProcess.run(["demo", "/nonexistent.mp4"])
        #expect(missing.status == 64)
        #expect(missing.stderr.contains("does not exist"))
    }
}
