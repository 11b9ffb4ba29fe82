/// One line of a player's event stream (JSON Lines), as the benchmark runner reads it.
///
/// Every line carries `type` and `realtime` (CLOCK_REALTIME seconds, the ground truth that time
/// namespaces do not shift). The other fields depend on the type; unknown types are kept and ignored
/// by the analysis, so players may print whatever else they find useful.
///
/// | type | fields |
/// |---|---|
/// | `frame` | `index` (frame number on the media's grid), `pts` (seconds), `player` |
/// | `command` | `action` (`play`, `pause`, `seek`, `rate`, `suspension`, ...), `target` (seek seconds, rate, or suspension length), `id`, `player` (originator) |
/// | `effect` | `action` (a command's, or `resume` at the end of a suspension), `id` (of the command, when known), `player` (the one that applied it) |
/// | `clock` | `offset` (the player's estimate of reference minus local, seconds), `trueOffset` (when the player knows it) |
///
/// ```swift
/// let event = BenchEvent.frame(index: 25, pts: 1.0, realtime: 1_700_000_000.04, player: "a")
/// ```
package struct BenchEvent: Codable, Sendable, Hashable {
    /// The event type: `frame`, `command`, `effect`, `clock`, or anything else (ignored).
    package var type: String
    /// CLOCK_REALTIME seconds at which the event happened.
    package var realtime: Double
    /// The player the event belongs to (for `command`: the originator).
    package var player: String?
    /// Frame number (frame events).
    package var index: Int?
    /// Presentation timestamp in seconds (frame events).
    package var pts: Double?
    /// The command's action (command and effect events).
    package var action: String?
    /// The seek target in seconds, the rate, or a suspension's length in seconds (command events).
    package var target: Double?
    /// An identifier tying effects to their command.
    package var id: String?
    /// The player's estimated clock offset in seconds (clock events).
    package var offset: Double?
    /// The true clock offset in seconds, when the player knows it (clock events).
    package var trueOffset: Double?
    /// The participant an event is about, by its label as coplay prints it (`originator`: its name,
    /// else its id); the player's own `nearCopy` event names the player itself.
    package var originator: String?

    /// Whether this is the player's own `nearCopy` event: it plays another encode, not the item's
    /// frames, and its stream is left out of accuracy figures.
    package var isOwnNearCopy: Bool {
        type == "nearCopy" && originator != nil && originator == player
    }

    /// Creates an event; prefer the static factories.
    package init(
        type: String, realtime: Double, player: String? = nil, index: Int? = nil, pts: Double? = nil,
        action: String? = nil, target: Double? = nil, id: String? = nil, offset: Double? = nil,
        trueOffset: Double? = nil
    ) {
        self.type = type
        self.realtime = realtime
        self.player = player
        self.index = index
        self.pts = pts
        self.action = action
        self.target = target
        self.id = id
        self.offset = offset
        self.trueOffset = trueOffset
    }

    /// A frame presented by `player` at `realtime`.
    package static func frame(index: Int, pts: Double, realtime: Double, player: String) -> BenchEvent {
        BenchEvent(type: "frame", realtime: realtime, player: player, index: index, pts: pts)
    }

    /// A command issued by `player` at `realtime`.
    package static func command(
        _ action: String, target: Double? = nil, id: String? = nil, realtime: Double, player: String
    ) -> BenchEvent {
        BenchEvent(type: "command", realtime: realtime, player: player, action: action, target: target, id: id)
    }

    /// A command's effect observed on `player` at `realtime`.
    package static func effect(_ action: String, id: String? = nil, realtime: Double, player: String) -> BenchEvent {
        BenchEvent(type: "effect", realtime: realtime, player: player, action: action, id: id)
    }

    /// A clock-offset estimate reported by `player`.
    package static func clock(offset: Double, trueOffset: Double? = nil, realtime: Double, player: String) -> BenchEvent {
        BenchEvent(type: "clock", realtime: realtime, player: player, offset: offset, trueOffset: trueOffset)
    }
}
