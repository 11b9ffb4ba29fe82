import Foundation
import Logging
import NIOPosix

/// Probes media files with libavformat: container, streams, frame timelines, fingerprints.
///
/// libavformat's calls block (file I/O, parsing), so every probe runs on a `NIOThreadPool`, never
/// on Swift concurrency's cooperative pool; probes of different files run in parallel up to the
/// pool's thread count. Nothing is decoded: `avformat_find_stream_info` reads the stream
/// parameters and, with ``Options/scanPackets``, every packet's timestamp is read.
///
/// Failures are ``MediaProbeError``s with a readable description (missing file, permission
/// denied, not media, truncated or corrupt, no usable streams, timed out).
///
/// libavutil's own logging is switched to `AV_LOG_QUIET` the first time a `MediaProbe` is used
/// (it is process-wide and would print to standard error); errors reach callers as values instead.
///
/// ```swift
/// let probe = MediaProbe(logger: logger)
/// let info = try await probe.probe(URL(fileURLWithPath: "samples/vfr.mkv"),
///                                  options: .init(scanPackets: true))
/// let frames = info.primaryVideoStream?.timeline?.frameTimes ?? []
/// ```
public struct MediaProbe: Sendable {
    /// The pool the blocking libavformat calls run on.
    public let threadPool: NIOThreadPool
    /// Where the probe logs (debug level: one line per probe).
    public let logger: Logger

    /// A probe on NIO's shared thread pool that logs to the caller's task-local logger
    /// (`Logger.current`, bound with swift-log's `withLogger`): the convenience for one-off probes.
    public static var shared: MediaProbe { MediaProbe(logger: .current) }

    /// Creates a probe.
    ///
    /// - Parameters:
    ///   - threadPool: Where blocking calls run; NIO's process-wide singleton by default (it needs no
    ///     shutdown). Pass your own pool to bound parallelism; you then shut it down.
    ///   - logger: Receives debug-level lines about each probe.
    public init(threadPool: NIOThreadPool = .singleton, logger: Logger) {
        self.threadPool = threadPool
        self.logger = logger
    }

    /// Probes one file.
    ///
    /// - Parameters:
    ///   - url: A `file:` URL.
    ///   - options: Whether to scan packets, and the deadline.
    /// - Returns: The container, its streams and the fingerprint.
    /// - Throws: ``MediaProbeError`` for every problem with the file; `CancellationError` if the task
    ///   is cancelled (libavformat stops at its next read); NIO's error if the thread pool is shut down.
    public func probe(_ url: URL, options: Options = Options()) async throws -> MediaInfo {
        // As given (relative stays relative), like ffprobe's `filename`.
        let path = url.relativePath
        let logger = self.logger
        logger.debug("probing", metadata: ["path": "\(path)", "scanPackets": "\(options.scanPackets)"])
        guard url.isFileURL else {
            throw MediaProbeError.readFailed(path: url.absoluteString, detail: "only local files (file: URLs) can be probed")
        }
        let interrupt = ProbeInterrupt(after: options.timeout)
        do {
            let info = try await withTaskCancellationHandler {
                try await threadPool.runIfActive {
                    try FormatProbe.run(path: path, options: options, interrupt: interrupt)
                }
            } onCancel: {
                interrupt.cancel()
            }
            logger.debug(
                "probed",
                metadata: ["path": "\(path)", "format": "\(info.formatName)", "streams": "\(info.streams.count)"]
            )
            return info
        } catch let error as MediaProbeError {
            logger.debug("probe failed", metadata: ["path": "\(path)", "error": "\(error)"])
            if error.code == .cancelled { throw CancellationError() }
            throw error
        }
    }

    /// The content fingerprint of one file alone: its size and both ends, without libavformat (two
    /// 64 KiB reads, whatever the file's size).
    ///
    /// - Parameter url: A `file:` URL.
    /// - Returns: What ``MediaInfo/fingerprint`` of a probe of the same file would be.
    /// - Throws: ``MediaProbeError`` for a missing, unreadable, empty or non-regular file.
    public func fingerprint(of url: URL) async throws -> ContentFingerprint {
        let path = url.relativePath
        guard url.isFileURL else {
            throw MediaProbeError.readFailed(path: url.absoluteString, detail: "only local files (file: URLs) can be probed")
        }
        return try await threadPool.runIfActive {
            let ends = try FormatProbe.readEnds(path: path)
            return ContentFingerprint(size: ends.size, head: ends.head, tail: ends.tail)
        }
    }

    /// Probes one file with ``shared``.
    ///
    /// - Parameters:
    ///   - url: A `file:` URL.
    ///   - options: Whether to scan packets, and the deadline.
    public static func probe(_ url: URL, options: Options = Options()) async throws -> MediaInfo {
        try await shared.probe(url, options: options)
    }
}
