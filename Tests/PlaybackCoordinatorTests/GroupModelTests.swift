import Foundation
import Testing
import TestSupport

@testable import PlaybackCoordinator

/// The randomized model of a whole group (``GroupModel``): many seeds, each a different run of
/// joins, leaves, commands, suspensions and relay restarts, every one checked for agreement.
///
/// `COPLAY_MODEL_SEEDS=N` runs N seeds instead of the default (a long search outside CI:
/// `COPLAY_MODEL_SEEDS=100000 swift test --filter GroupModelTests`); `COPLAY_MODEL_FIRST_SEED` moves
/// the window. A failing seed prints its log; add it to ``regressions`` and write its vectors with
/// `COPLAY_WRITE_VECTORS=1 swift test --filter GroupModelTests` so the JavaScript port runs it too.
@Suite("Randomized group model")
struct GroupModelTests {
    /// Seeds that once broke an invariant, each kept as a regression (and as vectors
    /// `Tests/Vectors/coordinator/model/seed-N-MEMBER.json`, which Swift and JavaScript both run).
    static let regressions: [UInt64] = [2, 5, 7, 21, 31, 127]
    /// Seeds that broke an invariant once members knew their items' durations (the timeline ends),
    /// run with the default options; vectors `model/ends-seed-N-MEMBER.json`.
    /// Seed 11: a suspension ended proposing a time past the end threw after the suspension was
    /// removed, so its end was never sent and the others waited it out.
    /// Seed 2900: a rate change proposed before a pause reached its proposer was anchored earlier
    /// than the pause; the waits between the two anchors moved the timeline again, but members
    /// left them out of the histories they sent (they ended before the pause's anchor), so a
    /// joiner after their owner left played 0.45 s ahead.
    static let endRegressions: [UInt64] = [11, 2900]
    /// Seeds of the queue model kept as vectors (`model/queue-seed-N-MEMBER.json`), so the page's
    /// port of the queue runs the same edits, requests, answers and transitions.
    static let queueVectorSeeds: [UInt64] = [2, 3] + queueRegressions
    /// Queue seeds that found defects once members could lack an item (some have no copy of
    /// `other` and sit its entries out), kept as vectors and run on their own:
    /// Seed 15: a member proposing an item it has no copy of took it as its player's item, so its
    /// core believed the player showed it while the player ignored the commands.
    /// Seed 140: members without a copy of `other`, nobody left who had one, did not know where it
    /// ends, so a seek past its end was proposed and played; the queue's entries carry the duration.
    /// Seeds 38 and 237 broke a first version of members playing on by their own transition when
    /// none was ordered in time (cut off from the relay across an entry's end,
    /// `CoordinatorCore.assumeTransitionIfLate`): in 38 the player was told the assumed entry as
    /// a moved timeline of the ordered state, and played it from before its start (2.5 s off the
    /// others); in 237 members applied a removal of the playing entry against the entry they
    /// assumed rather than the ordered one, and their queues differed. Seed 3164 (found by a
    /// 5,000-seed search): a member that joined after an entry's end assumed the transition its
    /// queue gave then (repeat one, set after the end), while the group had stopped at that end.
    static let queueRegressions: [UInt64] = [15, 140, 38, 237, 3164]

    static var environment: [String: String] { ProcessInfo.processInfo.environment }
    static var seedCount: UInt64 { environment["COPLAY_MODEL_SEEDS"].flatMap(UInt64.init) ?? 1_000 }
    static var firstSeed: UInt64 { environment["COPLAY_MODEL_FIRST_SEED"].flatMap(UInt64.init) ?? 1 }

    static func report(_ seed: UInt64, _ model: GroupModel) -> String {
        "seed \(seed): \(model.violations.map(\.description).joined(separator: "\n"))\n" + model.log.joined(separator: "\n")
    }

    /// The seeds run in this many slices (in parallel under `swift test`; `scripts/test.sh` runs its
    /// module serially, alone, since a slice computes without pause and takes cores from tests that
    /// wait on real time).
    static let slices = 4

    /// The seeds of one slice: every `slices`-th seed of the window, starting at the slice's offset.
    static func seeds(ofSlice slice: Int) -> [UInt64] {
        (Self.firstSeed..<(Self.firstSeed + Self.seedCount)).filter { ($0 - Self.firstSeed) % UInt64(slices) == UInt64(slice) }
    }

    @Test("queue regression seeds", arguments: queueRegressions)
    func queueRegression(seed: UInt64) {
        let model = GroupModel(.queue(seed: seed))
        model.run()
        #expect(model.violations.isEmpty, "\(Self.report(seed, model))")
        if [15, 140].contains(seed) {
            #expect(model.missingEntries > 0, "seed \(seed) no longer has a member sitting an entry out")
        }
    }

