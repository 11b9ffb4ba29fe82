import Testing

@testable import PlaybackCoordinator

/// An installation's all-day loop: one 2 s clip queued with repeat all, played for 1,000
/// transitions by three members whose clocks have different offsets and drifts (±100 ppm) and
/// whose reference-clock estimates carry the simulated ClockSync error. The real `CoordinatorCore`
/// and `HeadlessPlayerCore` of each member run in ``Simulation``'s simulated time (2,000 s of it in
/// a few seconds of real time).
@Suite("A looped clip on the shared clock")
struct QueueLoopTests {
    static let loop = MediaTimeline(identifier: "loop", duration: 2, frameRate: 25)
    static let transitions = 1_000

    @Test("1,000 transitions of a 2 s loop land on the group's instants, with no growth of the skew",
          arguments: [NetworkScenario.quiet, .jitter])
    func thousandTransitions(network: NetworkScenario) throws {
        let sim = SimulatedGroup.make(seed: 31, nodes: 3, network: network, items: [Self.loop])
        let entry = QueueEntry(id: "ana.loop", item: "loop", title: "loop.mp4", duration: 2, frameRate: 25, addedBy: "ana")
        sim.at(0.3, "ana") { core, now in core.proposeQueueEdit(.add([entry], at: .end), now: now) }
        sim.at(0.35, "ana") { core, now in core.proposeQueueEdit(.repeatMode(.all), now: now) }
        sim.at(0.5, "ana") { core, now in try core.proposePlay(now: now) }
        sim.run(until: 2 + Double(Self.transitions + 1) * 2)

        let names = sim.names
        for name in names {
            #expect(sim.nodes[name]!.core.queue.entries == [entry], "\(name) has the one-entry queue")
        }
        // The group's instants: the first play's anchor, then every 2 s, as one continuous timeline.
        let first = try #require(sim.nodes["ana"]!.commands.first { if case .play = $0.command.kind { true } else { false } })
        let start = first.command.referenceTime
        func instant(_ k: Int) -> ReferenceTime { start + .seconds(2 * k) }

        // Each member's commands: a play from item time 0 at every transition's instant, exactly
        // (the coordinator computes the end from the state, not from when anything happened).
        for name in names {
            let starts = sim.nodes[name]!.commands.compactMap { entry -> ReferenceTime? in
                guard case .play(let itemTime, let at, let rate) = entry.command.kind, itemTime == 0, rate == 1 else { return nil }
                return at
            }
            var seen = Set<Int>()
            for at in starts {
                let k = Int(((at - start).secondsValue / 2).rounded())
                #expect(abs((at - instant(k)).secondsValue) < 1e-6, "\(name): a start at \(at), \((at - instant(k)).secondsValue * 1e6) µs off transition \(k)")
                seen.insert(k)
            }
            #expect(seen.isSuperset(of: Set(0...Self.transitions)), "\(name) was told to start \(seen.count) loops")
        }

        // Each member's presentations, cut into loops where the frame index goes back.
        var loops: [PlaybackParticipantID: [[Simulation.PresentedFrame]]] = [:]
        for name in names {
            var runs: [[Simulation.PresentedFrame]] = []
            for frame in sim.frames(of: name) {
                if let last = runs.last?.last, frame.index > last.index { runs[runs.count - 1].append(frame) } else { runs.append([frame]) }
            }
            loops[name] = runs
            #expect(runs.count >= Self.transitions + 1, "\(name) played \(runs.count) loops")
        }
        let clock = Simulation.ClockModel()
        // A member's presentation is off the group's instant by its reference estimate's error at
        // most: the offset measurement's and the drift estimate's over a poll interval.
        let estimateBound = clock.estimateError.secondsValue + clock.driftEstimateErrorPPM / 1e6 * clock.pollInterval.secondsValue
        let frameInterval = 1.0 / 25
        var skews: [Double] = []
        var worstOffset = 0.0
        var worstGapError = 0.0
        for k in 0...Self.transitions {
            var firsts: [Double] = []
            for name in names {
                let runs = loops[name]!
                guard k < runs.count, let firstFrame = runs[k].first else { continue }
                // Every loop starts with frame 0, on the group's instant.
                #expect(firstFrame.index == 0, "\(name) began loop \(k) on frame \(firstFrame.index)")
                let offset = Double(firstFrame.trueTime) / 1e9 - instant(k).seconds
                worstOffset = max(worstOffset, abs(offset))
                #expect(abs(offset) <= estimateBound, "\(name) showed loop \(k)'s first frame \(offset * 1000) ms off the group's instant")
                firsts.append(Double(firstFrame.trueTime) / 1e9)
                // The last frame of the loop before, shown one frame interval earlier.
                if k > 0, let last = runs[k - 1].last {
                    #expect(last.index == 49, "\(name) ended loop \(k - 1) on frame \(last.index)")
                    let gap = Double(firstFrame.trueTime - last.trueTime) / 1e9
                    worstGapError = max(worstGapError, abs(gap - frameInterval))
                    #expect(gap <= frameInterval + 0.001 && gap > 0, "\(name): \(gap * 1000) ms from loop \(k - 1)'s last frame to loop \(k)'s first")
                }
                // Every frame of the loop, in order, no repeats or skips.
                #expect(runs[k].map(\.index) == Array(0..<50) || k == Self.transitions, "\(name) loop \(k): frames \(runs[k].map(\.index))")
            }
            #expect(firsts.count == names.count, "transition \(k): \(firsts.count) of \(names.count) members showed it")
            skews.append((firsts.max() ?? 0) - (firsts.min() ?? 0))
        }
        let early = skews[1...100].reduce(0, +) / 100
        let late = skews[(Self.transitions - 99)...Self.transitions].reduce(0, +) / 100
        print(String(
            format: "queue loop (%@): %d transitions, first-frame skew at transition 1 %.3f ms, at %d %.3f ms, mean of transitions 1-100 %.3f ms, of the last 100 %.3f ms, max %.3f ms; worst offset from the group's instant %.3f ms; worst |gap - frame interval| %.3f ms",
            network.rawValue, Self.transitions, skews[1] * 1000, Self.transitions, skews[Self.transitions] * 1000, early * 1000,
            late * 1000, (skews.max() ?? 0) * 1000, worstOffset * 1000, worstGapError * 1000))
        // No growth: the skew at the last transition, and on average over the last hundred, is no
        // larger than at the first (within the clock model's error: two members' estimates).
        #expect(skews[Self.transitions] <= skews[1] + 2 * estimateBound)
        #expect(late <= early + estimateBound / 2, "mean skew grew from \(early * 1000) ms to \(late * 1000) ms")
        #expect((skews.max() ?? .infinity) <= 2 * estimateBound)
    }
}
