import MPVControl
import PlaybackCoordinator
import Testing

/// The decisions of attaching to a person's mpv, without an mpv: what is set, what is put back, when
/// coplay refuses; which playlist entry it opens; what the frame-step key does to the group.
@Suite("MPVAttachment, MPVOpen and FrameStep: decisions for a person's own mpv")
struct MPVAttachmentTests {
    /// What a plain `mpv --input-ipc-server=SOCK movie.mkv` (mpv 0.35.1) reports.
    static let plain: [String: MPVValue] = [
        "video-timing-offset": .number(0.05), "hr-seek": .string("default"), "keep-open": .bool(false),
        "video-sync": .string("audio"), "loop-file": .bool(false), "untimed": .bool(false), "idle": .bool(false),
        "prefetch-playlist": .bool(false), "af": .array([]),
    ]

    /// What an mpv that coplay started reports (MPVProcess.baseArguments).
    static let configured: [String: MPVValue] = [
        "video-timing-offset": .number(0), "hr-seek": .bool(true), "keep-open": .string("always"),
        "video-sync": .string("audio"), "loop-file": .bool(false), "untimed": .bool(false), "idle": .bool(true),
        "prefetch-playlist": .bool(true), "af": .array([.object(["name": .string("scaletempo2"), "enabled": .bool(true), "params": .object([:])])]),
    ]

    /// The key section: the frame-step key and mpv's playlist keys tell the adapter.
    static let keys = """
        . script-message coplay frame-step
        > script-message coplay next
        ENTER script-message coplay next
        < script-message coplay previous

        """

