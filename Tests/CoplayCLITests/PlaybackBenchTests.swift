import Foundation
import Testing

@Suite("coplay bench wakeup")
struct PlaybackBenchTests {
    @Test("reports presentation lateness for a sleeping and a spinning run")
    func wakeup() async throws {
        let result = try await CoplayProcess.run(["bench", "wakeup", "--frames", "40", "--fps", "100"], timeout: 120)
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.count == 2)
        for line in lines {
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            #expect(object?["bench"] as? String == "wakeup")
            #expect(object?["expectedFrames"] as? Int == 40)
            #expect((1...40).contains(object?["frames"] as? Int ?? 0))
            // Never early: the smallest lateness is not negative.
            #expect((object?["minMs"] as? Double ?? -1) >= 0)
        }
    }

    @Test("bad options are usage errors", arguments: [["--frames", "0"], ["--fps", "-3"], ["--spin-ms", "0"]])
    func badOptions(arguments: [String]) async throws {
        let result = try await CoplayProcess.run(["bench", "wakeup"] + arguments)
        #expect(result.status != 0)
        #expect(result.stderr.contains("Error"))
    }
}

@Suite("coplay bench group")
struct GroupBenchTests {
    @Test("players in one process play, seek, change rate and pause together; events are JSON Lines")
    func group() async throws {
        let result = try await CoplayProcess.run(
            ["bench", "group", "--players", "2", "--duration", "3", "--events"], timeout: 120)
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        var frames = 0
        for line in lines.dropLast() {
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            #expect(object?["type"] is String && object?["realtime"] is Double && object?["v"] as? Int == 2)
            if object?["type"] as? String == "frame" {
                frames += 1
                #expect(object?["index"] is Int && object?["pts"] is Double)
            }
        }
        #expect(frames > 50)
        let summary = try JSONSerialization.jsonObject(with: Data(lines.last!.utf8)) as? [String: Any]
        #expect(summary?["bench"] as? String == "group")
        #expect((summary?["pausedOnFrames"] as? [Int])?.count == 1)
        // Timing is reported, not asserted: the machine may be loaded.
        print("bench group summary: \(lines.last!)")
    }
}
