import NIOCore

/// The journal side of the routing core: uploads in chunks with per-chunk acks, fetches in
/// bounded windows, announcements stamped in the session's total order and replayed at
/// admission, quota and size limits answered to the offender only (`docs/protocol.md`, "Journal").
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

    /// Sends every stored attachment's announcement to a newly admitted connection.
    func replayJournal(_ id: SessionID, to connection: Connection, into actions: inout [HubAction<Connection>]) {
        for attachment in journalStorage.attachments(in: id) {
            actions.append(.send(connection, Self.announcement(attachment, session: id, flags: .replayed), droppable: false))
        }
    }

    /// A member's connection left `id`: its uploads in progress are discarded, and the whole
    /// journal goes with the session.
    mutating func journalMemberGone(_ connection: Connection, session id: SessionID, sessionDeleted: Bool) {
        for (attachment, upload) in journal.uploads[id] ?? [:] where sessionDeleted || upload.connection == connection {
            journal.uploads[id]?[attachment] = nil
            journalStorage.discard(attachment, in: id)
        }
        if sessionDeleted {
            journal.uploads[id] = nil
            journalStorage.deleteSession(id)
        }
    }

    /// Deletes a session's journal (uploads in progress and stored attachments) with the session.
    mutating func journalSessionDeleted(_ id: SessionID) {
        for attachment in (journal.uploads[id] ?? [:]).keys { journalStorage.discard(attachment, in: id) }
        journal.uploads[id] = nil
        journalStorage.deleteSession(id)
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
        let stored = journalStorage.attachments(in: id)
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
        let used = journalStorage.storedBytes(in: id) + journal.reservedBytes(in: id)
        guard used + header.storedBytes <= limits.quota else {
            refuse(connection, .quotaExceeded,
                   "journal quota of \(limits.quota) bytes exceeded (\(used) in use, \(header.storedBytes) requested)",
                   sequence: put.token, into: &actions)
            return
        }
        do { try journalStorage.beginUpload(header, in: id) } catch {
            refuse(connection, .journalStorageFailed, "the relay could not store the attachment", sequence: put.token,
                   into: &actions)
            return
        }
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
            journalAbort(chunk.id, session: id)
            refuse(connection, .journalTransferInvalid,
                   "chunk \(index) of \(chunk.id) out of order or of the wrong length; upload discarded",
                   sequence: upload.token, into: &actions)
            return
        }
        do { try journalStorage.appendChunk(chunk.sealed, index: index, of: chunk.id, in: id) } catch {
            journalAbort(chunk.id, session: id)
            refuse(connection, .journalStorageFailed, "the relay could not store chunk \(index); upload discarded",
                   sequence: upload.token, into: &actions)
            return
        }
        upload.nextIndex += 1
        journal.uploads[id]?[chunk.id] = upload
        actions.append(
            .send(connection,
                  Frame(type: .journalAck, session: id, sender: .relay,
                        payload: JournalChunkPayload(id: chunk.id, index: chunk.index).encoded()),
                  droppable: false))
        if upload.nextIndex == upload.header.chunkCount { journalCommit(chunk.id, session: id, into: &actions) }
    }

    private mutating func journalCommit(_ attachment: AttachmentID, session id: SessionID, into actions: inout [HubAction<Connection>]) {
        guard let upload = journal.uploads[id]?.removeValue(forKey: attachment), var session = sessions[id] else { return }
        let stored = StoredAttachment(header: upload.header, uploader: upload.uploader, sequence: session.stamp())
        do { try journalStorage.commitUpload(stored, in: id) } catch {
            journalStorage.discard(attachment, in: id)
            refuse(upload.connection, .journalStorageFailed, "the relay could not store the attachment",
                   sequence: upload.token, into: &actions)
            return
        }
        let frame = Self.announcement(stored, session: id, flags: [])
        log(frame, in: &session)  // a resuming member gets the announcements it missed
        sessions[id] = session
        for member in session.members.values { actions.append(.send(member, frame, droppable: false)) }
    }

    private mutating func journalAbort(_ attachment: AttachmentID, session id: SessionID) {
        journal.uploads[id]?[attachment] = nil
        journalStorage.discard(attachment, in: id)
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
            journalAbort(request.id, session: id)  // The uploader gave up: drop the partial upload quietly.
            return
        }
        guard journalStorage.attachments(in: id).contains(where: { $0.header.id == request.id }), var session = sessions[id]
        else {
            refuse(connection, .attachmentNotFound, "no attachment \(request.id) in the journal", sequence: request.token,
                   into: &actions)
            return
        }
        journalStorage.discard(request.id, in: id)
        let frame = Frame(
            type: .journalRemoved, session: id, sender: connections[connection]?.participant ?? .relay,
            sequence: session.stamp(), payload: JournalRequestPayload(token: 0, id: request.id).encoded())
        log(frame, in: &session)
        sessions[id] = session
        for member in session.members.values { actions.append(.send(member, frame, droppable: false)) }
    }

    private mutating func journalFetch(
        _ frame: Frame, session id: SessionID, from connection: Connection, into actions: inout [HubAction<Connection>]
    ) {
        let request: JournalRequestPayload
        do { request = try JournalRequestPayload(decoding: frame.payload, type: .journalFetch) } catch {
            refuse(connection, .malformed, error.description, into: &actions)
            return
        }
        guard let attachment = journalStorage.attachments(in: id).first(where: { $0.header.id == request.id }) else {
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
        let chunks: [ByteBuffer]
        do { chunks = try journalStorage.chunks(first..<first + count, of: request.id, in: id) } catch {
            refuse(connection, .journalStorageFailed, "the relay could not read \(request.id)", sequence: request.token,
                   into: &actions)
            return
        }
        for (offset, sealed) in chunks.enumerated() {
            let payload = JournalChunkPayload(id: request.id, index: UInt32(first + offset), sealed: sealed).encoded()
            actions.append(
                .send(connection, Frame(type: .journalChunk, session: id, sender: attachment.uploader, payload: payload),
                      droppable: false))
            counters.bytesForwarded += UInt64(payload.readableBytes)
        }
        counters.framesForwarded += UInt64(chunks.count)
    }

    static func announcement(_ attachment: StoredAttachment, session: SessionID, flags: FrameFlags) -> Frame {
        Frame(type: .journalAdded, flags: flags, session: session, sender: attachment.uploader,
              sequence: attachment.sequence, payload: attachment.header.encoded())
    }
}
