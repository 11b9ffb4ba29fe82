import Testing

@testable import PlaybackCoordinator

/// Network conditions for the deterministic simulations.
enum NetworkScenario: String, CaseIterable, CustomTestStringConvertible {
    case quiet, jitter, asymmetric, loss

    var testDescription: String { rawValue }

    func links(node: Int) -> (up: Simulation.Link, down: Simulation.Link) {
        switch self {
        case .quiet:
            let link = Simulation.Link(latency: .microseconds(200), jitter: .microseconds(50))
            return (link, link)
        case .jitter:
            let link = Simulation.Link(latency: .milliseconds(20), jitter: .milliseconds(10))
            return (link, link)
        case .asymmetric:
            // 50 ms one way with 30 ms asymmetry, alternating direction per node.
            let slow = Simulation.Link(latency: .milliseconds(65), jitter: .milliseconds(1))
            let fast = Simulation.Link(latency: .milliseconds(35), jitter: .milliseconds(1))
            return node % 2 == 0 ? (slow, fast) : (fast, slow)
        case .loss:
            let link = Simulation.Link(latency: .milliseconds(1), jitter: .microseconds(200), loss: 0.01)
            return (link, link)
        }
    }
}

/// Builds groups for the simulations: nodes with different clock offsets and drifts of up to
/// +-100 ppm, each with a slightly wrong reference-clock estimate.
enum SimulatedGroup {
    static let clip = MediaTimeline(identifier: "clip", duration: 120, frameRate: 25)
    static let long = MediaTimeline(identifier: "long", duration: 900, frameRate: 25)
    static let other = MediaTimeline(identifier: "other", duration: 60, frameRate: 30)
    static let names: [PlaybackParticipantID] = ["ana", "ben", "cy", "dee", "eve"]
    static let offsets: [Duration] = [.seconds(-3), .zero, .milliseconds(7_500), .seconds(1234), .seconds(42)]
    static let drifts: [Double] = [100, -100, 37, -64, 81]

    static func spec(_ index: Int, network: NetworkScenario, configure: (inout Simulation.NodeSpec) -> Void = { _ in }) -> Simulation.NodeSpec {
        var spec = Simulation.NodeSpec(name: names[index])
        (spec.uplink, spec.downlink) = network.links(node: index)
        spec.clock.offset = offsets[index]
        spec.clock.driftPPM = drifts[index]
        configure(&spec)
        return spec
    }

    static func make(seed: UInt64, nodes: Int = 4, network: NetworkScenario = .quiet, items: [MediaTimeline] = [clip, other],
                     configure: (Int, inout Simulation.NodeSpec) -> Void = { _, _ in }) -> Simulation {
        let simulation = Simulation(seed: seed, items: items)
        for index in 0..<nodes {
            simulation.addNode(spec(index, network: network) { configure(index, &$0) }, joiningAt: 0.01 * Double(index))
        }
        return simulation
    }
}

@Suite("Deterministic group simulations")
struct SimulationTests {
    @Test("every frame is presented by every player within 1 ms of the others", arguments: NetworkScenario.allCases)
    func framesAligned(network: NetworkScenario) {
        let sim = SimulatedGroup.make(seed: 7, network: network)
        sim.at(1.0, "ana") { core, now in try core.proposePlay(now: now) }
        sim.run(until: 31)
        let spreads = sim.frameSpreads(in: 0...30.9)
        #expect(spreads.count > 600)
        let worst = spreads.map(\.spreadMs).max() ?? .infinity
        #expect(worst < 1.0, "worst inter-player spread \(worst) ms")
        if network != .loss {
            // Every frame from the first on was presented by all four players.
            #expect(spreads.allSatisfy { $0.count == 4 })
            #expect(spreads.first?.index == 0)
        }
    }