    @Test("a plain mpv: every needed setting is set, the tempo filter added, the key rebound; leaving puts each value back in reverse order")
    func plainMPV() throws {
        let plan = try MPVAttachment.plan(observed: Self.plain).get()
        #expect(plan.apply == [
            .set("video-timing-offset", .number(0)), .set("hr-seek", .string("yes")), .set("keep-open", .string("always")),
            .set("idle", .string("yes")), .set("prefetch-playlist", .string("yes")),
            .command(["af", "add", "@coplay-tempo:scaletempo2"]),
            .command(["define-section", "coplay-keys", Self.keys, "default"]),
            .command(["enable-section", "coplay-keys"]),
        ])
        #expect(plan.restore == [
            .command(["disable-section", "coplay-keys"]),
            .command(["af", "remove", "@coplay-tempo"]),
            .set("prefetch-playlist", .bool(false)), .set("idle", .bool(false)), .set("keep-open", .bool(false)), .set("hr-seek", .string("default")),
            .set("video-timing-offset", .number(0.05)),
        ])
    }

    @Test("an mpv coplay configured: only the key binding changes")
    func configuredMPV() throws {
        let plan = try MPVAttachment.plan(observed: Self.configured).get()
        #expect(plan.apply.map(\.description) == [
            "define-section coplay-keys \(Self.keys) default", "enable-section coplay-keys",
        ])
        #expect(plan.restore == [.command(["disable-section", "coplay-keys"])])
    }

    @Test("a person's odd options: each is overridden and its own value kept for leaving")
    func oddOptions() throws {
        var observed = Self.plain
        observed["hr-seek"] = .bool(false)  // --hr-seek=no
        observed["video-sync"] = .string("display-resample")
        observed["loop-file"] = .string("inf")
        observed["keep-open"] = .string("yes")
        // Another filter of the person's stays; scaletempo2 is added after it.
        observed["af"] = .array([.object(["name": .string("lavfi"), "enabled": .bool(true)])])
        let plan = try MPVAttachment.plan(observed: observed).get()
        #expect(plan.apply.contains(.set("video-sync", .string("audio"))))
        #expect(plan.apply.contains(.set("loop-file", .string("no"))))
        #expect(plan.apply.contains(.command(["af", "add", "@coplay-tempo:scaletempo2"])))
        #expect(plan.restore.contains(.set("hr-seek", .bool(false))))
        #expect(plan.restore.contains(.set("video-sync", .string("display-resample"))))
        #expect(plan.restore.contains(.set("loop-file", .string("inf"))))
        #expect(plan.restore.contains(.set("keep-open", .string("yes"))))
        #expect(!plan.restore.contains { if case .command(let words) = $0 { words.first == "af" && words[1] != "remove" } else { false } })
    }

    @Test("a scaletempo2 the person put in the chain is used, not doubled; a disabled one is not enough")
    func tempoFilterPresent() throws {
        var observed = Self.plain
        observed["af"] = .array([.object(["name": .string("scaletempo2"), "label": .string("mine"), "enabled": .bool(true)])])
        #expect(!(try MPVAttachment.plan(observed: observed).get().apply.contains { $0.description.hasPrefix("af ") }))
        observed["af"] = .array([.object(["name": .string("scaletempo2"), "enabled": .bool(false)])])
        #expect(try MPVAttachment.plan(observed: observed).get().apply.contains(.command(["af", "add", "@coplay-tempo:scaletempo2"])))
    }

    @Test("an mpv without a property coplay needs is refused, naming it")
    func unknownProperty() {
        var observed = Self.plain
        observed["video-timing-offset"] = nil
        guard case .failure(let refusal) = MPVAttachment.plan(observed: observed) else {
            Issue.record("an mpv without video-timing-offset was accepted")
            return
        }
        #expect(refusal.description.contains("'video-timing-offset'"), "\(refusal)")
        #expect(refusal.description.contains("--player mpv"), "\(refusal)")
    }

    @Test("after the steps: nothing missing is no refusal; each setting mpv did not take is named with its option and mpv's answer")
    func check() {
        #expect(MPVAttachment.check(failures: [:], readBack: Self.configured) == nil)
        var readBack = Self.configured
        readBack["video-timing-offset"] = .number(0.05)
        readBack["af"] = .array([])
        let refusal = MPVAttachment.check(
            failures: [
                .set("video-timing-offset", .number(0)): "error running command",
                .command(["af", "add", "@coplay-tempo:scaletempo2"]): "invalid parameter",
            ], readBack: readBack)
        let text = refusal?.description ?? ""
        #expect(text.hasPrefix("coplay cannot drive this mpv: "), "\(text)")
        #expect(text.contains("video-timing-offset is 0.05 (mpv answered 'error running command'): start mpv with --video-timing-offset=0"), "\(text)")
        #expect(text.contains("no scaletempo2 audio filter (mpv answered 'invalid parameter'): start mpv with --af=scaletempo2"), "\(text)")
        #expect(!text.contains("hr-seek"), "\(text)")
        // A value that did not stick although mpv answered success is named too.
        readBack = Self.configured
        readBack["keep-open"] = .bool(false)
        #expect(MPVAttachment.check(failures: [:], readBack: readBack)?.description.contains("--keep-open=always") == true)
        // The key binding's failure is named.
        let keys = MPVAttachment.check(failures: [.command(["enable-section", "coplay-keys"]): "unknown command"], readBack: Self.configured)
        #expect(keys?.description.contains("frame-step key") == true)
    }

    @Test("a value mpv reports as yes/true or as a number satisfies the requirement; others do not")
    func accepted() throws {
        let hrSeek = try #require(MPVAttachment.requirements.first { $0.property == "hr-seek" })
        #expect(hrSeek.isMet(by: .bool(true)) && hrSeek.isMet(by: .string("yes")))
        #expect(!hrSeek.isMet(by: .string("default")) && !hrSeek.isMet(by: .string("absolute")) && !hrSeek.isMet(by: nil))
        let offset = try #require(MPVAttachment.requirements.first { $0.property == "video-timing-offset" })
        #expect(offset.isMet(by: .number(0)) && !offset.isMet(by: .number(0.05)))
    }

    // MARK: MPVOpen

    @Test("the file mpv shows (named relative to mpv's directory) is used as it is")
    func alreadyOpen() {
        let playlist = [MPVOpen.Entry(filename: "movie.mkv", current: true)]
        #expect(MPVOpen.decide(item: "/home/a/movie.mkv", playlist: playlist, loaded: true, workingDirectory: "/home/a") == .alreadyOpen)
        #expect(MPVOpen.decide(item: "/home/a/x/../movie.mkv", playlist: playlist, loaded: true, workingDirectory: "/home/a/.") == .alreadyOpen)
        // The same name in another directory is another file.
        #expect(MPVOpen.decide(item: "/home/b/movie.mkv", playlist: playlist, loaded: true, workingDirectory: "/home/a") == .append(index: 1))
        // Listed as current but not loaded (mpv failed to open it, or it is idle): played again.
        #expect(MPVOpen.decide(item: "/home/a/movie.mkv", playlist: playlist, loaded: false, workingDirectory: "/home/a") == .playEntry(0))
    }

    @Test("a playlist of several files: the item's entry is played, the playlist is kept; a file not in it is appended")
    func playlist() {
        let playlist = [
            MPVOpen.Entry(filename: "one.mkv", current: true), MPVOpen.Entry(filename: "/m/two.mkv", current: false),
            MPVOpen.Entry(filename: "three.mkv", current: false),
        ]
        #expect(MPVOpen.decide(item: "/m/two.mkv", playlist: playlist, loaded: true, workingDirectory: "/m") == .playEntry(1))
        #expect(MPVOpen.decide(item: "/m/three.mkv", playlist: playlist, loaded: true, workingDirectory: "/m") == .playEntry(2))
        #expect(MPVOpen.decide(item: "/m/four.mkv", playlist: playlist, loaded: true, workingDirectory: "/m") == .append(index: 3))
        // An idle mpv with nothing to play: the file replaces the empty playlist.
        #expect(MPVOpen.decide(item: "/m/one.mkv", playlist: [], loaded: false, workingDirectory: "/m") == .replace)
    }

    @Test("mpv's playlist property is read into entries")
    func entries() {
        let value = MPVValue.array([
            .object(["filename": .string("a.mkv"), "current": .bool(true), "playing": .bool(true), "id": .number(1)]),
            .object(["filename": .string("b.mkv"), "id": .number(2)]),
        ])
        #expect(MPVOpen.entries(value) == [.init(filename: "a.mkv", current: true), .init(filename: "b.mkv", current: false)])
        #expect(MPVOpen.entries(MPVValue.none).isEmpty)
    }

    // MARK: FrameStep

    static let clip25 = MediaTimeline(identifier: "clip", duration: 10, frameRate: 25)

    @Test("while the group is paused, a frame step is a group seek to the next frame's time, from anywhere in the frame")
    func stepWhilePaused() throws {
        for itemTime in [1.0, 1.02, 1.0399] {
            guard case .seek(let target) = FrameStep.action(groupRate: 0, itemTime: itemTime, timeline: Self.clip25) else {
                Issue.record("no seek at \(itemTime)")
                continue
            }
            #expect(abs(target - 1.04) < 1e-9)
            // mpv (exact seek to a frame's own time) and the group show that frame.
            #expect(Self.clip25.frame(displayedAt: target) == 26)
        }
    }

    @Test("while the group plays, a frame step pauses it; before a group state or on the last frame, nothing")
    func stepOtherwise() {
        #expect(FrameStep.action(groupRate: 1, itemTime: 3, timeline: Self.clip25) == .pause)
        #expect(FrameStep.action(groupRate: 1.25, itemTime: nil, timeline: nil) == .pause)
        #expect(FrameStep.action(groupRate: nil, itemTime: 3, timeline: Self.clip25) == FrameStep.ignored)
        #expect(FrameStep.action(groupRate: 0, itemTime: 9.97, timeline: Self.clip25) == FrameStep.ignored)
        #expect(FrameStep.action(groupRate: 0, itemTime: 3, timeline: nil) == FrameStep.ignored)
    }
}
