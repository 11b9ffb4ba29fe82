import Benchmark
import Foundation
import MediaProbe

// MediaProbe on the generated samples (scripts/make-samples.sh; made on first use): a header-only
// probe, and a probe that scans every packet to build the video frame timeline the players follow.

let samples = SampleMedia()

let benchmarks: @Sendable () -> Void = {
    let probeConfiguration = { (iterations: Int) in
        Benchmark.Configuration(
            metrics: [.wallClock, .throughput, .mallocCountTotal, .peakMemoryResident],
            warmupIterations: 2, maxDuration: .seconds(5), maxIterations: iterations,
            setup: { try samples.ensure() })
    }

    Benchmark("Probe (header only): cfr-25.mp4", configuration: probeConfiguration(500)) { benchmark in
        let info = try await MediaProbe.probe(samples.url("cfr-25.mp4"))
        guard info.primaryVideoStream != nil else { return benchmark.error("no video stream in cfr-25.mp4") }
        blackHole(info)
    }

    for (file, minimumFrames) in [("cfr-25.mp4", 50), ("cfr-59.94.ts", 100), ("vfr.mkv", 50)] {
        Benchmark("Probe + frame timeline (packet scan): \(file)", configuration: probeConfiguration(200)) { benchmark in
            let info = try await MediaProbe.probe(samples.url(file), options: .init(scanPackets: true))
            guard let timeline = info.primaryVideoStream?.timeline, timeline.count >= minimumFrames else {
                return benchmark.error("no frame timeline of at least \(minimumFrames) frames in \(file)")
            }
            blackHole(timeline.frameIndex(at: timeline.duration / 2))
        }
    }
}
