import ArgumentParser
import PlaybackCoordinator

/// `coplay host` / `coplay join` options that make a member imperfect on purpose, for benchmarks
/// and tests: a drifting local clock (which ClockSync must correct) and an imperfect decoder
/// (which the player's sync controller must correct).
struct PlaybackSimulationOptions: ParsableArguments {
    @Option(
        name: .long, parsing: .unconditional,
        help: ArgumentHelp(
            "Run this member's whole local clock fast (positive) or slow by PPM parts per million: the NTP client, the synced clock and the player all read it; event realtime stamps stay true.",
            valueName: "ppm"))
    var clockDriftPPM: Double = 0

    @Option(
        name: .long,
        help: ArgumentHelp("Simulate a decoder that starts moving MS milliseconds after each play instant.", valueName: "ms"))
    var startLatency: Double = 0

    @Option(
        name: .long, parsing: .unconditional,
        help: ArgumentHelp("Simulate a decoder whose presentation rate is off by PPM parts per million.", valueName: "ppm"))
    var decoderDriftPPM: Double = 0

    func validate() throws {
        guard clockDriftPPM.isFinite, abs(clockDriftPPM) <= 10_000 else {
            throw ValidationError("--clock-drift-ppm must be between -10000 and 10000")
        }
        guard startLatency.isFinite, startLatency >= 0, startLatency <= 10_000 else {
            throw ValidationError("--start-latency must be between 0 and 10000 ms")
        }
        guard decoderDriftPPM.isFinite, abs(decoderDriftPPM) <= 10_000 else {
            throw ValidationError("--decoder-drift-ppm must be between -10000 and 10000")
        }
    }

    /// The decoder imperfections these options ask for.
    var imperfections: HeadlessPlayerCore.Imperfections {
        .init(startLatency: .microseconds(Int64((startLatency * 1000).rounded())), driftPPM: decoderDriftPPM)
    }
}
