import NIOCore

/// The journal side of the routing core: uploads in chunks with per-chunk acks, fetches in
/// bounded windows, announcements stamped in the session's total order and replayed at
/// admission, quota and size limits answered to the offender only (`docs/protocol.md`, "Journal").
///
/// The hub keeps the index of committed attachments and the uploads in progress; reading and
/// writing chunks are ``HubAction/journal(_:)`` actions its shell carries out, reporting back
/// with ``journalCompleted(_:_:)``: a chunk is acknowledged once written, a fetch answered once
/// read, and an attachment's announcement goes out with its `.commit` (the shell holds the
/// session's frames until that is done).
extension SessionHub {
    /// Handles a frame of the journal range 0x20-0x2F.
    mutating func journalFrame(_ frame: Frame, from connection: Connection, into actions: inout [HubAction<Connection>]) {
        guard let state = connections[connection], let id = state.session, let participant = state.participant,
            sessions[id] != nil
        else {
            refuse(connection, .notJoined, "journal frames need an admitted connection", into: &actions)
            return
        }
        guard frame.session == id else {
            refuse(connection, .wrongSession, "frame names session \(frame.session)", into: &actions)
            return
        }
        switch frame.type {
        case .journalFetch:
            journalFetch(frame, session: id, from: connection, into: &actions)
        case .journalPut, .journalChunk, .journalRemove:
            guard state.joined else {
                refuse(connection, .notJoined, "changing the journal needs a joined connection", into: &actions)
                return
            }
            switch frame.type {
            case .journalPut: journalPut(frame, session: id, participant: participant, from: connection, into: &actions)
            case .journalChunk: journalChunk(frame, session: id, from: connection, into: &actions)
            default: journalRemove(frame, session: id, from: connection, into: &actions)
            }
        default:
            refuse(connection, .unsupportedType, "frame type \(frame.type) is not accepted by the relay", into: &actions)
        }
    }

    /// The attachments the shell's storage holds for `session` (read when it starts serving the
    /// session): announced to every connection admitted from now on.
    package mutating func restoreJournal(_ attachments: [StoredAttachment], of session: SessionID) {
        journal.stored[session] = attachments.isEmpty ? nil : attachments.sorted { $0.sequence < $1.sequence }
    }

    /// Committed attachments of `session`, in announcement order.
    package func attachments(in session: SessionID) -> [StoredAttachment] { journal.stored[session] ?? [] }

    /// Bytes of committed attachments over every session of this hub.
    package var journalBytes: Int { journal.stored.values.reduce(0) { $0 + $1.reduce(0) { $0 + $1.header.storedBytes } } }

    /// The shell carried out `operation` (a ``HubAction/journal(_:)`` this hub returned).
    ///
    /// - Returns: What follows: a chunk's ack, the next step of an upload, a fetch's chunks, or
    ///   the refusal of a request the storage failed.
    package mutating func journalCompleted(
        _ operation: JournalOperation<Connection>, _ outcome: JournalOutcome
    ) -> [HubAction<Connection>] {
        var actions: [HubAction<Connection>] = []
        switch (operation, outcome) {
        case (.begin(let header, let id), .failed):
            guard let upload = journal.uploads[id]?[header.id], upload.written == 0 else { break }
            journalAbort(header.id, session: id, into: &actions)
            refuse(upload.connection, .journalStorageFailed, "the relay could not store the attachment",
                   sequence: upload.token, into: &actions)
        case (.append(_, let index, let attachment, let id), let outcome):
            guard var upload = journal.uploads[id]?[attachment], upload.written == index else { break }
            guard case .done = outcome else {
                journalAbort(attachment, session: id, into: &actions)
                refuse(upload.connection, .journalStorageFailed, "the relay could not store chunk \(index); upload discarded",
                       sequence: upload.token, into: &actions)
                break
            }
            upload.written += 1
            journal.uploads[id]?[attachment] = upload
            actions.append(
                .send(upload.connection,
                      Frame(type: .journalAck, session: id, sender: .relay,
                            payload: JournalChunkPayload(id: attachment, index: UInt32(index)).encoded()),
                      droppable: false))
            if upload.written == upload.header.chunkCount { journalCommit(attachment, session: id, into: &actions) }
        case (.commit(let attachment, let id), .failed):
            // Announced with the commit (in the same stamped order): take the announcement back.
            guard journal.stored[id]?.contains(where: { $0.header.id == attachment.header.id }) == true else { break }
            journalRemoved(attachment.header.id, session: id, by: .relay, into: &actions)
            if let connection = sessions[id]?.members[attachment.uploader] {
                refuse(connection, .journalStorageFailed, "the relay could not store the attachment", into: &actions)
            }
        case (.read(let range, let attachment, let id, let connection, let token), .chunks(let chunks)):
            guard chunks.count == range.count else {
                refuse(connection, .journalStorageFailed, "the relay could not read \(attachment.header.id)", sequence: token,
                       into: &actions)
                break
            }
            for (offset, sealed) in chunks.enumerated() {
                let payload = JournalChunkPayload(id: attachment.header.id, index: UInt32(range.lowerBound + offset), sealed: sealed)
                    .encoded()
                actions.append(
                    .send(connection, Frame(type: .journalChunk, session: id, sender: attachment.uploader, payload: payload),
                          droppable: false))
                counters.bytesForwarded += UInt64(payload.readableBytes)
            }
            counters.framesForwarded += UInt64(chunks.count)
        case (.read(_, let attachment, _, let connection, let token), _):
            refuse(connection, .journalStorageFailed, "the relay could not read \(attachment.header.id)", sequence: token,
                   into: &actions)
        default:
            break
        }
        return actions
    }

