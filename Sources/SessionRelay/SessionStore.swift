import Foundation
import GroupSessions
import Logging
import NIOCore
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Keeps the relay's sessions on disk so a restarted relay resumes them (`--data-dir`).
///
/// Layout under the data directory (directories mode 0700, files 0600):
///
/// - `sessions/<session-id-hex>/state`: JSON metadata, replaced atomically (write + rename):
///   format, join-token hash (hex), last sequence, resume-log floor, joined members, and per
///   sender the highest sender sequence stamped.
/// - `sessions/<session-id-hex>/frames`: append-only records `length u32 | kind u8 | frame`
///   (the frame as on the wire); kind 1 = a stamped frame of the resume log, kind 2 = a
///   retained frame carried over by compaction. A torn last record is ignored on load.
///
/// Nothing stored is a secret or a plaintext: hashes, numbers and sealed frames. Each stamped
/// frame is appended with `write(2)` *before* its `ack` is queued, so an acknowledged frame
/// survives the relay being killed (the data is in the kernel's page cache); there is no
/// `fsync`, so a power loss may lose the last acknowledged frames. When `frames` has grown well
/// past what the session holds, it is rewritten from a ``SessionSnapshot`` (compaction).
/// `sessions/<hex>/journal/` belongs to the attachment journal and is left alone, except that
/// deleting a session deletes its whole directory.
///
/// Calls for one session must not overlap (the relay makes them one at a time, from its storage
/// task); calls for different sessions may run concurrently. The ``SessionPersistence`` calls run
/// their file I/O on a Dispatch worker thread (``blockingIO(_:)``) while the caller waits.
///
/// ```swift
/// let store = try SessionStore(directory: "/var/lib/coplay", logger: logger)
/// for snapshot in try await store.load() { hub.restore(snapshot, now: .zero) }
/// ```
package final class SessionStore: SessionPersistence {
    private struct Metadata: Codable {
        var format = 1
        var tokenHash: String
        var sequence: UInt64
        var logFloor: UInt64
        var joined: [UInt64]
        var senderHigh: [String: UInt64]
    }

    private struct OpenLog {
        var descriptor: Int32
        var bytes: Int
        var compactAbove: Int
    }

    static let logRecord: UInt8 = 1
    static let retainedRecord: UInt8 = 2
    /// The `frames` file is compacted once it exceeds this many bytes and twice its last compacted size.
    static let compactionThreshold = 32 << 20

    private let sessionsDirectory: URL
    private let logger: Logger
    private let logs = Mutex<[SessionID: OpenLog]>([:])

    /// Opens (creating if needed) the store under `directory`.
    ///
    /// - Parameters:
    ///   - directory: The relay's data directory (`--data-dir`).
    ///   - logger: Where the store logs (info and below).
    package init(directory: String, logger: Logger) throws {
        sessionsDirectory = URL(fileURLWithPath: directory).appendingPathComponent("sessions")
        self.logger = logger
        try Self.makeDirectory(URL(fileURLWithPath: directory))
        try Self.makeDirectory(sessionsDirectory)
    }

    deinit {
        logs.withLock { logs in for log in logs.values { close(log.descriptor) } }
    }

    private static func makeDirectory(_ url: URL) throws {
        try FileManager.default.createDirectory(
            at: url, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: url.path)
    }

    private func directory(of session: SessionID) -> URL {
        sessionsDirectory.appendingPathComponent("\(session)")
    }

    // MARK: SessionPersistence

    /// Writes `events` in order (errors are logged, not thrown: the relay keeps serving from memory).
    package func commit(_ events: [SessionStoreEvent], of session: SessionID, lease: SessionLease?) async throws {
        try await blockingIO { self.writeEvents(events) }
    }

    /// Rewrites the session's files from `snapshot` (retained frames, then the resume log).
    package func compact(_ snapshot: SessionSnapshot) async throws {
        try await blockingIO { try self.compactNow(snapshot) }
    }

    /// Reads every stored session. A session whose files cannot be read is logged and skipped.
    package func load() async throws -> [SessionSnapshot] {
        try await blockingIO { try self.loadNow() }
    }

    // MARK: Writing

    /// Writes one hub event, blocking. Errors are logged, not thrown: the relay keeps serving from memory.
    package func apply(_ event: SessionStoreEvent) {
        do {
            switch event {
            case .updated(let snapshot): try writeMetadata(snapshot)
            case .logged(let session, let frame): try append(frame, kind: Self.logRecord, to: session)
            case .deleted(let session): try delete(session)
            }
        } catch {
            logger.info("could not write session state", metadata: ["error": "\(error)"])
        }
    }

    /// Writes `events` in order, blocking, as ``apply(_:)`` would one by one, except that each run of
    /// consecutive `.logged` records of one session is encoded into one buffer and appended with one
    /// `write` (a group commit of 500 forwarded frames is one system call, not 500). A record torn
    /// by a crash in the middle of that write is ignored on loading, as a single one would be.
    /// Errors are logged, not thrown.
    package func writeEvents(_ events: [SessionStoreEvent]) {
        var records = ByteBuffer()
        var recordsOf: SessionID?
        func flush() {
            guard let session = recordsOf else { return }
            do { try appendRecords(records, to: session) } catch {
                logger.info("could not write session state", metadata: ["error": "\(error)"])
            }
            records.clear()
            recordsOf = nil
        }
        for event in events {
            guard case .logged(let session, let frame) = event else {
                flush()
                apply(event)
                continue
            }
            if recordsOf != session {
                flush()
                recordsOf = session
            }
            Self.encodeRecord(frame, kind: Self.logRecord, into: &records)
        }
        flush()
    }

    /// Whether `session`'s `frames` file has grown enough to be rewritten from a snapshot.
    package func needsCompaction(_ session: SessionID) -> Bool {
        guard let log = logs.withLock({ $0[session] }) else { return false }
        return log.bytes > log.compactAbove
    }

    private func compactNow(_ snapshot: SessionSnapshot) throws {
        let directory = directory(of: snapshot.session)
        let temporary = directory.appendingPathComponent("frames.tmp")
        var buffer = ByteBuffer()
        for frame in snapshot.retained { Self.encodeRecord(frame, kind: Self.retainedRecord, into: &buffer) }
        for frame in snapshot.log { Self.encodeRecord(frame, kind: Self.logRecord, into: &buffer) }
        let descriptor = open(temporary.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw Self.posixError("open \(temporary.lastPathComponent)") }
        defer { close(descriptor) }
        try Self.writeAll(descriptor, buffer)
        guard rename(temporary.path, directory.appendingPathComponent("frames").path) == 0 else {
            throw Self.posixError("rename frames")
        }
        if let old = logs.withLock({ $0.removeValue(forKey: snapshot.session) }) { close(old.descriptor) }
        try writeMetadata(snapshot)
        _ = try openLog(snapshot.session, size: buffer.readableBytes)
        logger.debug("compacted session state", metadata: ["session": "\(snapshot.session)", "bytes": "\(buffer.readableBytes)"])
    }

    private func writeMetadata(_ snapshot: SessionSnapshot) throws {
        let directory = directory(of: snapshot.session)
        try Self.makeDirectory(directory)
        let metadata = Metadata(
            tokenHash: snapshot.tokenHash.map { String(format: "%02x", $0) }.joined(), sequence: snapshot.sequence,
            logFloor: snapshot.logFloor, joined: snapshot.joined.map(\.rawValue),
            senderHigh: Dictionary(uniqueKeysWithValues: snapshot.senderHigh.map { ("\($0.key.rawValue)", $0.value) }))
        let data = try JSONEncoder().encode(metadata)
        let temporary = directory.appendingPathComponent("state.tmp")
        let descriptor = open(temporary.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw Self.posixError("open state.tmp") }
        defer { close(descriptor) }
        try Self.writeAll(descriptor, ByteBuffer(bytes: data))
        guard rename(temporary.path, directory.appendingPathComponent("state").path) == 0 else {
            throw Self.posixError("rename state")
        }
    }

    private func append(_ frame: Frame, kind: UInt8, to session: SessionID) throws {
        var buffer = ByteBuffer()
        Self.encodeRecord(frame, kind: kind, into: &buffer)
        try appendRecords(buffer, to: session)
    }

    /// Appends encoded records to `session`'s `frames` file (opening it if needed).
    private func appendRecords(_ buffer: ByteBuffer, to session: SessionID) throws {
        var log = try logs.withLock({ $0[session] }) ?? openLog(session, size: nil)
        try Self.writeAll(log.descriptor, buffer)
        log.bytes += buffer.readableBytes
        logs.withLock { [log] in $0[session] = log }
    }

    private func openLog(_ session: SessionID, size: Int?) throws -> OpenLog {
        let directory = directory(of: session)
        try Self.makeDirectory(directory)
        let path = directory.appendingPathComponent("frames").path
        let descriptor = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw Self.posixError("open frames") }
        let bytes = size ?? Int(lseek(descriptor, 0, SEEK_END))
        let log = OpenLog(descriptor: descriptor, bytes: bytes, compactAbove: max(Self.compactionThreshold, 2 * bytes))
        logs.withLock { $0[session] = log }
        return log
    }

    private func delete(_ session: SessionID) throws {
        if let log = logs.withLock({ $0.removeValue(forKey: session) }) { close(log.descriptor) }
        let directory = directory(of: session)
        if FileManager.default.fileExists(atPath: directory.path) { try FileManager.default.removeItem(at: directory) }
    }

    private static func encodeRecord(_ frame: Frame, kind: UInt8, into buffer: inout ByteBuffer) {
        let start = buffer.writerIndex
        buffer.writeInteger(UInt32(0))
        buffer.writeInteger(kind)
        FrameCodec.encode(frame, into: &buffer)
        buffer.setInteger(UInt32(buffer.writerIndex - start - 4), at: start)
    }

    private static func writeAll(_ descriptor: Int32, _ buffer: ByteBuffer) throws {
        try buffer.withUnsafeReadableBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    throw posixError("write")
                }
                offset += written
            }
        }
    }

    private static func posixError(_ what: String) -> SessionStoreError {
        SessionStoreError.io("\(what): \(String(cString: strerror(errno)))")
    }

    // MARK: Loading

    private func loadNow() throws -> [SessionSnapshot] {
        let entries = try FileManager.default.contentsOfDirectory(atPath: sessionsDirectory.path)
        var snapshots: [SessionSnapshot] = []
        for name in entries.sorted() {
            guard let session = SessionID(hex: name) else { continue }
            do {
                snapshots.append(try load(session))
            } catch {
                logger.info("skipped unreadable session state", metadata: ["session": "\(name)", "error": "\(error)"])
            }
        }
        return snapshots
    }

    private func load(_ session: SessionID) throws -> SessionSnapshot {
        let directory = directory(of: session)
        let metadata = try JSONDecoder().decode(
            Metadata.self, from: Data(contentsOf: directory.appendingPathComponent("state")))
        guard metadata.format == 1 else { throw SessionStoreError.corrupt("unknown state format \(metadata.format)") }
        let hash = Self.bytes(fromHex: metadata.tokenHash)
        guard hash.count == 32 else { throw SessionStoreError.corrupt("bad token hash") }
        var snapshot = SessionSnapshot(
            session: session, tokenHash: hash, sequence: metadata.sequence, logFloor: metadata.logFloor,
            joined: metadata.joined.map(ParticipantID.init(rawValue:)),
            senderHigh: Dictionary(uniqueKeysWithValues: metadata.senderHigh.compactMap { key, value in
                UInt64(key).map { (ParticipantID(rawValue: $0), value) }
            }))
        let framesURL = directory.appendingPathComponent("frames")
        if FileManager.default.fileExists(atPath: framesURL.path) {
            var buffer = ByteBuffer(bytes: try Data(contentsOf: framesURL))
            while let length = buffer.getInteger(at: buffer.readerIndex, as: UInt32.self),
                buffer.readableBytes >= 4 + Int(length)
            {
                buffer.moveReaderIndex(forwardBy: 4)
                var record = buffer.readSlice(length: Int(length))!
                guard let kind = record.readInteger(as: UInt8.self),
                    let frame = try? FrameCodec.decode(from: &record, maximumFrameLength: Int(UInt32.max))
                else { throw SessionStoreError.corrupt("unreadable record in frames") }
                if kind == Self.retainedRecord {
                    snapshot.retained.append(frame)
                } else if frame.sequence > snapshot.logFloor {
                    snapshot.log.append(frame)
                    // Joins and leaves after the last metadata write are replayed from the log.
                    if frame.type == .joined, !snapshot.joined.contains(frame.sender) { snapshot.joined.append(frame.sender) }
                    if frame.type == .left { snapshot.joined.removeAll { $0 == frame.sender } }
                }
            }
            if buffer.readableBytes > 0 {
                logger.info("ignored a torn record at the end of a session's frames", metadata: ["session": "\(session)"])
            }
        }
        _ = try openLog(session, size: nil)
        return snapshot
    }

    private static func bytes(fromHex hex: String) -> [UInt8] {
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex, let next = hex.index(index, offsetBy: 2, limitedBy: hex.endIndex) {
            guard let byte = UInt8(hex[index..<next], radix: 16) else { return [] }
            bytes.append(byte)
            index = next
        }
        return bytes
    }
}
