import Crypto
import Foundation
import Logging
import NIOCore
import Synchronization

/// One member's journal machinery inside a ``SessionEngine``: the attachment list (built from
/// the relay's announcements), uploads with a window of unacknowledged chunks, and downloads
/// that pull a bounded window of chunks ahead of their reader.
///
/// Everything sits behind one lock; continuations are resumed outside it.
final class JournalClient: Sendable {
    typealias Attachment = GroupSessionJournal.Attachment

    /// What a request token refers to, for routing the relay's errors.
    enum Target: Sendable {
        case upload(AttachmentID)
        case download(AttachmentID)
        case removal(AttachmentID)
    }

    struct Upload: Sendable {
        var token: UInt64
        var acked = 0
        var windowWaiter: CheckedContinuation<Void, any Error>?
        var doneWaiter: CheckedContinuation<Attachment, any Error>?
        var result: Attachment?
        var failure: GroupSessionError?
    }

    struct Download: Sendable {
        var id: AttachmentID
        var buffered: [Int: ByteBuffer] = [:]
        var waiter: (index: Int, continuation: CheckedContinuation<ByteBuffer, any Error>)?
        var failure: GroupSessionError?
    }

    struct State: ~Copyable {
        var attachments: [AttachmentID: Attachment] = [:]
        var streams: [Int: AsyncStream<[Attachment]>.Continuation] = [:]
        var uploads: [AttachmentID: Upload] = [:]
        var downloads: [UInt64: Download] = [:]
        /// Per attachment, the (download token, chunk index) pairs requested, in request order:
        /// the relay answers fetches in order, so each arriving chunk belongs to the head.
        var expected: [AttachmentID: [(token: UInt64, index: Int)]] = [:]
        var removals: [AttachmentID: [CheckedContinuation<Void, any Error>]] = [:]
        var targets: [UInt64: Target] = [:]
        var nextToken: UInt64 = 1
        var nextSubscriber = 0
        var closed: GroupSessionError?
        var rejected = 0

        var list: [Attachment] { attachments.values.sorted { $0.sequence < $1.sequence } }

        mutating func token(for target: Target) -> UInt64 {
            let token = (1 << 63) | nextToken
            nextToken += 1
            targets[token] = target
            return token
        }
    }

    /// Chunks an uploader may send before the relay acknowledges the oldest.
    static let uploadWindow = 16
    /// Chunks a download asks for ahead of its reader.
    static let downloadWindow = 32
    /// Plaintext bytes per chunk.
    static let chunkSize = 64 * 1024

    let keys: SessionKeys
    let local: ParticipantID
    let logger: Logger
    private let state = Mutex(State())
    private let link: Mutex<any TransportConnection>

    /// The engine's current connection (it changes when the engine reconnects).
    var connection: any TransportConnection { link.withLock { $0 } }

    init(keys: SessionKeys, local: ParticipantID, connection: any TransportConnection, logger: Logger) {
        self.keys = keys
        self.local = local
        self.link = Mutex(connection)
        self.logger = logger
    }

    /// The engine resumed on a new connection: later journal frames go there. Transfers that were
    /// in flight on the old one have been failed by ``fail(all:close:)`` (the caller retries).
    func attach(_ connection: any TransportConnection) {
        link.withLock { $0 = connection }
    }

    var attachments: [Attachment] { state.withLock { $0.list } }
    var rejectedAnnouncements: Int { state.withLock { $0.rejected } }