    /// Sends every stored attachment's announcement to a newly admitted connection.
    func replayJournal(_ id: SessionID, to connection: Connection, into actions: inout [HubAction<Connection>]) {
        for attachment in journal.stored[id] ?? [] {
            actions.append(.send(connection, Self.announcement(attachment, session: id, flags: .replayed), droppable: false))
        }
    }

    /// A member's connection left `id`: its uploads in progress are discarded, and the whole
    /// journal goes with the session.
    mutating func journalMemberGone(
        _ connection: Connection, session id: SessionID, sessionDeleted: Bool, into actions: inout [HubAction<Connection>]
    ) {
        if sessionDeleted {
            journalSessionDeleted(id, into: &actions)
            return
        }
        for (attachment, upload) in journal.uploads[id] ?? [:] where upload.connection == connection {
            journalAbort(attachment, session: id, into: &actions)
        }
    }

    /// Deletes a session's journal (uploads in progress and stored attachments) with the session.
    mutating func journalSessionDeleted(_ id: SessionID, into actions: inout [HubAction<Connection>]) {
        journal.uploads[id] = nil
        journal.stored[id] = nil
        actions.append(.journal(.deleteSession(id)))
    }

    // MARK: Handlers

    private mutating func journalPut(
        _ frame: Frame, session id: SessionID, participant: ParticipantID, from connection: Connection,
        into actions: inout [HubAction<Connection>]
    ) {
        let put: JournalPutPayload
        do { put = try JournalPutPayload(decoding: frame.payload) } catch {
            refuse(connection, .malformed, error.description, into: &actions)
            return
        }
        let header = put.header
        let limits = self.limits.journal
        guard header.size <= UInt64(limits.maximumAttachmentSize) else {
            refuse(connection, .attachmentTooLarge,
                   "attachment of \(header.size) bytes exceeds the limit of \(limits.maximumAttachmentSize) bytes",
                   sequence: put.token, into: &actions)
            return
        }
        guard header.chunkSize <= UInt32(limits.maximumChunkSize), header.sealedMetadata.count <= limits.maximumMetadataSize
        else {
            refuse(connection, .journalTransferInvalid,
                   "chunk size above \(limits.maximumChunkSize) or metadata above \(limits.maximumMetadataSize) bytes",
                   sequence: put.token, into: &actions)
            return
        }
        let stored = journal.stored[id] ?? []
        let uploading = journal.uploads[id] ?? [:]
        guard uploading[header.id] == nil, !stored.contains(where: { $0.header.id == header.id }) else {
            refuse(connection, .journalTransferInvalid, "attachment \(header.id) already exists", sequence: put.token,
                   into: &actions)
            return
        }
        guard stored.count + uploading.count < limits.maximumAttachments else {
            refuse(connection, .quotaExceeded, "the journal holds \(limits.maximumAttachments) attachments already",
                   sequence: put.token, into: &actions)
            return
        }
        let used = journal.storedBytes(in: id) + journal.reservedBytes(in: id)
        guard used + header.storedBytes <= limits.quota else {
            refuse(connection, .quotaExceeded,
                   "journal quota of \(limits.quota) bytes exceeded (\(used) in use, \(header.storedBytes) requested)",
                   sequence: put.token, into: &actions)
            return
        }
        actions.append(.journal(.begin(header, session: id)))
        journal.uploads[id, default: [:]][header.id] = HubJournalState.Upload(
            header: header, uploader: participant, connection: connection, token: put.token)
        if header.chunkCount == 0 { journalCommit(header.id, session: id, into: &actions) }
    }

