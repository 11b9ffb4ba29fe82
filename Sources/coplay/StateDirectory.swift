import ArgumentParser
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Where `coplay serve` keeps sessions by default, and the lock that keeps two relays out of one
/// directory.
enum StateDirectory {
    /// `$XDG_STATE_HOME/coplay`, else `/var/lib/coplay` for root, else `~/.local/state/coplay`.
    static func base(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let state = environment["XDG_STATE_HOME"], state.hasPrefix("/") {
            return (state as NSString).appendingPathComponent("coplay")
        }
        if geteuid() == 0 { return "/var/lib/coplay" }
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        return (home as NSString).appendingPathComponent(".local/state/coplay")
    }

    /// An exclusive `flock` on `DIR/relay.lock`, held while the relay runs; the kernel releases it
    /// when the process ends, however it ends.
    final class Lock {
        private let descriptor: Int32

        /// - Throws: `ValidationError` when another process holds the directory.
        init(directory: String) throws {
            let path = (directory as NSString).appendingPathComponent("relay.lock")
            descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
            guard descriptor >= 0 else {
                throw ValidationError("cannot lock \(path): \(String(cString: strerror(errno)))")
            }
            guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
                let holder = (try? String(contentsOfFile: path, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
                close(descriptor)
                throw ValidationError("""
                    another coplay serve\(holder.map { $0.isEmpty ? "" : " (pid \($0))" } ?? "") keeps its sessions in \(directory): \
                    stop it, or give this relay --data-dir OTHER-DIR or --memory-only
                    """)
            }
            let pid = Array("\(getpid())\n".utf8)
            _ = ftruncate(descriptor, 0)
            _ = pid.withUnsafeBytes { pwrite(descriptor, $0.baseAddress!, $0.count, 0) }
        }

        deinit { close(descriptor) }
    }
}