    @Test("random seeds: every member agrees with every other, pauses land where the players were", arguments: 0..<slices)
    func randomSeeds(slice: Int) async {
        let seeds = Self.seeds(ofSlice: slice)
        // A slice computes for tens of seconds without suspending: on a thread of its own, not on the
        // cooperative pool (one thread per core), where it starved the async tests beside it.
        let (failures, checks, firstReport) = await onOwnThread(stackSize: 8 << 20) { () -> ([UInt64], Int, String?) in
            var failures: [UInt64] = []
            var checks = 0
            var firstReport: String?
            for seed in seeds {
                let model = GroupModel(.init(seed: seed))
                model.run()
                checks += model.checks
                if !model.violations.isEmpty {
                    if firstReport == nil { firstReport = Self.report(seed, model) }
                    failures.append(seed)
                }
            }
            return (failures, checks, firstReport)
        }
        if let firstReport { Issue.record(Comment(rawValue: firstReport)) }
        #expect(failures.isEmpty, "failing seeds: \(failures.prefix(40))")
        #expect(seeds.isEmpty || checks > seeds.count * 100, "the model compared members only \(checks) times")
    }

    @Test("random seeds with a queue: equal queues everywhere, transitions at one instant for all", arguments: 0..<slices)
    func queueSeeds(slice: Int) async {
        let seeds = Self.seeds(ofSlice: slice)
        let (failures, checks, transitions, edits, sittings, firstReport) = await onOwnThread(stackSize: 8 << 20) { () -> ([UInt64], Int, Int, Int, (Int, Int), String?) in
            var failures: [UInt64] = []
            var checks = 0
            var transitions = 0
            var edits = 0
            var sittings = (missing: 0, rejoins: 0)
            var firstReport: String?
            for seed in seeds {
                let model = GroupModel(.queue(seed: seed))
                model.run()
                checks += model.checks
                transitions += model.transitions
                edits += model.queueEdits
                sittings.missing += model.missingEntries
                sittings.rejoins += model.rejoins
                if !model.violations.isEmpty {
                    if firstReport == nil { firstReport = Self.report(seed, model) }
                    failures.append(seed)
                }
            }
            return (failures, checks, transitions, edits, sittings, firstReport)
        }
        if let firstReport { Issue.record(Comment(rawValue: firstReport)) }
        #expect(failures.isEmpty, "failing seeds: \(failures.prefix(40))")
        #expect(seeds.isEmpty || checks > seeds.count * 100, "the model compared members only \(checks) times")
        // Each member counts what it applied: a run has several transitions and many edits.
        #expect(seeds.count < 20 || transitions > seeds.count * 5, "only \(transitions) transitions in \(seeds.count) seeds")
        #expect(seeds.count < 20 || edits > seeds.count * 20, "only \(edits) queue edits applied in \(seeds.count) seeds")
        // Some members have no copy of `other`: they sit its entries out and come back in step.
        #expect(seeds.count < 20 || (sittings.0 > 0 && sittings.1 > 0), "entries sat out \(sittings.0), rejoins \(sittings.1)")
        print("queue model, slice \(slice): \(seeds.count) seeds, \(transitions) transitions and \(edits) edits applied, \(sittings.0) entries sat out and \(sittings.1) rejoins (summed over members)")
    }

    /// The regression seeds run as they were found: before item ends, members knew no durations.
    static func regressionOptions(_ seed: UInt64, recordTraces: Bool = false) -> GroupModel.Options {
        var options = GroupModel.Options(seed: seed, recordTraces: recordTraces)
        options.itemDurations = nil
        return options
    }

    @Test("regression seeds", arguments: regressions)
    func regression(_ seed: UInt64) {
        let model = GroupModel(Self.regressionOptions(seed))
        model.run()
        #expect(model.violations.isEmpty, Comment(rawValue: Self.report(seed, model)))
    }

    @Test("regression seeds with item ends", arguments: endRegressions)
    func endRegression(_ seed: UInt64) {
        let model = GroupModel(.init(seed: seed))
        model.run()
        #expect(model.violations.isEmpty, Comment(rawValue: Self.report(seed, model)))
    }

    /// Writes the regression seeds' traces as coordinator vectors (with `COPLAY_WRITE_VECTORS=1`).
    @Test func writeRegressionVectors() throws {
        guard CoordinatorVectorTests.writing else { return }
        let runs = Self.regressions.map { (seed: $0, options: Self.regressionOptions($0, recordTraces: true), prefix: "seed") }
            + Self.endRegressions.map { (seed: $0, options: GroupModel.Options(seed: $0, recordTraces: true), prefix: "ends-seed") }
            + Self.queueVectorSeeds.map { seed in
                var options = GroupModel.Options.queue(seed: seed)
                options.recordTraces = true
                return (seed: seed, options: options, prefix: "queue-seed")
            }
        for run in runs {
            let model = GroupModel(run.options)
            model.run()
            for (member, var vector) in model.vectors(description: "Group model seed \(run.seed): a regression the randomized model found (GroupModelTests).") {
                let results = try CoordinatorVectorTests.run(vector)
                for index in vector.steps.indices { vector.steps[index].expect = results[index] }
                let url = CoordinatorVectorTests.directory.appendingPathComponent("model").appendingPathComponent("\(run.prefix)-\(run.seed)-\(member).json")
                try CoordinatorVectorTests.write(vector, to: url, compact: true)
            }
        }
    }
}