    @Test("play, pause, seek, rate and item change land on the same instant and frame everywhere",
          arguments: [NetworkScenario.quiet, .jitter, .asymmetric])
    func commandsLandTogether(network: NetworkScenario) {
        let sim = SimulatedGroup.make(seed: 11, network: network)
        sim.at(1.0, "ana") { core, now in try core.proposePlay(now: now) }
        sim.at(4.0, "ben") { core, now in try core.proposeRate(0, now: now) }          // pause
        sim.at(5.0, "cy") { core, now in try core.proposeSeek(to: 30, now: now) }      // seek while paused
        sim.at(6.0, "dee") { core, now in try core.proposePlay(now: now) }
        sim.at(8.0, "ana") { core, now in try core.proposeRate(1.5, now: now) }
        sim.at(10.0, "ben") { core, now in try core.proposeSeek(to: 5, now: now) }    // seek while playing
        sim.at(12.0, "cy") { core, now in try core.proposeItem("other", at: 2, now: now) }
        sim.at(14.0, "dee") { core, now in try core.proposeRate(0, now: now) }
        sim.run(until: 16)

        // Frames: same instant for every index, for both items, across all commands.
        let spreads = sim.frameSpreads(in: 0...15.9)
        #expect((spreads.map(\.spreadMs).max() ?? .infinity) < 1.0)
        #expect(spreads.allSatisfy { $0.count == 4 })
        #expect(spreads.contains { $0.item == "other" })

        // Stops: every player stops on the same frames at the same item times, at the same instants.
        let perNode = Dictionary(grouping: sim.stops, by: \.node)
        let reference = perNode["ana"] ?? []
        #expect(reference.count >= 2)
        for (_, stops) in perNode {
            #expect(stops.map(\.index) == reference.map(\.index))
            #expect(stops.map(\.itemTime) == reference.map(\.itemTime))
            for (mine, theirs) in zip(stops, reference) {
                #expect(abs(Double(mine.trueTime - theirs.trueTime)) / 1e6 < 1.0)
            }
        }
        // The final pause is on the item "other".
        #expect(reference.last?.item == "other")

        // The first frame after the seek to 5 s is the same frame on every player.
        let afterSeek = sim.names.compactMap { name in
            sim.frames(of: name).first { $0.item == "clip" && $0.pts < 6 && Double($0.trueTime) / 1e9 > 10 }
        }
        #expect(Set(afterSeek.map(\.index)).count == 1)
        #expect(afterSeek.count == 4)
    }

    @Test("concurrent commands resolve by the channel's total order, identically everywhere")
    func concurrentCommands() {
        let sim = SimulatedGroup.make(seed: 3, network: .jitter)
        sim.at(1.0, "ana") { core, now in try core.proposePlay(now: now) }
        sim.at(3.0, "ben") { core, now in try core.proposeSeek(to: 20, now: now) }
        sim.at(3.0, "cy") { core, now in try core.proposeSeek(to: 40, now: now) }
        sim.at(3.0, "dee") { core, now in try core.proposeRate(0, now: now) }
        sim.run(until: 6)
        let states = sim.names.compactMap { sim.nodes[$0]?.core.state }
        #expect(states.count == 4)
        #expect(Set(states).count == 1)
        #expect((sim.frameSpreads().map(\.spreadMs).max() ?? .infinity) < 1.0)
    }

    @Test("a late joiner is in step on its first frame", arguments: [NetworkScenario.quiet, .jitter])
    func lateJoiner(network: NetworkScenario) {
        let sim = SimulatedGroup.make(seed: 5, nodes: 3, network: network)
        sim.at(1.0, "ana") { core, now in try core.proposePlay(now: now) }
        sim.at(3.0, "ben") { core, now in try core.proposeSeek(to: 50, now: now) }
        sim.addNode(SimulatedGroup.spec(3, network: network), joiningAt: 6.3)
        sim.run(until: 10)
        let joinerFrames = sim.frames(of: "dee")
        let first = try! #require(joinerFrames.first)
        let others = sim.frames.filter { $0.node != "dee" && $0.item == first.item && $0.index == first.index }
        #expect(others.count == 3)
        for other in others {
            #expect(abs(Double(other.trueTime - first.trueTime)) / 1e6 < 1.0)
        }
        #expect(first.pts > 50)
        #expect((sim.frameSpreads().map(\.spreadMs).max() ?? .infinity) < 1.0)
    }

