import GroupSessions
import Logging

extension RelayServer {
    /// The journal storage for `configuration`: a ``JournalStore`` under the data directory,
    /// or memory when there is none (or the directory cannot be used, which is logged).
    static func journalStorage(for configuration: RelayConfiguration, logger: Logger) -> any JournalStorage {
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
