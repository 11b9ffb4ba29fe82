import Foundation
import MediaProbe
import PropertyBased
import Testing

@Suite("VideoFrameTimeline")
struct VideoFrameTimelineTests {
    @Test("timestamps in decode order come out sorted and de-duplicated")
    func sortsAndDeduplicates() {
        let timeline = VideoFrameTimeline(timeBase: Rational(1, 1000), timestamps: [80, 0, 40, 40, 120], endTimestamp: 160)
        #expect(timeline.timestamps == [0, 40, 80, 120])
        #expect(timeline.frameTimes == [0, 0.04, 0.08, 0.12])
        #expect(timeline.endTime == 0.16)
        #expect(timeline.duration == 0.16)
        #expect(timeline.grid == VideoFrameTimeline.FrameGrid(start: 0, frameDuration: 40, count: 4, timeBase: Rational(1, 1000)))
        #expect(timeline.grid?.frameRate == Rational(25, 1))
    }

    @Test("a variable-rate timeline has no grid")
    func variableRate() {
        let timeline = VideoFrameTimeline(timeBase: Rational(1, 1000), timestamps: [0, 42, 83, 100, 117])
        #expect(timeline.grid == nil)
        #expect(!timeline.isConstantRate)
        #expect(timeline.endTimestamp == 134)  // last interval repeated when the end is unknown
    }

    @Test("frameIndex(at:) before, between, on and after frames")
    func frameIndex() {
        let timeline = VideoFrameTimeline(timeBase: Rational(1, 1000), timestamps: [1000, 1040, 1100])
        #expect(timeline.frameIndex(at: 0.5) == nil)
        #expect(timeline.frameIndex(at: 1.0) == 0)
        #expect(timeline.frameIndex(at: 1.039) == 0)
        #expect(timeline.frameIndex(at: 1.04) == 1)
        #expect(timeline.frameIndex(at: 1.1) == 2)
        #expect(timeline.frameIndex(at: 99) == 2)
        #expect(VideoFrameTimeline(timeBase: Rational(1, 1000), timestamps: []).frameIndex(at: 0) == nil)
    }

    @Test("a grid expands to the same timeline it summarises")
    func gridRoundTrip() {
        let grid = VideoFrameTimeline.FrameGrid(start: 1001, frameDuration: 1001, count: 72, timeBase: Rational(1, 24000))
        let timeline = VideoFrameTimeline(grid: grid)
        #expect(timeline.count == 72)
        #expect(timeline.grid == grid)
        #expect(timeline.grid?.frameRate == Rational(24000, 1001))
        #expect(timeline.endTimestamp == 1001 * 73)
    }

    @Test("property: frameIndex(at: frameTime(i)) == i, and times between frames map to the earlier frame")
    func indexTimeRoundTrip() async {
        let gaps = Gen.int64(in: 1...5000).array(of: 1...200)
        await propertyCheck(count: 300, input: gaps, Gen.int64(in: -100_000...100_000), Gen.element(of: [1, 90, 1000, 12800, 24000, 90000])) { gaps, start, denominator in
            var stamps: [Int64] = []
            var t = start
            for gap in gaps { stamps.append(t); t += gap }
            let timeline = VideoFrameTimeline(timeBase: Rational(1, Int64(denominator ?? 1000)), timestamps: stamps.shuffled())
            #expect(timeline.count == stamps.count)
            for i in 0..<timeline.count {
                #expect(timeline.frameIndex(at: timeline.frameTime(i)) == i)
                if i + 1 < timeline.count {
                    let midway = (timeline.frameTime(i) + timeline.frameTime(i + 1)) / 2
                    #expect(timeline.frameIndex(at: midway) == i)
                }
            }
        }
    }

    @Test("property: any timestamps, even at the ends of Int64, build a sorted timeline without trapping")
    func totalOnExtremes() async {
        let extremes: [Int64] = [.max, .max - 1, .min + 1, 0, 1, -1, 1 << 62, -(1 << 62)]
        let stamp = Gen.int64(in: Int64.min + 1 ... Int64.max)
        await propertyCheck(count: 500, input: stamp.array(of: 0...20), Gen.element(of: extremes).array(of: 0...4)) { random, edges in
            let all = random + edges.compactMap { $0 }
            let timeline = VideoFrameTimeline(timeBase: Rational(1001, 30000), timestamps: all)
            #expect(timeline.timestamps == Array(Set(all)).sorted())
            #expect(timeline.endTimestamp >= (timeline.timestamps.last ?? 0))
            _ = timeline.grid?.frameRate
            for i in 0..<timeline.count { #expect(timeline.frameIndex(at: timeline.frameTime(i)) != nil) }
        }
    }

    @Test("the VFR samples carry their real frame times")
    func vfrSamples() async throws {
        for name in ["vfr.mkv", "vfr.mp4"] {
            let info = try await MediaProbe.shared.probe(Samples.url(name), options: .init(scanPackets: true))
            let timeline = try #require(info.primaryVideoStream?.timeline)
            #expect(timeline.count == 120, "\(name)")
            #expect(!timeline.isConstantRate, "\(name)")
            // 48 frames at 24 fps, 60 at 60 fps from 2 s, 12 at 10 fps from 3 s (rounded to the encoder's tick).
            let gaps = zip(timeline.frameTimes, timeline.frameTimes.dropFirst()).map { $1 - $0 }
            #expect(gaps.prefix(47).allSatisfy { abs($0 - 1.0 / 24) < 0.01 }, "\(name): 24 fps part")
            #expect(gaps.dropFirst(48).prefix(59).allSatisfy { abs($0 - 1.0 / 60) < 0.002 }, "\(name): 60 fps part")
            #expect(gaps.suffix(11).allSatisfy { abs($0 - 0.1) < 0.002 }, "\(name): 10 fps part")
            #expect(timeline.frameIndex(at: 2.5) == 48 + 30)
        }
    }

    @Test("the edit-list sample hides the frames before its edit")
    func editList() async throws {
        let info = try await MediaProbe.shared.probe(Samples.url("edit-list.mp4"), options: .init(scanPackets: true))
        let video = try #require(info.primaryVideoStream)
        let timeline = try #require(video.timeline)
        let packets = try #require(video.packetCount)
        #expect(packets > timeline.count)
        #expect(timeline.startTime == 0)
        #expect(timeline.isConstantRate)
        #expect(timeline.grid?.frameRate == Rational(25, 1))
    }

    @Test("a non-zero start time shows in the timeline")
    func startOffset() async throws {
        let info = try await MediaProbe.shared.probe(Samples.url("start-10s.mkv"), options: .init(scanPackets: true))
        let timeline = try #require(info.primaryVideoStream?.timeline)
        #expect(timeline.startTime >= 10)
        #expect(timeline.count == 50)
        #expect(timeline.isConstantRate)
    }
}