    /// `coplay control suspend 3` (a one-shot member suspends, the group waits 3 s, it leaves),
    /// then a member joins and a one-shot `control pause` follows: the joiner's frames are the
    /// waiting members' frames, and the pause stops everyone on the frame they showed.
    @Test("after a wait, a late joiner plays in step and a later pause lands where everyone was",
          arguments: [(3.0, false), (0.5, false), (9.0, false), (3.0, true)])
    func lateJoinerAfterWait(wait: Double, leaveBeforeJoiner: Bool) {
        let sim = SimulatedGroup.make(seed: 11, nodes: 2, network: .quiet)
        sim.at(1.0, "ana") { core, now in try core.proposePlay(now: now) }
        // The one-shot controller of `coplay control suspend`.
        sim.addNode(SimulatedGroup.spec(2, network: .quiet), joiningAt: 2.0)
        var suspension = ""
        sim.at(2.5, "cy") { core, now in
            let (id, actions) = core.beginSuspension(.buffering, now: now)
            suspension = id
            return actions
        }
        sim.at(2.5 + wait, "cy") { core, now in try core.endSuspension(suspension, now: now) }
        sim.schedule(at: Int64((3.0 + wait) * 1e9)) { sim in sim.leave("cy") }
        if leaveBeforeJoiner { sim.schedule(at: Int64((4.0 + wait) * 1e9)) { sim in sim.leave("ben") } }
        sim.addNode(SimulatedGroup.spec(3, network: .quiet), joiningAt: 5.0 + wait)
        // `coplay control pause`, a one-shot member joining late too.
        sim.addNode(SimulatedGroup.spec(4, network: .quiet), joiningAt: 8.0 + wait)
        sim.at(8.5 + wait, "eve") { core, now in try core.proposeRate(0, now: now) }
        sim.run(until: 11 + wait)
        let joiner = sim.frames(of: "dee")
        let first = try! #require(joiner.first)
        // Its first frame is the frame ana presents at that instant, not one `wait` seconds ahead.
        let ana = sim.frames(of: "ana").filter { $0.item == first.item && $0.index == first.index }
        #expect(ana.count == 1, "ana never presented the joiner's first frame \(first.index) (pts \(first.pts))")
        if let match = ana.first { #expect(abs(Double(match.trueTime - first.trueTime)) / 1e6 < 1.0) }
        let spreads = sim.frameSpreads(in: (5.0 + wait)...(11 + wait), nodes: ["ana", "dee"])
        #expect(spreads.count > 50)
        #expect((spreads.map(\.spreadMs).max() ?? .infinity) < 1.0)
        // The pause: everyone stops on one frame, the one they showed, with no jump.
        let stops = sim.stops.filter { !$0.waiting && Double($0.trueTime) / 1e9 > 8.5 + wait && ["ana", "dee"].contains($0.node.rawValue) }
        #expect(Set(stops.map(\.node)).count == 2)
        #expect(Set(stops.map(\.index)).count == 1)
        for stop in stops {
            let shown = sim.frames(of: stop.node).last { $0.trueTime <= stop.trueTime }
            #expect(shown?.index == stop.index, "\(stop.node) stopped on \(String(describing: stop.index)) after showing \(String(describing: shown?.index))")
        }
    }

    @Test("a suspended member makes the group wait, then everyone resumes together")
    func suspensionWaits() {
        let sim = SimulatedGroup.make(seed: 9, network: .jitter)
        sim.at(1.0, "ana") { core, now in try core.proposePlay(now: now) }
        var suspension = ""
        sim.at(5.0, "ben") { core, now in
            let (id, actions) = core.beginSuspension(.buffering, now: now)
            suspension = id
            return actions
        }
        sim.at(7.0, "ben") { core, now in try core.endSuspension(suspension, now: now) }
        sim.run(until: 10)
        let waits = sim.stops.filter(\.waiting)
        #expect(Set(waits.map(\.node)).count == 4)
        #expect(Set(waits.map(\.index)).count == 1)
        let times = waits.map { Double($0.trueTime) / 1e9 }
        #expect(times.max()! - times.min()! < 0.001)
        // Nobody presented a frame while the group waited: after its own stop, each node's next frame
        // comes after the suspension's end (at 7 s plus the lead). Judged per node: the nodes' clocks
        // differ by microseconds, so one node's frame at the wait's first instant can fall a few
        // microseconds after another node's stop.
        for wait in waits {
            let next = sim.frames(of: wait.node).first { $0.trueTime > wait.trueTime }
            #expect(next.map { Double($0.trueTime) / 1e9 > 7.0 } ?? false, "\(wait.node) showed frame \(next?.index ?? -1) during the wait")
        }
        #expect((sim.frameSpreads().map(\.spreadMs).max() ?? .infinity) < 1.0)
        // The group lost about two seconds of item time: at 10 s it shows ~(10 - 1 - 2) s.
        let last = sim.frames(of: "ana").last!
        #expect(abs(last.pts - 7.0) < 0.3)
    }

    @Test("a dead member stops blocking the group after the timeout")
    func deadMemberTimesOut() {
        let sim = SimulatedGroup.make(seed: 13, network: .quiet) { _, spec in
            spec.configuration.suspensionTimeout = .seconds(3)
        }
        sim.at(1.0, "ana") { core, now in try core.proposePlay(now: now) }
        sim.at(5.0, "cy") { core, now in core.beginSuspension(.stallRecovery, now: now).actions }
        sim.schedule(at: 5_500_000_000) { sim in sim.kill("cy") }
        sim.run(until: 12)
        let alive: [PlaybackParticipantID] = ["ana", "ben", "dee"]
        let resumedAt = alive.map { name in
            sim.frames(of: name).first { Double($0.trueTime) / 1e9 > 6.0 }!
        }
        #expect(Set(resumedAt.map(\.index)).count == 1)
        let times = resumedAt.map { Double($0.trueTime) / 1e9 }
        #expect(times.max()! - times.min()! < 0.001)
        // The wait began about lead after 5 s and lasted the 3 s timeout.
        #expect(times.min()! > 8.0 && times.max()! < 8.3)
        let timedOut = sim.nodes["ana"]!.events.filter { $0.type == .suspensionEnded && $0.timedOut == true }
        #expect(timedOut.count == 1)
        #expect((sim.frameSpreads(nodes: alive).map(\.spreadMs).max() ?? .infinity) < 1.0)
    }

    @Test("a suspended member that leaves, or whose connection dies, stops blocking at once", arguments: [false, true])
    func leavingMemberStopsBlocking(connectionDies: Bool) {
        let sim = SimulatedGroup.make(seed: 29, network: .jitter)  // suspension timeout: the default 10 s
        sim.at(1.0, "ana") { core, now in try core.proposePlay(now: now) }
        sim.at(5.0, "cy") { core, now in core.beginSuspension(.buffering, now: now).actions }
        sim.schedule(at: 6_000_000_000) { sim in if connectionDies { sim.dropConnection("cy") } else { sim.leave("cy") } }
        sim.run(until: 10)
        let alive: [PlaybackParticipantID] = ["ana", "ben", "dee"]
        // Everyone waited (on the same frame) ...
        let waits = sim.stops.filter { $0.waiting && alive.contains($0.node) }
        #expect(Set(waits.map(\.node)) == Set(alive))
        #expect(Set(waits.map(\.index)).count == 1)
        // ... and resumed together within a lead or so of the leave, not at 5 s + 10 s.
        let resumedAt = alive.map { name in sim.frames(of: name).first { Double($0.trueTime) / 1e9 > 6.0 } }
        #expect(resumedAt.allSatisfy { $0 != nil })
        let frames = resumedAt.compactMap { $0 }
        #expect(Set(frames.map(\.index)).count == 1)
        let times = frames.map { Double($0.trueTime) / 1e9 }
        #expect(times.max()! - times.min()! < 0.001)
        #expect(times.min()! > 6.0 && times.max()! < 7.0, "resumed at \(times)")
        for name in alive {
            let ended = sim.nodes[name]!.events.filter { $0.type == .suspensionEnded }
            #expect(ended.count == 1)
            #expect(ended.first?.originator == "cy" && ended.first?.detail == "member left" && ended.first?.timedOut == false)
        }
        #expect((sim.frameSpreads(nodes: alive).map(\.spreadMs).max() ?? .infinity) < 1.0)
    }

    @Test("only waiting reasons, and at most the participant limit, make the group wait")
    func waitingReasonsAndLimit() {
        let sim = SimulatedGroup.make(seed: 17, network: .quiet) { _, spec in
            spec.configuration.maximumWaitingParticipants = 1
            spec.configuration.suspensionTimeout = .seconds(2)
        }
        sim.at(1.0, "ana") { core, now in try core.proposePlay(now: now) }
        sim.at(2.0, "ben") { core, now in core.beginSuspension(.interruption, now: now).actions }
        sim.at(4.0, "cy") { core, now in core.beginSuspension(.buffering, now: now).actions }
        sim.at(4.5, "dee") { core, now in core.beginSuspension(.stallRecovery, now: now).actions }
        sim.run(until: 9)
        let began = sim.nodes["ana"]!.events.filter { $0.type == .suspensionBegan }
        #expect(began.map(\.originator) == ["ben", "cy", "dee"])
        #expect(began.map(\.waits) == [false, true, false])
        // Exactly one wait (cy's), everywhere.
        let waits = sim.stops.filter(\.waiting)
        #expect(waits.count == 4)
        #expect(Set(waits.map(\.index)).count == 1)
    }

    @Test("a decoder with start latency and +-150 ppm drift is pulled into step and does not oscillate",
          arguments: [150.0, -150.0])
    func imperfectDecoder(driftPPM: Double) {
        let sim = SimulatedGroup.make(seed: 21, network: .quiet) { index, spec in
            if index == 2 { spec.imperfections = .init(startLatency: .milliseconds(60), driftPPM: driftPPM) }
        }
        sim.at(1.0, "ana") { core, now in try core.proposePlay(now: now) }
        sim.run(until: 41)
        let corrections = sim.nodes["cy"]!.corrections
        #expect(corrections.first?.kind == "seek")
        let trims = corrections.filter { $0.kind == "trim" }
        #expect(trims.count >= 3)
        // Every trim pushes against the drift: the error always has the drift's sign.
        #expect(trims.allSatisfy { ($0.errorMs > 0) == (driftPPM > 0) })
        // Trims are never back to back in opposite directions, and each ends before the next starts.
        let kinds = corrections.dropFirst().map(\.kind)
        #expect(zip(kinds, kinds.dropFirst()).allSatisfy { $0 != $1 })
        let settled = sim.frameSpreads(in: 2...41)
        #expect((settled.map(\.spreadMs).max() ?? .infinity) < 1.0)
    }

    @Test("skew does not grow over 10 minutes of +-100 ppm drift")
    func noGrowthUnderDrift() {
        let sim = SimulatedGroup.make(seed: 23, network: .jitter, items: [SimulatedGroup.long])
        sim.at(1.0, "ana") { core, now in try core.proposePlay(now: now) }
        sim.run(until: 601)
        let early = sim.frameSpreads(in: 1...61).map(\.spreadMs)
        let late = sim.frameSpreads(in: 540...600.9).map(\.spreadMs)
        #expect(early.count > 1000 && late.count > 1000)
        #expect(late.allSatisfy { $0 < 1.0 })
        // The reference estimate's error is re-measured every poll, so the late spread stays at the
        // early level (both are bounded by the simulated estimate error, +-50 us per node).
        #expect(late.max()! < 0.2 && early.max()! < 0.2)
        #expect(sim.frameSpreads(in: 1...600.9).allSatisfy { $0.count == 4 })
    }

    @Test("the same seed gives exactly the same run")
    func deterministic() {
        func run() -> [Simulation.PresentedFrame] {
            let sim = SimulatedGroup.make(seed: 99, network: .jitter)
            sim.at(1.0, "ana") { core, now in try core.proposePlay(now: now) }
            sim.at(3.0, "ben") { core, now in try core.proposeSeek(to: 9, now: now) }
            sim.run(until: 5)
            return sim.frames
        }
        #expect(run() == run())
    }
}

extension Simulation {
    var names: [PlaybackParticipantID] { nodeOrder }
}
