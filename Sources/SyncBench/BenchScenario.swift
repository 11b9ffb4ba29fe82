import NetworkEmulation

/// A named benchmark scenario of issue 6: which implementation, how many players, for how long, over
/// which network, with which clock offsets and drifts.
///
/// | name | implementation | players | duration | network | clocks |
/// |---|---|---:|---:|---|---|
/// | `quiet` | coplay | 3 | 60 s | loopback | own time namespace each |
/// | `jitter` | coplay | 3 | 60 s | 20 ms ± 10 ms each way | idem |
/// | `asymmetric` | coplay | 3 | 60 s | 65 ms up, 35 ms down | idem |
/// | `loss` | coplay | 3 | 60 s | 1 % each way | idem |
/// | `drift` | coplay | 3 | 600 s | loopback | ±100 ppm software drift |
/// | `crowd` | coplay | 8 | 60 s | loopback | idem |
/// | `mpv` | coplay + mpv | 3 | 60 s | loopback | `coplay join` in its own time namespace; mpv on the machine's clocks |
/// | `mpv-jitter` | coplay + mpv | 3 | 60 s | 20 ms ± 10 ms each way | idem |
/// | `mpv-plain` | coplay + mpv | 3 | 60 s | loopback | idem, but each mpv is started as README says (`mpv --input-ipc-server=SOCK --vo=null --ao=null MEDIA`, none of coplay's options) |
/// | `mpv-plain-av` | coplay + mpv | 3 | 60 s | loopback | idem, on a clip with an audio track |
/// | `mpv-audio` | coplay + mpv | 3 | 60 s | loopback | coplay's options, a clip with an audio track played through a PulseAudio null sink (`--ao=pulse`) |
/// | `mpv-plain-audio` | coplay + mpv | 3 | 60 s | loopback | plain mpv, audio track, PulseAudio |
/// | `syncplay` | Syncplay + mpv | 2 | 60 s | loopback | shared clock |
/// | `browser` | coplay + Chromium | 3 | 60 s | loopback | 1 `coplay join` (own time namespace) + 2 headless Chromium pages |
/// | `browser-audio` | coplay + Chromium | 3 | 60 s | loopback | idem, on a clip with an audio track |
/// | `queue` | coplay + mpv | 3 headless + 3 mpv | 50 transitions | loopback | a 1,000-entry queue of short clips of 5 frame rates, ``QueueScenarioRunner`` |
///
/// The browser scenarios, `queue`, and the mpv ones other than `mpv`, `mpv-jitter` and `mpv-plain` are
/// not part of the default run (``defaultNames``): ask for them by name.
///
/// ```swift
/// var scenario = try BenchScenario.named("jitter")
/// scenario.players = 2
/// ```
package struct BenchScenario: Sendable, Hashable {
    /// Which player software the scenario measures.
    package enum Implementation: String, Sendable, Hashable, Codable {
        /// `coplay serve` + `coplay join` players.
        case coplay
        /// `syncplay-server` + `syncplay --no-gui` clients driving mpv.
        case syncplay
    }

    /// The media player a coplay scenario's members drive.
    package enum MediaPlayer: String, Sendable, Hashable, Codable {
        /// coplay's own headless player (`coplay join --frames`), which reports each frame itself.
        case headless
        /// An mpv the runner starts (`--vo=null --ao=null`), driven by `coplay join --mpv-socket`; its
        /// frames are seen by the benchmark's own sampler (``MPVFrameSampler``).
        case mpv
        /// The first member is a headless `coplay join --frames`; every other one is a page of the
        /// relay's web client in its own headless Chromium (`scripts/browser-driver.py`), each frame dated
        /// by its display time (``BrowserFrameEstimator``).
        case browser
    }

    /// How a mpv scenario's mpv is started.
    package enum MPVLaunch: String, Sendable, Hashable, Codable {
        /// With coplay's options (`MPVProcess.baseArguments`), idle and paused.
        case configured
        /// As a person runs it from README: `mpv --input-ipc-server=SOCK --vo=null --ao=... MEDIA`,
        /// playing at once; `coplay join --mpv-socket` sets what it needs on attach.
        case plain
    }

    /// Where a mpv scenario's mpv sends its sound.
    package enum AudioOutput: String, Sendable, Hashable, Codable {
        /// `--ao=null`.
        case null
        /// `--ao=pulse`, to a PulseAudio server with a null sink the runner starts.
        case pulse
    }

    /// The `queue` scenario's members and script (``QueueScenarioRunner``).
    package struct QueueOptions: Sendable, Hashable {
        /// Measured headless members (`coplay join --frames`).
        package var headless: Int
        /// Measured mpv members (`coplay join --mpv-socket`, an mpv the runner starts and samples).
        package var mpv: Int
        /// Transitions to measure.
        package var transitions: Int
        /// Entries in the host's queue.
        package var entries: Int

        /// Creates the options: by default 3 headless and 3 mpv members, 50 transitions, 1,000 entries.
        package init(headless: Int = 3, mpv: Int = 3, transitions: Int = 50, entries: Int = 1_000) {
            self.headless = headless
            self.mpv = mpv
            self.transitions = transitions
            self.entries = entries
        }
    }

    /// The scenario's name.
    package var name: String
    /// The implementation measured.
    package var implementation: Implementation
    /// The number of measured players (a coplay scenario's last one joins late).
    package var players: Int
    /// Seconds of action script.
    package var duration: Double
    /// The network between each player and the relay.
    package var network: NetworkCondition
    /// Software clock drift of the players in ppm, cycled over the players (empty: none).
    package var driftPPM: [Double]
    /// The media player of a coplay scenario's members.
    package var mediaPlayer: MediaPlayer
    /// Whether the generated test clip has an audio track (a 440 Hz AAC tone) besides its video.
    package var audio: Bool
    /// Whether `coplay bench` without `--scenario` runs it.
    package var inDefaultRun: Bool
    /// mpv scenarios: how each mpv is started.
    package var mpvLaunch: MPVLaunch
    /// mpv scenarios: the audio output.
    package var audioOutput: AudioOutput
    /// The group's playback rate for the script (`coplay bench --rate`): 1, or a rate set right after
    /// the first play and restored after the script's 0.5 phase.
    package var rate: Double
    /// The `queue` scenario: its members and script, run by ``QueueScenarioRunner`` instead of the
    /// action script (nil for every other scenario).
    package var queue: QueueOptions?

    /// Creates a scenario.
    package init(
        name: String, implementation: Implementation = .coplay, players: Int = 3, duration: Double = 60,
        network: NetworkCondition = .quiet, driftPPM: [Double] = [], mediaPlayer: MediaPlayer = .headless,
        audio: Bool = false, inDefaultRun: Bool = true, mpvLaunch: MPVLaunch = .configured, audioOutput: AudioOutput = .null,
        rate: Double = 1, queue: QueueOptions? = nil
    ) {
        self.queue = queue
        self.mpvLaunch = mpvLaunch
        self.audioOutput = audioOutput
        self.rate = rate
        self.mediaPlayer = mediaPlayer
        self.audio = audio
        self.inDefaultRun = inDefaultRun
        self.name = name
        self.implementation = implementation
        self.players = players
        self.duration = duration
        self.network = network
        self.driftPPM = driftPPM
    }

    /// The drift of player `number` (0-based), in ppm.
    package func drift(ofPlayer number: Int) -> Double {
        driftPPM.isEmpty ? 0 : driftPPM[number % driftPPM.count]
    }

    /// The seconds by which player `number`'s time namespace shifts CLOCK_MONOTONIC and CLOCK_BOOTTIME:
    /// hours apart, plus a few hundred seconds that differ per player.
    /// Whole seconds, as `unshare --monotonic` takes them.
    package static func clockOffset(ofPlayer number: Int) -> Int {
        (number + 1) * 3600 + (number * 337) % 1000
    }

    /// Every named scenario, in the default run order.
    package static let all: [BenchScenario] = [
        BenchScenario(name: "quiet"),
        BenchScenario(name: "jitter", network: .jitter),
        BenchScenario(name: "asymmetric", network: .asymmetric),
        BenchScenario(name: "loss", network: .loss),
        BenchScenario(name: "drift", duration: 600, driftPPM: [100, -100]),
        BenchScenario(name: "crowd", players: 8),
        BenchScenario(name: "mpv", mediaPlayer: .mpv),
        BenchScenario(name: "mpv-jitter", network: .jitter, mediaPlayer: .mpv),
        BenchScenario(name: "mpv-plain", mediaPlayer: .mpv, mpvLaunch: .plain),
        BenchScenario(name: "mpv-plain-av", mediaPlayer: .mpv, audio: true, inDefaultRun: false, mpvLaunch: .plain),
        BenchScenario(name: "mpv-audio", mediaPlayer: .mpv, audio: true, inDefaultRun: false, audioOutput: .pulse),
        BenchScenario(
            name: "mpv-plain-audio", mediaPlayer: .mpv, audio: true, inDefaultRun: false, mpvLaunch: .plain, audioOutput: .pulse),
        BenchScenario(name: "syncplay", implementation: .syncplay, players: 2),
        BenchScenario(name: "browser", mediaPlayer: .browser, inDefaultRun: false),
        BenchScenario(name: "browser-audio", mediaPlayer: .browser, audio: true, inDefaultRun: false),
        BenchScenario(name: "queue", players: 6, inDefaultRun: false, queue: QueueOptions()),
    ]

    /// The names of every scenario.
    package static var names: [String] { all.map(\.name) }

    /// The scenarios `coplay bench` runs when none is named: all but the browser ones (they need
    /// Chromium and Playwright, and two browsers on a 2-core machine).
    package static var defaultNames: [String] { all.filter(\.inDefaultRun).map(\.name) }

    /// How many of the measured players are browser pages: all but the first in a browser scenario.
    package var browserPages: Int { mediaPlayer == .browser ? max(0, players - 1) : 0 }

    /// The scenario called `name`.
    ///
    /// - Throws: ``BenchError`` naming the known scenarios.
    package static func named(_ name: String) throws -> BenchScenario {
        guard let scenario = all.first(where: { $0.name == name }) else {
            throw BenchError.scenarioFailed("unknown scenario '\(name)' (known: \(names.joined(separator: ", ")))")
        }
        return scenario
    }
}
