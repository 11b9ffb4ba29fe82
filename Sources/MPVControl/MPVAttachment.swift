import Foundation
import PlaybackCoordinator

/// What coplay changes in an mpv it did not start (`coplay join --mpv-socket PATH`, an mpv a person
/// runs with `--input-ipc-server=PATH`), and how it puts the person's values back. Sans-IO: it decides
/// from the values mpv reported and returns the steps to run; ``MPVAttachment/attach(to:)`` and
/// ``MPVAttachment/Attached/detach(on:rate:)`` run them.
///
/// The adapter leans on settings an mpv that coplay starts has from its command line
/// (``MPVProcess/baseArguments``). A plain `mpv --input-ipc-server=SOCK movie.mkv` has other defaults,
/// and with them every member measured an error of one frame and re-anchored four times a second:
/// `time-pos` was the frame queued to the video output, a frame ahead of the one on screen. mpv 0.35
/// takes every one of these settings at runtime (measured, docs/mpv.md), so on attach they are set over
/// IPC, and on leaving the values the person had are set back:
///
/// | property | set to | because |
/// |---|---|---|
/// | `video-timing-offset` | 0 | `time-pos` then changes when a frame is due, not a frame early |
/// | `hr-seek` | yes | exact seeks, the person's seek keys included |
/// | `keep-open` | always | the end of the file pauses on its last frame (no quit, no next entry) |
/// | `video-sync` | audio | `display-*` modes move the media clock off the host's; `desync` lets audio drift |
/// | `loop-file` | no | a loop would be a seek each member proposes to the group |
/// | `untimed` | no | frames must come at their times |
/// | `idle` | yes | a file mpv cannot open must not make it quit |
/// | `prefetch-playlist` | yes | the queue's next entry is opened ahead: a change of entry costs about half |
/// | `af` | `@coplay-tempo:scaletempo2` added unless a `scaletempo2` is there | speed trims move the position as asked |
/// | key `.` | `script-message coplay frame-step` (a `default` section: the person's own input.conf binding wins) | a frame step steps the group |
/// | keys `>`, `ENTER`, `<` | `script-message coplay next` / `previous` (same section) | mpv's playlist keys move the group through its queue |
///
/// ```swift
/// switch MPVAttachment.plan(observed: ["video-timing-offset": .number(0.05), ...]) {
/// case .success(let plan): plan.apply      // [.set("video-timing-offset", .number(0)), ...]
/// case .failure(let refusal): print(refusal)
/// }
/// ```
public enum MPVAttachment {
    /// A property the adapter needs at a value.
    public struct Requirement: Sendable, Hashable {
        /// mpv's property name.
        public var property: String
        /// The value set over IPC.
        public var value: MPVValue
        /// The values mpv may report that already satisfy it (mpv reports `yes` as `true`).
        public var accepted: [MPVValue]
        /// The command-line option that gives it from the start (for the refusal message).
        public var option: String

        init(_ property: String, _ value: MPVValue, accepted: [MPVValue], option: String) {
            self.property = property
            self.value = value
            self.accepted = accepted
            self.option = option
        }

        /// Whether `observed` satisfies it.
        public func isMet(by observed: MPVValue?) -> Bool {
            guard let observed else { return false }
            return accepted.contains { accepted in
                if let a = accepted.number, let b = observed.number { return abs(a - b) < 1e-9 }
                return accepted == observed
            }
        }
    }

    /// The properties set on attach, in order (see the table above).
    public static let requirements: [Requirement] = [
        Requirement("video-timing-offset", .number(0), accepted: [.number(0)], option: "--video-timing-offset=0"),
        Requirement("hr-seek", .string("yes"), accepted: [.bool(true), .string("yes")], option: "--hr-seek=yes"),
        Requirement("keep-open", .string("always"), accepted: [.string("always")], option: "--keep-open=always"),
        Requirement("video-sync", .string("audio"), accepted: [.string("audio")], option: "--video-sync=audio"),
        Requirement("loop-file", .string("no"), accepted: [.bool(false), .string("no")], option: "--loop-file=no"),
        Requirement("untimed", .bool(false), accepted: [.bool(false)], option: "--untimed=no"),
        Requirement("idle", .string("yes"), accepted: [.bool(true), .string("yes")], option: "--idle=yes"),
        Requirement("prefetch-playlist", .string("yes"), accepted: [.bool(true), .string("yes")], option: "--prefetch-playlist=yes"),
    ]

