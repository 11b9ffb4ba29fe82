import ClockSync
import Foundation
import Testing
import TestSupport

/// The shared vectors of the clock filter (`Tests/Vectors/clock/filter.json`): exchanges (the four
/// NTP timestamps) fed one by one to a ``SampleFilter``, with the sample each makes and the estimate
/// after each. The page's `clock.js` reads the same file (`Tests/Web/clockvectors.test.mjs`) and must
/// compute the same samples and estimates (to 1e-12 s; the two sum and sort doubles in the same order,
/// so in practice exactly).
///
/// The traces are made of arithmetic patterns, not a random generator: a clock 3.1 ms off and
/// drifting, a base delay with queueing in both directions, outliers, a route change, samples
/// arriving out of local order, and a window bounded by capacity and by age.
///
/// Written with `COPLAY_WRITE_VECTORS=1`; otherwise the file must equal what this build computes.
@Suite("Clock filter vectors shared with the page")
struct FilterVectorTests {
    static let file = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Vectors/clock/filter.json")
    static let writing = ProcessInfo.processInfo.environment["COPLAY_WRITE_VECTORS"] == "1"

    struct Vectors: Codable, Equatable {
        var traces: [Trace]
    }

    /// A filter configuration (the page's field names) and its exchanges.
    struct Trace: Codable, Equatable {
        var name: String
        var configuration: Configuration
        var steps: [Step]
    }

    struct Configuration: Codable, Equatable {
        var capacity: Int
        /// `nil`: no age limit (infinity).
        var maximumAge: Double?
        var relativeDelayTolerance: Double
        var absoluteDelayTolerance: Double
        var minimumDriftSpan: Double
        var maximumDriftPPM: Double
        var driftPriorPPM: Double
    }

    /// One exchange (raw 64-bit NTP timestamps as decimal strings), its sample and the estimate after it.
    struct Step: Codable, Equatable {
        var t1: String, t2: String, t3: String, t4: String
        var offset: Double
        var delay: Double
        var localTime: String
        var estimate: Estimate
    }

    struct Estimate: Codable, Equatable {
        var localTime: String
        var offset: Double
        var driftPPM: Double
        /// `nil` while there is no drift estimate (infinity).
        var driftErrorPPM: Double?
        var offsetStandardError: Double
        var bestDelay: Double
        var worstUsedDelay: Double
        var usedSamples: Int
        var envelopeHalfWidth: Double
        var errorBound: Double?
    }

    static func finite(_ value: Double) -> Double? { value.isFinite ? value : nil }

    static func configuration(_ filter: SampleFilter.Configuration) -> Configuration {
        Configuration(
            capacity: filter.capacity, maximumAge: finite(filter.maximumAge), relativeDelayTolerance: filter.relativeDelayTolerance,
            absoluteDelayTolerance: filter.absoluteDelayTolerance, minimumDriftSpan: filter.minimumDriftSpan,
            maximumDriftPPM: filter.maximumDriftPPM, driftPriorPPM: filter.driftPriorPPM)
    }

    /// An exchange at local time `local` (seconds after a fixed origin), with the server `offset`
    /// seconds ahead, `forward` and `backward` one-way delays and `hold` seconds inside the server.
    struct Exchange {
        var local: Double
        var offset: Double
        var forward: Double
        var backward: Double
        var hold = 50e-6
    }

    static let origin = NTPTimestamp(unixSeconds: 1_790_000_000)

    static func trace(_ name: String, _ filter: SampleFilter.Configuration, _ exchanges: [Exchange]) -> Trace {
        var sampleFilter = SampleFilter(configuration: filter)
        var steps: [Step] = []
        for exchange in exchanges {
            let t1 = origin.advanced(bySeconds: exchange.local)
            let t2 = origin.advanced(bySeconds: exchange.local + exchange.offset + exchange.forward)
            let t3 = t2.advanced(bySeconds: exchange.hold)
            let t4 = origin.advanced(bySeconds: exchange.local + exchange.forward + exchange.hold + exchange.backward)
            let sample = NTPSample(t1: t1, t2: t2, t3: t3, t4: t4)
            sampleFilter.add(sample)
            let estimate = sampleFilter.estimate()!
            steps.append(Step(
                t1: String(t1.rawValue), t2: String(t2.rawValue), t3: String(t3.rawValue), t4: String(t4.rawValue),
                offset: sample.offset, delay: sample.delay, localTime: String(sample.localTime.rawValue),
                estimate: Estimate(
                    localTime: String(estimate.localTime.rawValue), offset: estimate.offset, driftPPM: estimate.driftPPM,
                    driftErrorPPM: finite(estimate.driftErrorPPM), offsetStandardError: estimate.offsetStandardError,
                    bestDelay: estimate.bestDelay, worstUsedDelay: estimate.worstUsedDelay, usedSamples: estimate.usedSamples,
                    envelopeHalfWidth: estimate.envelopeHalfWidth, errorBound: finite(estimate.errorBound))))
        }
        return Trace(name: name, configuration: configuration(filter), steps: steps)
    }

