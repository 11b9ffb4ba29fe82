import PropertyBased
import Testing

@testable import PlaybackCoordinator

@Suite("SyncController")
struct SyncControllerTests {
    @Test("thresholds: nothing below trimStart, trim against the error, seek above the seek threshold")
    func thresholds() {
        var controller = SyncController()
        #expect(controller.update(errorMilliseconds: 0.3) == .none)
        #expect(controller.update(errorMilliseconds: 0.6) == .trim(fraction: -0.005))
        #expect(controller.update(errorMilliseconds: 0.3) == .none)  // hysteresis: keeps trimming
        #expect(controller.update(errorMilliseconds: 0.05) == .endTrim)
        #expect(controller.update(errorMilliseconds: -0.7) == .trim(fraction: 0.005))
        #expect(controller.update(errorMilliseconds: 0.2) == .endTrim)  // crossed zero
        #expect(controller.update(errorMilliseconds: 45) == .seek)
        #expect(controller.update(errorMilliseconds: 0.6, canTrim: false) == .seek)  // paused: only seeks
    }

    /// Runs a decoder with constant drift under the controller; returns the errors and decisions.
    static func run(driftPPM: Double, initialErrorMs: Double, frames: Int = 3000, interval: Double = 0.04)
        -> (errors: [Double], decisions: [SyncController.Decision])
    {
        var controller = SyncController()
        var error = initialErrorMs
        var errors: [Double] = []
        var decisions: [SyncController.Decision] = []
        for _ in 0..<frames {
            let decision = controller.update(errorMilliseconds: error)
            decisions.append(decision)
            if decision == .seek { error = 0 }
            error += (driftPPM / 1e6 + controller.trim) * interval * 1e3
            errors.append(error)
        }
        return (errors, decisions)
    }

    @Test("with any drift up to 1000 ppm the error stays bounded and trims never reverse direction")
    func noOscillation() async {
        await propertyCheck(input: Gen.double(in: -1000...1000), Gen.double(in: -100...100)) { drift, initial in
            let (errors, decisions) = Self.run(driftPPM: drift, initialErrorMs: initial)
            let configuration = SyncController.Configuration()
            // Once the initial error is trimmed away (at trimFraction minus the drift per second),
            // the error stays within trimStart plus one frame of drift.
            let netMsPerFrame = (configuration.trimFraction - abs(drift) / 1e6) * 0.04 * 1e3
            let settle = 2 + Int(abs(initial) / netMsPerFrame)
            let bound = configuration.trimStartMs + abs(drift) / 1e6 * 0.04 * 1e3 + 1e-9
            #expect(errors.dropFirst(settle).allSatisfy { abs($0) <= bound })
            // Trims alternate with their ends, and (once settled) every trim opposes the drift.
            let trims = decisions.enumerated().compactMap { index, decision -> (Int, Double)? in
                if case .trim(let fraction) = decision { (index, fraction) } else { nil }
            }
            let settled = trims.filter { $0.0 > settle }
            if abs(drift) > 1 { #expect(settled.allSatisfy { ($0.1 > 0) == (drift < 0) }) }
            let corrections = decisions.filter { $0 != .none && $0 != .seek }
            for (a, b) in zip(corrections, corrections.dropFirst()) {
                #expect((a == .endTrim) != (b == .endTrim))
            }
        }
    }
}
