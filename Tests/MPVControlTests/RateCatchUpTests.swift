import MPVControl
import PlaybackCoordinator
import Testing

@Suite("RateCatchUp: removing a rate change's planned error over whole frames")
struct RateCatchUpTests {
    static let clip25 = MediaTimeline(identifier: "clip", duration: 60, frameRate: 25)

    @Test(
        "the trim removes exactly the error, within the limit, over the fewest frames",
        arguments: [(-0.038, 0.05), (-0.02, 0.05), (0.019, 0.05), (0.0333, 0.02), (-0.0004, 0.05)])
    func exact(ahead: Double, limit: Double) throws {
        let plan = try #require(RateCatchUp.plan(timeline: Self.clip25, changeInFrame: 200, ahead: ahead, maximumTrim: limit))
        #expect(abs(plan.trim - 1) <= limit)
        #expect(abs(plan.gain(timeline: Self.clip25, changeInFrame: 200) + ahead) < 1e-9)
        // One frame fewer would need more than the limit.
        if plan.frames > 1 {
            let shorter = Double(plan.frames - 1) / 25
            #expect(abs(1 / (1 + ahead / shorter) - 1) > limit)
        }
        // Behind (negative `ahead`) means faster than the group's rate, ahead means slower.
        #expect((plan.trim > 1) == (ahead < 0))
    }

    @Test("a 0.5 -> 1 change 1.7 ms into an 80 ms frame: 38.3 ms behind, caught up over 21 frames at 5 %")
    func halfToOne() throws {
        // At 0.5 the frame in progress lasts 80 ms; the change comes 3.4 ms into it, so mpv runs the
        // old rate for 76.6 ms more: (0.5 - 1) x 76.6 ms = -38.3 ms.
        let ahead = (0.5 - 1) * 0.0766
        let plan = try #require(RateCatchUp.plan(timeline: Self.clip25, changeInFrame: 260, ahead: ahead, maximumTrim: 0.05))
        #expect(plan.frames == 21)
        #expect(plan.trim > 1.04 && plan.trim <= 1.05)
    }

    @Test("nothing to remove, or too few frames left: no plan")
    func none() {
        #expect(RateCatchUp.plan(timeline: Self.clip25, changeInFrame: 10, ahead: 0, maximumTrim: 0.05) == nil)
        #expect(RateCatchUp.plan(timeline: Self.clip25, changeInFrame: 1495, ahead: -0.03, maximumTrim: 0.05) == nil)
        #expect(RateCatchUp.plan(timeline: Self.clip25, changeInFrame: 1499, ahead: -0.03, maximumTrim: 0.05) == nil)
    }
}