    /// Queueing in 0...1 from an arithmetic pattern (the same on every run and in every language).
    static func queueing(_ i: Int, _ multiplier: Int) -> Double { Double((i * multiplier) % 97) / 97 }

    static func make() -> Vectors {
        let playback = TimeClient<ContinuousClock>.Configuration.playback.filter
        var traces: [Trace] = []
        // A clock 3.1 ms behind drifting 40 ppm; queueing up to 2 ms each way; every 13th exchange 30 ms late.
        traces.append(trace("default filter, drift, queueing and outliers", .init(), (0..<40).map { i in
            let local = 0.5 * Double(i)
            return Exchange(
                local: local, offset: 0.0031 + 40e-6 * local, forward: 100e-6 + 2e-3 * queueing(i, 7919) + (i % 13 == 12 ? 0.03 : 0),
                backward: 100e-6 + 2e-3 * queueing(i, 104_729))
        }))
        // The playback filter over 60 s with -120 ppm and a route change (base delay 0.2 -> 1.5 ms) at 40 s.
        traces.append(trace("playback filter, a route change", playback, (0..<240).map { i in
            let local = 0.25 * Double(i)
            let base = local < 40 ? 100e-6 : 750e-6
            return Exchange(
                local: local, offset: -0.012 - 120e-6 * local, forward: base + 400e-6 * queueing(i, 31),
                backward: base + 900e-6 * queueing(i, 53))
        }))
        // A window of 16 samples and 5 s; an exchange now and then from earlier local time (out of order).
        var bounded = SampleFilter.Configuration()
        bounded.capacity = 16
        bounded.maximumAge = 5
        bounded.minimumDriftSpan = 1
        traces.append(trace("capacity 16, 5 s of age, out of order", bounded, (0..<60).map { i in
            let local = 0.3 * Double(i) - (i % 7 == 6 ? 0.7 : 0)
            return Exchange(
                local: local, offset: 0.25 + 15e-6 * local, forward: 300e-6 + 600e-6 * queueing(i, 61),
                backward: 300e-6 + 150e-6 * queueing(i, 89), hold: 10e-6 * Double(i % 5))
        }))
        // Loopback: the two clocks' readings give a negative delay, raised to the 1 µs floor.
        traces.append(trace("loopback, delays at the floor", .init(), (0..<12).map { i in
            Exchange(local: Double(i), offset: 1e-7, forward: -2e-6, backward: 1e-6 * queueing(i, 17), hold: 0)
        }))
        return Vectors(traces: traces)
    }

    @Test func sharedVectors() throws {
        let vector = Self.make()
        guard let stored = try VectorFile.writeOrRead(vector, at: Self.file, writing: Self.writing) else { return }
        #expect(stored == vector, "the file differs from the Swift values; run with COPLAY_WRITE_VECTORS=1 after a deliberate change")
    }

    @Test("the traces reach what they are made to show: a drift found, a window bounded, the delay floor")
    func tracesShowTheirCase() {
        let traces = Self.make().traces
        let drift = traces[0].steps.last!.estimate
        #expect(abs(drift.driftPPM - 40) < 15, "drift \(drift.driftPPM) ppm")
        #expect(abs(drift.offset - (0.0031 + 40e-6 * 19.5)) < 0.5e-3)
        let route = traces[1].steps.last!.estimate
        #expect(abs(route.driftPPM + 120) < 30, "drift \(route.driftPPM) ppm")
        #expect(traces[2].steps.map(\.estimate.usedSamples).max()! <= 16)
        #expect(traces[2].steps.contains { $0.estimate.usedSamples < 16 && $0 != traces[2].steps.first })
        #expect(traces[3].steps.allSatisfy { $0.delay == NTPSample.minimumDelay })
    }
}