    private mutating func journalChunk(
        _ frame: Frame, session id: SessionID, from connection: Connection, into actions: inout [HubAction<Connection>]
    ) {
        let chunk: JournalChunkPayload
        do { chunk = try JournalChunkPayload(decoding: frame.payload) } catch {
            refuse(connection, .malformed, error.description, into: &actions)
            return
        }
        guard var upload = journal.uploads[id]?[chunk.id], upload.connection == connection else {
            // Chunks already in flight when an upload was refused land here; the refusal named the token.
            refuse(connection, .attachmentNotFound, "no upload of \(chunk.id) in progress on this connection",
                   into: &actions)
            return
        }
        let index = Int(chunk.index)
        guard index == upload.nextIndex, index < upload.header.chunkCount,
            chunk.sealed.readableBytes == upload.header.sealedLength(ofChunk: index)
        else {
            journalAbort(chunk.id, session: id, into: &actions)
            refuse(connection, .journalTransferInvalid,
                   "chunk \(index) of \(chunk.id) out of order or of the wrong length; upload discarded",
                   sequence: upload.token, into: &actions)
            return
        }
        // Acknowledged once written (``journalCompleted(_:_:)``): the uploader's window of
        // unacknowledged chunks bounds what waits for the storage.
        upload.nextIndex += 1
        journal.uploads[id]?[chunk.id] = upload
        actions.append(.journal(.append(chunk.sealed, index: index, attachment: chunk.id, session: id)))
    }

    private mutating func journalCommit(_ attachment: AttachmentID, session id: SessionID, into actions: inout [HubAction<Connection>]) {
        guard let upload = journal.uploads[id]?.removeValue(forKey: attachment), var session = sessions[id] else { return }
        let stored = StoredAttachment(header: upload.header, uploader: upload.uploader, sequence: session.stamp())
        journal.stored[id, default: []].append(stored)
        // The shell sends the announcement below only once the commit is done.
        actions.append(.journal(.commit(stored, session: id)))
        let frame = Self.announcement(stored, session: id, flags: [])
        log(frame, in: &session)  // a resuming member gets the announcements it missed
        sessions[id] = session
        for member in session.members.values { actions.append(.send(member, frame, droppable: false)) }
    }

    private mutating func journalAbort(_ attachment: AttachmentID, session id: SessionID, into actions: inout [HubAction<Connection>]) {
        journal.uploads[id]?[attachment] = nil
        actions.append(.journal(.discard(attachment, session: id)))
    }

    /// Takes a committed attachment out of the journal and announces it, stamped, to every member.
    private mutating func journalRemoved(
        _ attachment: AttachmentID, session id: SessionID, by sender: ParticipantID, into actions: inout [HubAction<Connection>]
    ) {
        guard var session = sessions[id] else { return }
        journal.stored[id]?.removeAll { $0.header.id == attachment }
        if journal.stored[id]?.isEmpty == true { journal.stored[id] = nil }
        actions.append(.journal(.discard(attachment, session: id)))
        let frame = Frame(
            type: .journalRemoved, session: id, sender: sender, sequence: session.stamp(),
            payload: JournalRequestPayload(token: 0, id: attachment).encoded())
        log(frame, in: &session)
        sessions[id] = session
        for member in session.members.values { actions.append(.send(member, frame, droppable: false)) }
    }

    private mutating func journalRemove(
        _ frame: Frame, session id: SessionID, from connection: Connection, into actions: inout [HubAction<Connection>]
    ) {
        let request: JournalRequestPayload
        do { request = try JournalRequestPayload(decoding: frame.payload, type: .journalRemove) } catch {
            refuse(connection, .malformed, error.description, into: &actions)
            return
        }
        if let upload = journal.uploads[id]?[request.id], upload.connection == connection {
            journalAbort(request.id, session: id, into: &actions)  // The uploader gave up: drop the partial upload quietly.
            return
        }
        guard journal.stored[id]?.contains(where: { $0.header.id == request.id }) == true, sessions[id] != nil else {
            refuse(connection, .attachmentNotFound, "no attachment \(request.id) in the journal", sequence: request.token,
                   into: &actions)
            return
        }
        journalRemoved(request.id, session: id, by: connections[connection]?.participant ?? .relay, into: &actions)
    }

    private mutating func journalFetch(
        _ frame: Frame, session id: SessionID, from connection: Connection, into actions: inout [HubAction<Connection>]
    ) {
        let request: JournalRequestPayload
        do { request = try JournalRequestPayload(decoding: frame.payload, type: .journalFetch) } catch {
            refuse(connection, .malformed, error.description, into: &actions)
            return
        }
        guard let attachment = journal.stored[id]?.first(where: { $0.header.id == request.id }) else {
            refuse(connection, .attachmentNotFound, "no attachment \(request.id) in the journal", sequence: request.token,
                   into: &actions)
            return
        }
        let first = Int(request.first)
        let count = Int(request.count)
        guard count > 0, count <= limits.journal.maximumFetchWindow, first + count <= attachment.header.chunkCount else {
            refuse(connection, .journalTransferInvalid,
                   "fetch of chunks \(first)..<\(first + count) is outside 0..<\(attachment.header.chunkCount) or above the window of \(limits.journal.maximumFetchWindow)",
                   sequence: request.token, into: &actions)
            return
        }
        actions.append(.journal(.read(first..<first + count, of: attachment, session: id, for: connection, token: request.token)))
    }

    static func announcement(_ attachment: StoredAttachment, session: SessionID, flags: FrameFlags) -> Frame {
        Frame(type: .journalAdded, flags: flags, session: session, sender: attachment.uploader,
              sequence: attachment.sequence, payload: attachment.header.encoded())
    }
}