    /// The time-stretch filter that must be in the audio chain.
    public static let tempoFilter = "scaletempo2"
    /// The label of the filter coplay adds (removed on leave).
    public static let tempoLabel = "coplay-tempo"
    /// The input section holding coplay's key bindings (disabled on leave).
    public static let keySection = "coplay-keys"
    /// The `client-message` arguments the frame-step key sends.
    public static let frameStepMessage = ["coplay", "frame-step"]
    /// The `client-message` arguments of mpv's next-file keys (`>`, `ENTER`): the group's next entry.
    public static let nextMessage = ["coplay", "next"]
    /// The `client-message` arguments of mpv's previous-file key (`<`): the group's previous entry.
    public static let previousMessage = ["coplay", "previous"]
    /// The section's contents (input.conf syntax): `.`, mpv's frame-step key, and its playlist keys
    /// `>`, `ENTER` and `<` tell the adapter instead of acting on this mpv alone.
    static let keyBindings = [
        ". script-message \(frameStepMessage.joined(separator: " "))",
        "> script-message \(nextMessage.joined(separator: " "))",
        "ENTER script-message \(nextMessage.joined(separator: " "))",
        "< script-message \(previousMessage.joined(separator: " "))",
    ].map { $0 + "\n" }.joined()

    /// Every property read before planning.
    public static var observedProperties: [String] { requirements.map(\.property) + ["af"] }

    /// One change to make in mpv.
    public enum Step: Sendable, Hashable, CustomStringConvertible {
        /// `set_property NAME VALUE`.
        case set(String, MPVValue)
        /// Any other command.
        case command([String])

        /// The IPC command.
        public var arguments: [any Sendable] {
            switch self {
            case .set(let property, let value): ["set_property", property, value.argument ?? ""]
            case .command(let words): words
            }
        }

        public var description: String {
            switch self {
            case .set(let property, let value): "\(property)=\(value.argument.map { "\($0)" } ?? "?")"
            case .command(let words): words.joined(separator: " ")
            }
        }
    }

    /// The changes to make, and the ones that undo them.
    public struct Plan: Sendable, Hashable {
        /// Run in order on attach.
        public var apply: [Step]
        /// Run in order on leaving: the person's values back.
        public var restore: [Step]
    }

    /// Why coplay cannot drive this mpv, in words a person can act on.
    public struct Refusal: Error, Sendable, Hashable, CustomStringConvertible {
        public var description: String
    }

    /// Decides what to change from the values mpv reported.
    ///
    /// - Parameter observed: each property of ``observedProperties`` that mpv reported (one it
    ///   answered with an error, such as an unknown property, is absent).
    /// - Returns: the plan, or a refusal naming every property this mpv does not have.
    public static func plan(observed: [String: MPVValue]) -> Result<Plan, Refusal> {
        let unknown = observedProperties.filter { observed[$0] == nil }
        if !unknown.isEmpty {
            return .failure(Refusal(description: """
                this mpv has no \(unknown.map { "'\($0)'" }.joined(separator: ", ")) property, which coplay needs \
                (it was measured with mpv 0.35): upgrade mpv, or let coplay start it (--player mpv)
                """))
        }
        var apply: [Step] = []
        var restore: [Step] = []
        for requirement in requirements where !requirement.isMet(by: observed[requirement.property]) {
            guard let original = observed[requirement.property], original.argument != nil else {
                return .failure(Refusal(description: "mpv reported '\(requirement.property)' in a form coplay cannot put back; start mpv with \(requirement.option)"))
            }
            apply.append(.set(requirement.property, requirement.value))
            restore.insert(.set(requirement.property, original), at: 0)
        }
        if !hasTempoFilter(observed["af"]) {
            apply.append(.command(["af", "add", "@\(tempoLabel):\(tempoFilter)"]))
            restore.insert(.command(["af", "remove", "@\(tempoLabel)"]), at: 0)
        }
        apply.append(.command(["define-section", keySection, keyBindings, "default"]))
        apply.append(.command(["enable-section", keySection]))
        restore.insert(.command(["disable-section", keySection]), at: 0)
        return .success(Plan(apply: apply, restore: restore))
    }

    /// Whether mpv's `af` list holds an enabled `scaletempo2`.
    public static func hasTempoFilter(_ af: MPVValue?) -> Bool {
        (af?.array ?? []).contains { $0["name"]?.string == tempoFilter && $0["enabled"]?.bool != false }
    }

    /// Checks, after the plan ran, that everything the adapter needs is in force.
    ///
    /// - Parameters:
    ///   - failures: the steps mpv answered with an error, and its error text.
    ///   - readBack: the values of ``observedProperties`` read after the steps.
    /// - Returns: nil, or a refusal naming each setting that is not in force and the option that gives it.
    public static func check(failures: [Step: String], readBack: [String: MPVValue]) -> Refusal? {
        var missing: [String] = []
        for requirement in requirements where !requirement.isMet(by: readBack[requirement.property]) {
            let answer = failures[.set(requirement.property, requirement.value)].map { " (mpv answered '\($0)')" } ?? ""
            missing.append("\(requirement.property) is \(readBack[requirement.property]?.argument.map { "\($0)" } ?? "unreadable")\(answer): start mpv with \(requirement.option)")
        }
        if !hasTempoFilter(readBack["af"]) {
            let answer = failures.first { if case .command(let words) = $0.key { words.first == "af" } else { false } }
                .map { " (mpv answered '\($0.value)')" } ?? ""
            missing.append("no scaletempo2 audio filter\(answer): start mpv with --af=scaletempo2")
        }
        for (step, error) in failures where step.isKeySection {
            missing.append("the frame-step key could not be rebound (\(step): mpv answered '\(error)')")
        }
        guard !missing.isEmpty else { return nil }
        return Refusal(description: "coplay cannot drive this mpv: \(missing.joined(separator: "; "))")
    }
}

