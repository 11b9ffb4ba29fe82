import Foundation
import Testing

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

    static var environment: [String: String] { ProcessInfo.processInfo.environment }
    static var seedCount: UInt64 { environment["COPLAY_MODEL_SEEDS"].flatMap(UInt64.init) ?? 1_000 }
    static var firstSeed: UInt64 { environment["COPLAY_MODEL_FIRST_SEED"].flatMap(UInt64.init) ?? 1 }

    static func report(_ seed: UInt64, _ model: GroupModel) -> String {
        "seed \(seed): \(model.violations.map(\.description).joined(separator: "\n"))\n" + model.log.joined(separator: "\n")
    }

    @Test("random seeds: every member agrees with every other, pauses land where the players were")
    func randomSeeds() {
        var failures: [UInt64] = []
        var checks = 0
        for seed in Self.firstSeed..<(Self.firstSeed + Self.seedCount) {
            let model = GroupModel(.init(seed: seed))
            model.run()
            checks += model.checks
            if !model.violations.isEmpty {
                if failures.isEmpty { Issue.record(Comment(rawValue: Self.report(seed, model))) }
                failures.append(seed)
            }
        }
        #expect(failures.isEmpty, "failing seeds: \(failures.prefix(40))")
        #expect(checks > Int(Self.seedCount) * 100, "the model compared members only \(checks) times")
    }

    @Test("regression seeds", arguments: regressions)
    func regression(_ seed: UInt64) {
        let model = GroupModel(.init(seed: seed))
        model.run()
        #expect(model.violations.isEmpty, Comment(rawValue: Self.report(seed, model)))
    }

    /// Writes the regression seeds' traces as coordinator vectors (with `COPLAY_WRITE_VECTORS=1`).
    @Test func writeRegressionVectors() throws {
        guard CoordinatorVectorTests.writing else { return }
        for seed in Self.regressions {
            let model = GroupModel(.init(seed: seed, recordTraces: true))
            model.run()
            for (member, var vector) in model.vectors(description: "Group model seed \(seed): a regression the randomized model found (GroupModelTests).") {
                let results = try CoordinatorVectorTests.run(vector)
                for index in vector.steps.indices { vector.steps[index].expect = results[index] }
                let url = CoordinatorVectorTests.directory.appendingPathComponent("model").appendingPathComponent("seed-\(seed)-\(member).json")
                try CoordinatorVectorTests.write(vector, to: url, compact: true)
            }
        }
    }
}

@Suite struct GroupModelDebug {
    @Test func debugSeed() throws {
        guard let seed = ProcessInfo.processInfo.environment["COPLAY_MODEL_DEBUG"].flatMap(UInt64.init) else { return }
        let model = GroupModel(.init(seed: seed, recordTraces: true))
        model.run()
        if let who = ProcessInfo.processInfo.environment["COPLAY_MODEL_DEBUG_MEMBER"], let id = ProcessInfo.processInfo.environment["COPLAY_MODEL_DEBUG_ID"],
            let member = model.members.first(where: { $0.name.rawValue == who }) {
            let ids = Set(GroupModel.items.map(\.identifier))
            var core = CoordinatorCore(participant: member.name, localItem: "clip", canPresent: { ids.contains($0) }, name: who)
            var last = ""
            for step in member.steps {
                let now = ReferenceTime(nanoseconds: step.now!)
                switch step.op {
                case "receive": _ = core.receive(try step.event!.channelEvent(), now: now)
                case "tick": _ = core.tick(now: now)
                case "proposePlay": _ = try? core.proposePlay(now: now)
                case "proposeRate": _ = try? core.proposeRate(step.rate!, now: now)
                case "proposeSeek": _ = try? core.proposeSeek(to: step.itemTime!, now: now)
                case "proposeItem": _ = try? core.proposeItem(step.item!, at: 0, now: now)
                case "beginSuspension": _ = core.beginSuspension(step.reason!, now: now)
                case "endSuspension": _ = try? core.endSuspension(step.id!, proposing: step.itemTime, now: now)
                default: break
                }
                let all = (1...12).flatMap { m in (1...9).map { "m\(m)#\($0)" } }.compactMap { core.suspensionStatus($0) }
                    .map { "\($0.id) \(Double($0.begin.nanoseconds - GroupModel.epoch) / 1e9)-\($0.end.map { Double($0.nanoseconds - GroupModel.epoch) / 1e9 } ?? -1) \($0.waits)" }
                let status = id == "*" ? GroupModel.describe(core) + " \(all)" : "\(String(describing: core.suspensionStatus(id)))"
                if status != last { print("after \(step.op) seq \(step.event?.sequence ?? 0) at \(Double(step.now! - GroupModel.epoch) / 1e9): \(status)"); last = status }
            }
        }
        for member in model.members {
            for step in member.steps {
                guard let message = step.event?.message, case .suspension(let notice) = message else { continue }
                let t = { (r: ReferenceTime?) -> String in r.map { String(Double($0.nanoseconds - GroupModel.epoch) / 1e9) } ?? "-" }
                let history: [String] = (notice.history?.suspensions ?? []).map { entry in entry.id + ":" + t(entry.end) }
                let header = "\(member.name) now \(t(ReferenceTime(nanoseconds: step.now!))) seq \(step.event!.sequence!) from \(step.event!.sender!)"
                print(header + " \(notice.id) \(notice.phase) eff \(t(notice.effectiveAt)) hist \(history)")
            }
        }
    }
}
