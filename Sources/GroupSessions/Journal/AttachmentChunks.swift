import Crypto
import Foundation
import NIOCore

/// The bytes of one attachment, chunk by chunk, pulled from the relay as they are read.
///
/// The iterator keeps at most 32 chunks requested ahead of the reader, opens each chunk
/// (rejecting any that was altered, moved or sealed for another attachment) and, after the
/// last one, checks the SHA-256 the uploader sealed into the metadata.
///
/// ```swift
/// for try await chunk in journal.chunks(of: attachment) { file.write(chunk) }
/// ```
public struct AttachmentChunks: AsyncSequence, Sendable {
    public typealias Element = Data

    let client: JournalClient
    let attachment: GroupSessionJournal.Attachment

    public func makeAsyncIterator() -> Iterator { Iterator(client: client, attachment: attachment) }

    /// Reads the chunks in order.
    public struct Iterator: AsyncIteratorProtocol {
        private let download: Download

        init(client: JournalClient, attachment: GroupSessionJournal.Attachment) {
            download = Download(client: client, attachment: attachment)
        }

        public mutating func next() async throws -> Data? { try await download.next() }
    }

    /// One download's progress; unregisters itself when the iterator goes away.
    final class Download {
        let client: JournalClient
        let attachment: GroupSessionJournal.Attachment
        let cipher: JournalCipher
        var token: UInt64?
        var nextIndex = 0
        var requested = 0
        var hasher = SHA256()
        var finished = false

        init(client: JournalClient, attachment: GroupSessionJournal.Attachment) {
            self.client = client
            self.attachment = attachment
            cipher = JournalCipher(keys: client.keys, id: attachment.id, uploader: attachment.uploader.id)
        }

        deinit {
            if let token { client.finishDownload(token) }
        }

        func next() async throws -> Data? {
            guard !finished else { return nil }
            let header = attachment.header
            let count = header.chunkCount
            do {
                if nextIndex == count {
                    finished = true
                    if let token { client.finishDownload(token) }
                    guard Array(hasher.finalize()) == attachment.digest else {
                        throw GroupSessionError.protocolViolation("attachment \(attachment.id) does not match its SHA-256")
                    }
                    return nil
                }
                let token: UInt64
                if let existing = self.token {
                    token = existing
                } else {
                    token = try client.startDownload(attachment)
                    self.token = token
                    requested = Swift.min(count, JournalClient.downloadWindow)
                }
                let sealed = try await client.sealedChunk(token, index: nextIndex)
                let plaintext = try cipher.openChunk(sealed, index: nextIndex, size: header.size, chunkSize: header.chunkSize)
                guard plaintext.count == header.plaintextLength(ofChunk: nextIndex) else {
                    throw GroupSessionError.protocolViolation("chunk \(nextIndex) has the wrong length")
                }
                nextIndex += 1
                hasher.update(data: plaintext)
                // Keep the window full: ask for more once half of it has been read.
                let outstanding = requested - nextIndex
                if requested < count && outstanding <= JournalClient.downloadWindow / 2 {
                    let more = Swift.min(count - requested, JournalClient.downloadWindow - outstanding)
                    try client.request(token, attachment.id, first: requested, count: more)
                    requested += more
                }
                return plaintext
            } catch let error as GroupSessionError {
                finished = true
                throw error
            } catch {
                finished = true
                throw GroupSessionError.protocolViolation("chunk \(nextIndex) of \(attachment.id) does not open: \(error)")
            }
        }
    }
}