extension MPVAttachment.Step {
    var isKeySection: Bool {
        if case .command(let words) = self { return words.first?.hasSuffix("-section") == true }
        return false
    }
}

/// Which file mpv should play for an item, decided from mpv's `path`, `working-directory` and
/// `playlist`. Sans-IO. A person's mpv may already show the file (`mpv movie.mkv`), or hold it
/// in a playlist of several files; coplay then uses that entry, and otherwise adds the file to
/// the end of the playlist rather than replacing the person's playlist.
///
/// ```swift
/// MPVOpen.decide(item: "/m/a.mkv", playlist: [.init(filename: "a.mkv", current: true)], workingDirectory: "/m")
/// // .alreadyOpen
/// ```
public enum MPVOpen: Sendable, Hashable {
    /// The file is the one mpv has open.
    case alreadyOpen
    /// The file is playlist entry `index` (0-based): `playlist-play-index`.
    case playEntry(Int)
    /// The playlist is empty (an idle mpv): `loadfile PATH replace`.
    case replace
    /// The file is not in the playlist: `loadfile PATH append`, then play that new entry `index`.
    case append(index: Int)

    /// One entry of mpv's `playlist`.
    public struct Entry: Sendable, Hashable {
        public var filename: String
        public var current: Bool
        /// The entry's title, when mpv has one (from a playlist file).
        public var title: String?

        public init(filename: String, current: Bool, title: String? = nil) {
            self.filename = filename
            self.current = current
            self.title = title
        }
    }

    /// Reads mpv's `playlist` property.
    public static func entries(_ playlist: MPVValue?) -> [Entry] {
        (playlist?.array ?? []).compactMap { entry in
            entry["filename"]?.string.map { Entry(filename: $0, current: entry["current"]?.bool == true, title: entry["title"]?.string) }
        }
    }

    /// Decides how to open `item`.
    ///
    /// - Parameters:
    ///   - item: the file, absolute (or a URL).
    ///   - playlist: mpv's playlist.
    ///   - loaded: whether mpv has its current entry loaded (`path` is set).
    ///   - workingDirectory: mpv's `working-directory`, against which its relative names resolve.
    public static func decide(item: String, playlist: [Entry], loaded: Bool, workingDirectory: String?) -> MPVOpen {
        let wanted = normalized(item, in: nil)
        let matches = playlist.indices.filter { normalized(playlist[$0].filename, in: workingDirectory) == wanted }
        if loaded, matches.contains(where: { playlist[$0].current }) { return .alreadyOpen }
        if let index = matches.first { return .playEntry(index) }
        return playlist.isEmpty ? .replace : .append(index: playlist.count)
    }

    /// An absolute, standardized path (URLs as they are).
    static func normalized(_ name: String, in directory: String?) -> String {
        if name.contains("://") { return name }
        let absolute = name.hasPrefix("/") ? name : "\(directory ?? FileManager.default.currentDirectoryPath)/\(name)"
        return URL(fileURLWithPath: absolute).standardizedFileURL.path
    }
}

/// What mpv's frame-step key (`.`, rebound on attach by ``MPVAttachment``) does to the group. Sans-IO.
///
/// mpv's own frame step unpauses for one frame and pauses again; before coplay rebound the key, the
/// adapter took that unpause for the person's play key and started the whole group. Now the key steps
/// the group: while the group is paused, a group seek to the next frame (everyone stays paused and
/// shows that frame); while it plays, a group pause (mpv's step also ends in a pause). `,` (frame back
/// step) keeps mpv's binding: it is an exact seek the adapter already proposes to the group.
///
/// ```swift
/// FrameStep.action(groupRate: 0, itemTime: 1.0, timeline: clip)   // .seek(1.04) at 25 fps
/// ```
public enum FrameStep: Sendable, Hashable {
    /// Propose a group seek to this item time (the next frame's presentation time).
    case seek(Double)
    /// Propose a group pause.
    case pause
    /// Nothing (no group state yet, or the last frame is shown).
    case ignored

    /// Decides what a frame-step key press does.
    ///
    /// - Parameters:
    ///   - groupRate: the group's rate (0 paused), nil before the group has a state.
    ///   - itemTime: the group's item time (paused: where it stands).
    ///   - timeline: the item's frame times.
    public static func action(groupRate: Double?, itemTime: Double?, timeline: MediaTimeline?) -> FrameStep {
        guard let groupRate else { return .ignored }
        if groupRate > 0 { return .pause }
        guard let itemTime, let timeline, let frame = timeline.frame(displayedAt: itemTime + 1e-6),
            frame + 1 < timeline.frameCount
        else { return .ignored }
        return .seek(timeline.presentationTime(ofFrame: frame + 1))
    }
}
