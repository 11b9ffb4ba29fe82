import GroupSessions
import Logging

extension RelayServer {
    /// The journal storage for `configuration`: a ``JournalStore`` under the data directory,
    /// or memory when there is none (or the directory cannot be used, which is logged).
    static func journalStorage(for configuration: RelayConfiguration, logger: Logger) -> any JournalStorage {
        if let provider = configuration.store as? any JournalProviding { return provider.journalStorage }
        guard let directory = configuration.dataDirectory else { return MemoryJournalStorage() }
        do {
            return try JournalStore(directory: directory, logger: logger)
        } catch {
            logger.info(
                "cannot use the data directory for the journal; keeping attachments in memory",
                metadata: ["directory": "\(directory)", "error": "\(error)"])
            return MemoryJournalStorage()
        }
    }
}

/// A session store that keeps the journal attachments too (the PostgreSQL store): the relay
/// uses its journal storage instead of files or memory.
package protocol JournalProviding: AnyObject, Sendable {
    /// Where the relay's hubs keep attachments.
    var journalStorage: any JournalStorage { get }
}
