import PropertyBased
import Testing

@testable import PlaybackCoordinator

@Suite("MediaTimeline and PlaybackState")
struct MediaTimelineTests {
    @Test("grid frames: presentation times, counts and lookups", arguments: [24.0, 25, 29.97, 30, 60])
    func grid(rate: Double) {
        let timeline = MediaTimeline(identifier: "x", duration: 10, frameRate: rate)
        #expect(timeline.frameCount == Int((10 * rate).rounded(.up)))
        for index in [0, 1, timeline.frameCount / 2, timeline.frameCount - 1] {
            let pts = timeline.presentationTime(ofFrame: index)
            #expect(timeline.firstFrame(atOrAfter: pts) == index)
            #expect(timeline.frame(displayedAt: pts) == index)
            #expect(timeline.frame(displayedAt: pts + 0.5 / rate) == index)
            #expect(timeline.firstFrame(atOrAfter: pts + 0.5 / rate) == (index + 1 < timeline.frameCount ? index + 1 : nil))
        }
        #expect(timeline.frame(displayedAt: -1) == nil)
        #expect(timeline.firstFrame(atOrAfter: 11) == nil)
    }

    @Test("exact frame times agree with the equivalent grid")
    func exactMatchesGrid() async {
        let grid = MediaTimeline(identifier: "g", duration: 4, frameRate: 25)
        let exact = MediaTimeline(
            identifier: "e", duration: 4, frames: .exact((0..<grid.frameCount).map { grid.presentationTime(ofFrame: $0) }))
        await propertyCheck(input: Gen.double(in: -1...5)) { time in
            #expect(grid.firstFrame(atOrAfter: time) == exact.firstFrame(atOrAfter: time))
            #expect(grid.frame(displayedAt: time) == exact.frame(displayedAt: time))
        }
    }

    @Test("itemTime and referenceTime are inverse while playing")
    func stateInverse() async {
        await propertyCheck(input: Gen.double(in: 0.1...4), Gen.double(in: 0...3600), Gen.double(in: -100...100)) { rate, anchor, offset in
            let state = PlaybackState(
                item: "x", rate: rate, anchorItemTime: anchor, anchorReferenceTime: ReferenceTime(seconds: 1000), originator: "a")
            let t = ReferenceTime(seconds: 1000 + offset)
            let item = state.itemTime(at: t)
            #expect(abs(item - (anchor + rate * offset)) < 1e-6)
            let back = state.referenceTime(forItemTime: item)!
            #expect(abs((back - t).secondsValue) < 1e-8)
        }
    }

    @Test("a paused state stays at its anchor and has no reference time for other item times")
    func paused() {
        let state = PlaybackState(item: "x", rate: 0, anchorItemTime: 12, anchorReferenceTime: ReferenceTime(seconds: 5), originator: "a")
        #expect(state.itemTime(at: ReferenceTime(seconds: 500)) == 12)
        #expect(state.referenceTime(forItemTime: 13) == nil)
        #expect(state.intendedRate == 1)
        #expect(!state.isPlaying)
    }

    @Test("reference time arithmetic keeps nanoseconds")
    func referenceArithmetic() {
        let t = ReferenceTime(nanoseconds: 3_900_000_000_123_456_789)
        #expect((t + .nanoseconds(1)).nanoseconds == 3_900_000_000_123_456_790)
        #expect((t + .milliseconds(40)) - t == .milliseconds(40))
        #expect(Duration.seconds(-1.5).nanosecondsValue == -1_500_000_000)
        #expect(ReferenceTime(seconds: 1.000000001).nanoseconds == 1_000_000_001)
    }
}
