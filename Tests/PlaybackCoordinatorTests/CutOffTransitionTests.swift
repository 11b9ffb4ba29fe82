import Testing

@testable import PlaybackCoordinator

/// A member cut off from the relay across the end of a queue entry (a relay restarting, a network
/// that stops for a few seconds): it plays on into the next entry at the group's instant, as it
/// plays on through an entry while cut off, and the ordered transition that reaches it later
/// changes nothing on its screen (`CoordinatorCore.assumeTransitionIfLate`). Found by an
/// exploratory run with a real relay SIGKILLed and restarted: the members cut off held the entry's
/// last frame until they reconnected, up to two seconds, and then jumped into the next one.
@Suite("A member cut off across an entry's end")
struct CutOffTransitionTests {
    static let first = MediaTimeline(identifier: "first", duration: 2, frameRate: 25)
    static let second = MediaTimeline(identifier: "second", duration: 2, frameRate: 25)

    /// Three members, a queue of the two 2 s entries, play at 0.5 s; `cy` is cut off from 1.2 s
    /// (before the transition at the first entry's end, about 2.6 s, is proposed) for `outage` s.
    static func run(network: NetworkScenario, outage: Double) -> Simulation {
        let sim = SimulatedGroup.make(seed: 11, nodes: 3, network: network, items: [first, second])
        let entries = [
            QueueEntry(id: "ana.1", item: "first", title: "first.mp4", duration: 2, frameRate: 25, addedBy: "ana"),
            QueueEntry(id: "ana.2", item: "second", title: "second.mp4", duration: 2, frameRate: 25, addedBy: "ana"),
        ]
        sim.at(0.2, "ana") { core, now in core.proposeQueueEdit(.add(entries, at: .end), now: now) }
        sim.at(0.5, "ana") { core, now in try core.proposeJump(toPosition: 1, now: now) }
        sim.at(0.55, "ana") { core, now in try core.proposePlay(now: now) }
        sim.cutOff("cy", at: 1.2, for: outage)
        sim.run(until: 6)
        return sim
    }

    @Test("it shows the next entry's first frame with the others, and its frames run on without a hold or a jump",
          arguments: [NetworkScenario.quiet, .jitter])
    func playsOn(network: NetworkScenario) throws {
        let sim = Self.run(network: network, outage: 2.5)
        // Everyone presented the second entry's frames; cy's first one at the others' instant.
        let seconds = sim.frameSpreads(nodes: ["ana", "ben", "cy"]).filter { $0.item == "second" }
        let firstFrame = try #require(seconds.first { $0.index == 0 })
        #expect(firstFrame.count == 3, "the second entry's first frame was shown by \(firstFrame.count) of 3")
        #expect(firstFrame.spreadMs < 1, "its spread: \(firstFrame.spreadMs) ms")
        // cy's frames: the first entry's up to its end, then the second's from 0, one after the other.
        let cy = sim.frames(of: "cy")
        let switchAt = try #require(cy.firstIndex { $0.item == "second" })
        #expect(cy[switchAt...].allSatisfy { $0.item == "second" }, "cy went back to the first entry")
        let indices = cy[switchAt...].map(\.index)
        #expect(indices.first == 0)
        #expect(indices == Array(0..<indices.count), "cy's frames of the second entry skip or repeat: \(indices.prefix(20))")
        #expect(indices.count >= 45, "cy showed \(indices.count) frames of the second entry")
        // Nothing was held: the last frame of the first entry, then the second's first, one frame apart.
        let last = cy[switchAt - 1]
        #expect(last.item == "first" && last.index == 49)
        #expect(abs(Double(cy[switchAt].trueTime - last.trueTime) / 1e9 - 0.04) < 0.002)
        // Once the path delivers again, cy has the ordered transition (nothing assumed any more),
        // the same state as the others.
        let core = sim.nodes["cy"]!.core
        #expect(core.assumedFrom == nil && core.assumedChain.isEmpty)
        #expect(core.state?.entry == sim.nodes["ana"]!.core.state?.entry)
        #expect(core.state?.revision == sim.nodes["ana"]!.core.state?.revision)
    }

    @Test("a pause ordered while it was cut off still stops it where the group stopped, once it hears it")
    func laterPauseWins() throws {
        let sim = SimulatedGroup.make(seed: 11, nodes: 3, network: .quiet, items: [Self.first, Self.second])
        let entries = [
            QueueEntry(id: "ana.1", item: "first", title: "first.mp4", duration: 2, frameRate: 25, addedBy: "ana"),
            QueueEntry(id: "ana.2", item: "second", title: "second.mp4", duration: 2, frameRate: 25, addedBy: "ana"),
        ]
        sim.at(0.2, "ana") { core, now in core.proposeQueueEdit(.add(entries, at: .end), now: now) }
        sim.at(0.5, "ana") { core, now in try core.proposeJump(toPosition: 1, now: now) }
        sim.at(0.55, "ana") { core, now in try core.proposeRate(0, now: now) }
        sim.at(0.6, "ana") { core, now in try core.proposePlay(now: now) }
        sim.cutOff("cy", at: 1.2, for: 2.5)
        // ben pauses in the second entry while cy cannot hear it.
        sim.at(3.0, "ben") { core, now in try core.proposeRate(0, now: now) }
        sim.run(until: 6)
        let names: [PlaybackParticipantID] = ["ana", "ben", "cy"]
        let stops = names.map { name in sim.nodes[name]!.core.effectiveItemTime(at: sim.nodes[name]!.reference(sim.now)) }
        #expect(Set(stops.map { $0.map { ($0 * 1e6).rounded() } }).count == 1, "paused at \(stops)")
        for name in names {
            #expect(sim.nodes[name]!.core.state?.item == "second")
            #expect(sim.nodes[name]!.core.state?.rate == 0)
            #expect(sim.frames(of: name).last?.item == "second")
        }
        // Each player's last stop holds one frame: the same one (cy played past it while it could not
        // hear the pause, and went back to it).
        let held = names.map { name in sim.stops.last { $0.node == name }.map { "\($0.item) \($0.index ?? -1)" } }
        #expect(held.allSatisfy { $0 != nil } && Set(held).count == 1, "the players hold \(held)")
    }
}