    func updates() -> AsyncStream<[Attachment]> {
        let (stream, continuation) = AsyncStream.makeStream(of: [Attachment].self)
        let id: Int? = state.withLock { state in
            continuation.yield(state.list)
            guard state.closed == nil else { return nil }
            state.nextSubscriber += 1
            state.streams[state.nextSubscriber] = continuation
            return state.nextSubscriber
        }
        guard let id else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in _ = self?.state.withLock { $0.streams.removeValue(forKey: id) } }
        return stream
    }

    private func frame(_ type: FrameType, _ payload: ByteBuffer) -> Frame {
        Frame(type: type, session: keys.session, sender: local, payload: payload)
    }

    // MARK: Upload

    func upload(
        _ data: Data, label: String, progress: (@Sendable (_ sent: Int, _ total: Int) -> Void)?
    ) async throws -> Attachment {
        let id = AttachmentID.random()
        let size = UInt64(data.count)
        let chunkSize = UInt32(Self.chunkSize)
        let cipher = JournalCipher(keys: keys, id: id, uploader: local)
        let metadata = AttachmentMetadata(
            size: size, chunkSize: chunkSize, digest: Array(SHA256.hash(data: data)), label: label)
        let header = JournalHeader(id: id, size: size, chunkSize: chunkSize, sealedMetadata: try cipher.sealMetadata(metadata))
        let token = try state.withLock { state -> UInt64 in
            if let closed = state.closed { throw closed }
            let token = state.token(for: .upload(id))
            state.uploads[id] = Upload(token: token)
            return token
        }
        defer {
            state.withLock { state in
                state.uploads[id] = nil
                state.targets[token] = nil
            }
        }
        do {
            try connection.send(frame(.journalPut, JournalPutPayload(token: token, header: header).encoded()))
            var sent = 0
            for index in 0..<header.chunkCount {
                try await waitForWindow(id, index: index)
                let start = data.startIndex + index * Self.chunkSize
                let end = min(data.endIndex, start + Self.chunkSize)
                let sealed = try cipher.sealChunk(data[start..<end], index: index, size: size, chunkSize: chunkSize)
                try connection.send(frame(.journalChunk, JournalChunkPayload(id: id, index: UInt32(index), sealed: sealed).encoded()))
                sent += end - start
                progress?(sent, data.count)
            }
            return try await waitForCommit(id)
        } catch {
            // Tell the relay to drop a partial upload (a no-op if it already did).
            try? connection.send(frame(.journalRemove, JournalRequestPayload(token: 0, id: id).encoded()))
            throw error
        }
    }

    private func waitForWindow(_ id: AttachmentID, index: Int) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let result: Result<Void, any Error>? = state.withLock { state in
                guard var upload = state.uploads[id] else { return .failure(state.closed ?? GroupSessionError.connectionClosed) }
                if let failure = upload.failure { return .failure(failure) }
                if index - upload.acked < Self.uploadWindow { return .success(()) }
                upload.windowWaiter = continuation
                state.uploads[id] = upload
                return nil
            }
            if let result { continuation.resume(with: result) }
        }
    }

    private func waitForCommit(_ id: AttachmentID) async throws -> Attachment {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Attachment, any Error>) in
            let result: Result<Attachment, any Error>? = state.withLock { state in
                guard var upload = state.uploads[id] else { return .failure(state.closed ?? GroupSessionError.connectionClosed) }
                if let failure = upload.failure { return .failure(failure) }
                if let attachment = upload.result { return .success(attachment) }
                upload.doneWaiter = continuation
                state.uploads[id] = upload
                return nil
            }
            if let result { continuation.resume(with: result) }
        }
    }

    // MARK: Remove

    func remove(_ id: AttachmentID) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let token: UInt64? = state.withLock { state in
                if state.closed != nil { return nil }
                state.removals[id, default: []].append(continuation)
                return state.token(for: .removal(id))
            }
            guard let token else {
                continuation.resume(throwing: GroupSessionError.connectionClosed)
                return
            }
            do {
                try connection.send(frame(.journalRemove, JournalRequestPayload(token: token, id: id).encoded()))
            } catch {
                failRemovals(id, with: error)
            }
        }
    }

    private func failRemovals(_ id: AttachmentID, with error: any Error) {
        let waiters = state.withLock { $0.removals.removeValue(forKey: id) ?? [] }
        for waiter in waiters { waiter.resume(throwing: error) }
    }

    // MARK: Download

    /// Registers a download and asks for the first window of chunks.
    func startDownload(_ attachment: Attachment) throws -> UInt64 {
        let count = attachment.header.chunkCount
        let token = try state.withLock { state -> UInt64 in
            if let closed = state.closed { throw closed }
            let token = state.token(for: .download(attachment.id))
            state.downloads[token] = Download(id: attachment.id)
            return token
        }
        try request(token, attachment.id, first: 0, count: min(count, Self.downloadWindow))
        return token
    }

    func request(_ token: UInt64, _ id: AttachmentID, first: Int, count: Int) throws {
        guard count > 0 else { return }
        state.withLock { state in
            for index in first..<first + count { state.expected[id, default: []].append((token, index)) }
        }
        try connection.send(
            frame(.journalFetch, JournalRequestPayload(token: token, id: id, first: UInt32(first), count: UInt32(count)).encoded()))
    }

    /// Waits for sealed chunk `index` of a download.
    func sealedChunk(_ token: UInt64, index: Int) async throws -> ByteBuffer {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<ByteBuffer, any Error>) in
            let result: Result<ByteBuffer, any Error>? = state.withLock { state in
                guard var download = state.downloads[token] else {
                    return .failure(state.closed ?? GroupSessionError.connectionClosed)
                }
                if let chunk = download.buffered.removeValue(forKey: index) {
                    state.downloads[token] = download
                    return .success(chunk)
                }
                if let failure = download.failure { return .failure(failure) }
                download.waiter = (index, continuation)
                state.downloads[token] = download
                return nil
            }
            if let result { continuation.resume(with: result) }
        }
    }

    func finishDownload(_ token: UInt64) {
        state.withLock { state in
            guard let download = state.downloads.removeValue(forKey: token) else { return }
            state.targets[token] = nil
            // Chunks still in flight for it are dropped when they arrive.
            _ = download
        }
    }

    // MARK: Inbound

    func handle(_ frame: Frame) {
        switch frame.type {
        case .journalAdded: handleAdded(frame)
        case .journalRemoved: handleRemoved(frame)
        case .journalAck: handleAck(frame)
        case .journalChunk: handleChunk(frame)
        default: break  // A journal frame type from a newer relay: ignored.
        }
    }

    private func handleAdded(_ frame: Frame) {
        var payload = frame.payload
        let attachment: Attachment
        do {
            let header = try JournalHeader.decode(from: &payload, type: .journalAdded)
            let metadata = try JournalCipher(keys: keys, id: header.id, uploader: frame.sender).openMetadata(of: header)
            attachment = Attachment(
                id: header.id, size: Int(header.size), uploader: Participant(id: frame.sender), label: metadata.label,
                digest: metadata.digest, chunkSize: header.chunkSize, sequence: frame.sequence, client: self)
        } catch {
            state.withLock { $0.rejected += 1 }
            logger.info("rejected a journal announcement that does not open", metadata: ["sender": "\(frame.sender)"])
            return
        }
        let (streams, list, waiter) = state.withLock { state in
            guard state.attachments[attachment.id] == nil else {
                return ([AsyncStream<[Attachment]>.Continuation](), [Attachment](), CheckedContinuation<Attachment, any Error>?.none)
            }
            state.attachments[attachment.id] = attachment
            var waiter: CheckedContinuation<Attachment, any Error>?
            if frame.sender == local, var upload = state.uploads[attachment.id] {
                upload.result = attachment
                waiter = upload.doneWaiter
                upload.doneWaiter = nil
                state.uploads[attachment.id] = upload
            }
            return (Array(state.streams.values), state.list, waiter)
        }
        for stream in streams { stream.yield(list) }
        waiter?.resume(returning: attachment)
    }

    private func handleRemoved(_ frame: Frame) {
        guard let request = try? JournalRequestPayload(decoding: frame.payload, type: .journalRemoved) else { return }
        let (streams, list, waiters) = state.withLock { state in
            let removed = state.attachments.removeValue(forKey: request.id) != nil
            let waiters = state.removals.removeValue(forKey: request.id) ?? []
            return (removed ? Array(state.streams.values) : [], state.list, waiters)
        }
        for stream in streams { stream.yield(list) }
        for waiter in waiters { waiter.resume() }
    }

    private func handleAck(_ frame: Frame) {
        guard let ack = try? JournalChunkPayload(decoding: frame.payload, type: .journalAck) else { return }
        let waiter = state.withLock { state -> CheckedContinuation<Void, any Error>? in
            guard var upload = state.uploads[ack.id] else { return nil }
            upload.acked = max(upload.acked, Int(ack.index) + 1)
            defer { state.uploads[ack.id] = upload }
            defer { upload.windowWaiter = nil }
            return upload.windowWaiter
        }
        waiter?.resume()
    }

    private func handleChunk(_ frame: Frame) {
        guard let chunk = try? JournalChunkPayload(decoding: frame.payload) else { return }
        let resume = state.withLock { state -> (CheckedContinuation<ByteBuffer, any Error>, ByteBuffer)? in
            guard var queue = state.expected[chunk.id], !queue.isEmpty else { return nil }
            let head = queue.removeFirst()
            state.expected[chunk.id] = queue.isEmpty ? nil : queue
            guard head.index == Int(chunk.index), var download = state.downloads[head.token] else { return nil }
            defer { state.downloads[head.token] = download }
            if let waiter = download.waiter, waiter.index == head.index {
                download.waiter = nil
                return (waiter.continuation, chunk.sealed)
            }
            download.buffered[head.index] = chunk.sealed
            return nil
        }
        if let (continuation, sealed) = resume { continuation.resume(returning: sealed) }
    }

    /// Routes a relay error about a journal request; `true` if it was one.
    func handleError(_ payload: ErrorPayload) -> Bool {
        if payload.code == .unsupportedType {
            // An older relay: fail every journal operation in progress with a clear error.
            let active = state.withLock { !$0.targets.isEmpty }
            guard active else { return false }
            fail(all: GroupSessionError.refusedByRelay(payload.code, "this relay does not support the journal (\(payload.detail))"))
            return true
        }
        guard payload.code.isJournal || payload.senderSequence >> 63 == 1 else { return false }
        let error = GroupSessionError.refusedByRelay(payload.code, payload.detail)
        let target = state.withLock { $0.targets[payload.senderSequence] }
        // Refusals of chunks still in flight after a refused upload name no live request: debug only.
        logger.log(
            level: target == nil ? .debug : .info, "the relay refused a journal request",
            metadata: ["code": "\(payload.code)", "detail": "\(payload.detail)"])
        switch target {
        case .upload(let id):
            let waiters = state.withLock { state -> [@Sendable () -> Void] in
                guard var upload = state.uploads[id] else { return [] }
                upload.failure = error
                var waiters: [@Sendable () -> Void] = []
                if let waiter = upload.windowWaiter { waiters.append { waiter.resume(throwing: error) } }
                if let waiter = upload.doneWaiter { waiters.append { waiter.resume(throwing: error) } }
                upload.windowWaiter = nil
                upload.doneWaiter = nil
                state.uploads[id] = upload
                return waiters
            }
            for waiter in waiters { waiter() }
        case .download(let id):
            failDownload(payload.senderSequence, id, with: error)
        case .removal(let id):
            failRemovals(id, with: error)
        case nil:
            break  // About a request already finished (e.g. chunks in flight after a refused upload).
        }
        return true
    }

    private func failDownload(_ token: UInt64, _ id: AttachmentID, with error: GroupSessionError) {
        let waiter = state.withLock { state -> CheckedContinuation<ByteBuffer, any Error>? in
            state.expected[id]?.removeAll { $0.token == token }
            guard var download = state.downloads[token] else { return nil }
            download.failure = error
            defer { download.waiter = nil; state.downloads[token] = download }
            return download.waiter?.continuation
        }
        waiter?.resume(throwing: error)
    }

    /// Fails every operation in progress and finishes the list streams.
    func fail(all error: GroupSessionError, close: Bool = false) {
        let (actions, streams) = state.withLock { state -> ([@Sendable () -> Void], [AsyncStream<[Attachment]>.Continuation]) in
            var actions: [@Sendable () -> Void] = []
            for (id, var upload) in state.uploads {
                upload.failure = error
                if let waiter = upload.windowWaiter { actions.append { waiter.resume(throwing: error) } }
                if let waiter = upload.doneWaiter { actions.append { waiter.resume(throwing: error) } }
                upload.windowWaiter = nil
                upload.doneWaiter = nil
                state.uploads[id] = upload
            }
            for (token, var download) in state.downloads {
                download.failure = error
                if let waiter = download.waiter?.continuation { actions.append { waiter.resume(throwing: error) } }
                download.waiter = nil
                state.downloads[token] = download
            }
            state.expected.removeAll()
            for waiters in state.removals.values {
                for waiter in waiters { actions.append { waiter.resume(throwing: error) } }
            }
            state.removals.removeAll()
            guard close else { return (actions, []) }
            state.closed = error
            defer { state.streams.removeAll() }
            return (actions, Array(state.streams.values))
        }
        for action in actions { action() }
        for stream in streams { stream.finish() }
    }
}
