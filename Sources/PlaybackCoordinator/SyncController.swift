/// Keeps a free-running decoder on the group's timeline.
///
/// Compare the position the decoder actually presents with the position the timeline expects at
/// the same reference instant, and call ``update(errorMilliseconds:canTrim:)``:
/// - an error at or above ``Configuration/seekThresholdMs`` -> seek to the expected position;
/// - an error at or above ``Configuration/trimStartMs`` -> play slightly faster or slower
///   (``Configuration/trimFraction`` of the rate) until the error falls to
///   ``Configuration/trimStopMs`` or changes sign.
///
/// Starting a trim needs a larger error than stopping one (hysteresis), and a trim always stops
/// once the error crosses zero, so the controller never oscillates: after a stop the error must
/// grow again by `trimStartMs - trimStopMs` before anything happens.
///
/// ```swift
/// var controller = SyncController()
/// switch controller.update(errorMilliseconds: +0.8) {      // we are 0.8 ms ahead
/// case .trim(let fraction): decoder.rate = rate * (1 + fraction)   // fraction < 0: slow down
/// case .seek: decoder.seek(to: expected)
/// case .endTrim: decoder.rate = rate
/// case .none: break
/// }
/// ```
public struct SyncController: Hashable, Sendable {
    /// Thresholds, in milliseconds of presentation time.
    public struct Configuration: Hashable, Sendable {
        /// Start trimming at this absolute error.
        public var trimStartMs: Double = 0.5
        /// Stop trimming at or below this absolute error (or when the error changes sign).
        public var trimStopMs: Double = 0.1
        /// Seek at or above this absolute error.
        public var seekThresholdMs: Double = 40
        /// Rate adjustment while trimming, as a fraction of the rate (0.005 = 5 ms per second).
        public var trimFraction: Double = 0.005

        /// Creates the default configuration.
        public init() {}

        /// Creates a configuration.
        public init(trimStartMs: Double, trimStopMs: Double, seekThresholdMs: Double, trimFraction: Double) {
            self.trimStartMs = trimStartMs
            self.trimStopMs = trimStopMs
            self.seekThresholdMs = seekThresholdMs
            self.trimFraction = trimFraction
        }
    }

    /// What to do.
    public enum Decision: Hashable, Sendable {
        /// Nothing.
        case none
        /// Play at `rate * (1 + fraction)` from now on.
        case trim(fraction: Double)
        /// Play at the nominal rate again.
        case endTrim
        /// Jump to the expected position (and play at the nominal rate).
        case seek
    }

    /// The thresholds.
    public var configuration: Configuration
    /// The trim in force (0 when not trimming).
    public private(set) var trim: Double = 0

    /// Creates a controller.
    public init(configuration: Configuration = .init()) {
        self.configuration = configuration
    }

    /// Decides on a correction.
    ///
    /// - Parameters:
    ///   - error: presented minus expected position, in milliseconds of presentation time
    ///     (positive: the decoder is ahead).
    ///   - canTrim: `false` while paused (only seeks can correct then).
    public mutating func update(errorMilliseconds error: Double, canTrim: Bool = true) -> Decision {
        let magnitude = abs(error)
        if magnitude >= configuration.seekThresholdMs || (!canTrim && magnitude >= configuration.trimStartMs) {
            trim = 0
            return .seek
        }
        if trim != 0 {
            let crossed = (trim < 0 && error <= 0) || (trim > 0 && error >= 0)
            if magnitude <= configuration.trimStopMs || crossed || !canTrim {
                trim = 0
                return .endTrim
            }
            return .none
        }
        if canTrim, magnitude >= configuration.trimStartMs {
            trim = error > 0 ? -configuration.trimFraction : configuration.trimFraction
            return .trim(fraction: trim)
        }
        return .none
    }

    /// Forgets any trim (after the timeline changed under the decoder).
    public mutating func reset() { trim = 0 }
}
