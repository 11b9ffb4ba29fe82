import Logging

/// A log handler that keeps every rendered record in memory, as `"LEVEL message [metadata]"`, for tests
/// that check what a component logged.
///
/// ```swift
/// let records = LockedBox<[String]>([])
/// let logger = Logger(label: "relay") { _ in CapturingLogHandler(records: records) }
/// ```
public struct CapturingLogHandler: LogHandler {
    public let records: LockedBox<[String]>
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level = .trace

    public init(records: LockedBox<[String]>) {
        self.records = records
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        let all = metadata.merging(event.metadata ?? [:]) { $1 }
        records.mutate { $0.append("\(event.level) \(event.message) \(all)") }
    }
}
