import CoreMetrics
import Prometheus

/// The Prometheus backend for a relay's swift-metrics: a registry, and a factory that registers
/// every coplay metric with its help text (Prometheus' text format wants one per metric, and
/// `promtool check metrics` insists). Metrics the factory does not know get none.
///
/// ```swift
/// let prometheus = RelayPrometheus()
/// var configuration = RelayConfiguration()
/// configuration.metricsFactory = prometheus.factory
/// let text = prometheus.exposition()    // what GET /metrics answers
/// ```
public final class RelayPrometheus: Sendable {
    /// Where the metrics live.
    public let registry: PrometheusCollectorRegistry
    /// The swift-metrics factory to give ``RelayConfiguration/metricsFactory``.
    public let factory: any MetricsFactory

    /// A fresh registry (one per relay: metrics of two relays in one process never mix).
    public init() {
        let registry = PrometheusCollectorRegistry()
        self.registry = registry
        var prometheus = PrometheusMetricsFactory(registry: registry)
        prometheus.durationHistogramBuckets["coplay_relay_delivery_latency_seconds"] = RelayInstruments.latencyBuckets
        factory = DescribedFactory(base: prometheus, registry: registry, help: RelayInstruments.help)
    }

    /// The Prometheus text exposition (format 0.0.4).
    public func exposition() -> [UInt8] {
        var bytes: [UInt8] = []
        registry.emit(into: &bytes)
        return bytes
    }
}

/// Creates counters, gauges and histograms in the registry with their help text, and hands
/// everything else to swift-prometheus' own factory.
private struct DescribedFactory: MetricsFactory {
    let base: PrometheusMetricsFactory
    let registry: PrometheusCollectorRegistry
    let help: [String: String]

    private func descriptor(_ label: String) -> MetricNameDescriptor {
        MetricNameDescriptor(metricName: label, unitName: "", helpText: help[label] ?? "")
    }

    func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler {
        registry.makeCounter(descriptor: descriptor(label), labels: dimensions)
    }

    func makeFloatingPointCounter(label: String, dimensions: [(String, String)]) -> any FloatingPointCounterHandler {
        base.makeFloatingPointCounter(label: label, dimensions: dimensions)
    }

    func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler {
        guard !aggregate else { return base.makeRecorder(label: label, dimensions: dimensions, aggregate: aggregate) }
        return registry.makeGauge(descriptor: descriptor(label), labels: dimensions)
    }

    func makeMeter(label: String, dimensions: [(String, String)]) -> any MeterHandler {
        registry.makeGauge(descriptor: descriptor(label), labels: dimensions)
    }

    func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler {
        let buckets = base.durationHistogramBuckets[label] ?? base.defaultDurationHistogramBuckets
        return registry.makeDurationHistogram(descriptor: descriptor(label), labels: dimensions, buckets: buckets)
    }

    func destroyCounter(_ handler: any CounterHandler) { base.destroyCounter(handler) }
    func destroyFloatingPointCounter(_ handler: any FloatingPointCounterHandler) { base.destroyFloatingPointCounter(handler) }
    func destroyRecorder(_ handler: any RecorderHandler) { base.destroyRecorder(handler) }
    func destroyMeter(_ handler: any MeterHandler) { base.destroyMeter(handler) }
    func destroyTimer(_ handler: any TimerHandler) { base.destroyTimer(handler) }
}
