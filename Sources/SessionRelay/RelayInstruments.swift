import CoreMetrics
import GroupSessions
import Metrics
import Synchronization

/// The relay's metrics, through swift-metrics: whichever backend the factory belongs to records
/// them (`coplay serve --metrics` uses ``RelayPrometheus``; the default is the process-wide
/// `MetricsSystem.factory`, a no-op until an application bootstraps one).
///
/// Totals the hub keeps anyway (``HubCounters``) are not counted twice on the hot path: ``update(from:)``
/// adds what changed since the last call, and runs before every scrape and on the relay's tick.
/// Only the delivery latency is recorded as it happens, once per write batch.
final class RelayInstruments: Sendable {
    /// Every metric's name and help text (the Prometheus exposition needs help for each).
    static let help: [String: String] = [
        "coplay_relay_connections": "Open member connections (TCP and WebSocket).",
        "coplay_relay_sessions": "Live sessions.",
        "coplay_relay_participants": "Joined participants over all sessions.",
        "coplay_relay_journal_bytes": "Bytes of journal attachments stored, over all sessions.",
        "coplay_relay_frames_received_total": "Frames received from members.",
        "coplay_relay_frames_forwarded_total": "Data frames forwarded, once per recipient.",
        "coplay_relay_bytes_forwarded_total": "Data payload bytes forwarded, once per recipient.",
        "coplay_relay_frames_refused_total": "Frames refused with an error frame.",
        "coplay_relay_frames_dropped_total": "Unreliable frames dropped for slow recipients.",
        "coplay_relay_duplicates_dropped_total": "Data frames a resuming member sent again, dropped quietly.",
        "coplay_relay_resumes_total": "Members that resumed after a lost connection.",
        "coplay_relay_slow_consumers_total": "Connections closed for not reading.",
        "coplay_relay_idle_connections_closed_total": "Connections closed after sending nothing for the idle timeout.",
        "coplay_relay_retained_evicted_total": "Retained frames dropped to make room for a new key (evictable frames).",
        "coplay_relay_errors_total": "Error frames sent, by error code.",
        "coplay_relay_delivery_latency_seconds":
            "Time from queueing a frame for a recipient to writing it (the oldest frame of each write batch).",
    ]

    /// Bucket bounds of the delivery latency histogram.
    static let latencyBuckets: [Duration] = [
        .microseconds(50), .microseconds(100), .microseconds(250), .microseconds(500), .milliseconds(1),
        .milliseconds(2), .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50),
        .milliseconds(100), .milliseconds(250), .milliseconds(1000),
    ]

    private let factory: any MetricsFactory
    private let connections: Gauge
    private let sessions: Gauge
    private let participants: Gauge
    private let journalBytes: Gauge
    private let framesReceived: Counter
    private let framesForwarded: Counter
    private let bytesForwarded: Counter
    private let framesRefused: Counter
    private let framesDropped: Counter
    private let duplicatesDropped: Counter
    private let resumes: Counter
    private let slowConsumers: Counter
    private let idleClosed: Counter
    private let retainedEvicted: Counter
    let deliveryLatency: Metrics.Timer
    private let last = Mutex<(counters: HubCounters, slowConsumers: UInt64, errors: [RelayErrorCode: UInt64])>(
        (HubCounters(), 0, [:]))

    init(factory: any MetricsFactory) {
        self.factory = factory
        connections = Gauge(label: "coplay_relay_connections", factory: factory)
        sessions = Gauge(label: "coplay_relay_sessions", factory: factory)
        participants = Gauge(label: "coplay_relay_participants", factory: factory)
        journalBytes = Gauge(label: "coplay_relay_journal_bytes", factory: factory)
        framesReceived = Counter(label: "coplay_relay_frames_received_total", factory: factory)
        framesForwarded = Counter(label: "coplay_relay_frames_forwarded_total", factory: factory)
        bytesForwarded = Counter(label: "coplay_relay_bytes_forwarded_total", factory: factory)
        framesRefused = Counter(label: "coplay_relay_frames_refused_total", factory: factory)
        framesDropped = Counter(label: "coplay_relay_frames_dropped_total", factory: factory)
        duplicatesDropped = Counter(label: "coplay_relay_duplicates_dropped_total", factory: factory)
        resumes = Counter(label: "coplay_relay_resumes_total", factory: factory)
        slowConsumers = Counter(label: "coplay_relay_slow_consumers_total", factory: factory)
        idleClosed = Counter(label: "coplay_relay_idle_connections_closed_total", factory: factory)
        retainedEvicted = Counter(label: "coplay_relay_retained_evicted_total", factory: factory)
        deliveryLatency = Metrics.Timer(label: "coplay_relay_delivery_latency_seconds", factory: factory)
    }

    /// Brings every metric up to `snapshot`.
    func update(from snapshot: RelayMetrics, journalBytes stored: Int) {
        connections.record(snapshot.connections)
        sessions.record(snapshot.sessions)
        participants.record(snapshot.participants)
        journalBytes.record(stored)
        let (before, slowBefore, errorsBefore) = last.withLock { last in
            defer { last = (snapshot.counters, snapshot.slowConsumers, snapshot.errorsSent) }
            return last
        }
        let now = snapshot.counters
        func add(_ counter: Counter, _ new: UInt64, _ old: UInt64) {
            if new > old { counter.increment(by: Int64(clamping: new - old)) }
        }
        add(framesReceived, now.framesReceived, before.framesReceived)
        add(framesForwarded, now.framesForwarded, before.framesForwarded)
        add(bytesForwarded, now.bytesForwarded, before.bytesForwarded)
        add(framesRefused, now.framesRefused, before.framesRefused)
        add(framesDropped, now.framesDropped, before.framesDropped)
        add(duplicatesDropped, now.duplicatesDropped, before.duplicatesDropped)
        add(resumes, now.resumes, before.resumes)
        add(idleClosed, now.idleConnectionsClosed, before.idleConnectionsClosed)
        add(retainedEvicted, now.retainedEvicted, before.retainedEvicted)
        add(slowConsumers, snapshot.slowConsumers, slowBefore)
        for (code, count) in snapshot.errorsSent where count > errorsBefore[code, default: 0] {
            Counter(label: "coplay_relay_errors_total", dimensions: [("code", Self.label(code))], factory: factory)
                .increment(by: Int64(clamping: count - errorsBefore[code, default: 0]))
        }
    }

    /// An error code as a label value: its name with underscores (`frame_too_large`).
    static func label(_ code: RelayErrorCode) -> String {
        String(describing: code).replacingOccurrences(of: " ", with: "_")
    }
}
