import ArgumentParser
import Foundation
import GroupSessions

#if canImport(Glibc)
import Glibc
#endif

/// Where `coplay join`, `control` and `people` take the invite from: the command line, a file
/// (`--invite-file`, as `coplay host --invite-file` writes it) or the environment (`COPLAY_INVITE`).
///
/// An invite holds the session's secret, and every local user can read a process's arguments
/// (`ps`); a file of mode 0600 or the environment (readable only by its owner) keep it out of them.
struct InviteOptions: ParsableArguments {
    /// The environment variable read when neither an argument nor `--invite-file` gives the invite.
    static let environmentVariable = "COPLAY_INVITE"

    @Option(
        name: .customLong("invite-file"),
        help: ArgumentHelp(
            "Read the invite from FILE (as `coplay host --invite-file FILE` writes it) instead of the command line, where other local users could read it with ps. Without either, the invite comes from COPLAY_INVITE.",
            valueName: "FILE"))
    var inviteFile: String?

    /// The invite text: `argument`, else `--invite-file`, else `COPLAY_INVITE`.
    ///
    /// - Throws: `ValidationError` naming every way to give one when there is none, or when two
    ///   are given, or when the file cannot be read.
    func text(argument: String?) throws -> String {
        if let argument {
            if inviteFile != nil {
                throw ValidationError("give the invite either as an argument or with --invite-file, not both")
            }
            return argument
        }
        if let inviteFile { return try Self.read(inviteFile) }
        if let value = ProcessInfo.processInfo.environment[Self.environmentVariable],
            !value.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty
        {
            return value.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        throw ValidationError(
            "no invite: give it with --invite-file FILE (coplay host --invite-file FILE writes one), in \(Self.environmentVariable), or as the first argument")
    }

    /// The parsed invite (see ``text(argument:)``).
    func invite(argument: String?) throws -> Invite {
        try PlaybackCommandOptions.invite(try text(argument: argument))
    }

    /// The first non-empty line of `path`.
    static func read(_ path: String) throws -> String {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            if !FileManager.default.fileExists(atPath: path) {
                throw ValidationError(
                    "--invite-file \(path) does not exist: `coplay host … --invite-file \(path)` writes it once the session exists")
            }
            throw ValidationError("cannot read --invite-file \(path): \(error.localizedDescription)")
        }
        let line = String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline)
            .map { $0.trimmingCharacters(in: .whitespaces) }.first { !$0.isEmpty }
        guard let line else { throw ValidationError("--invite-file \(path) is empty: it should hold the invite coplay host printed") }
        return line
    }

    /// Whether `text` looks like an invite rather than a file name or a control verb.
    static func looksLikeInvite(_ text: String) -> Bool {
        text.hasPrefix("coplay://") || text.hasPrefix("coplays://")
    }

    /// Writes `invite` to `path` readable by its owner only (mode 0600, replaced atomically: a reader
    /// never sees half an invite).
    static func write(_ invite: Invite, to path: String) throws {
        let url = URL(fileURLWithPath: path)
        let temporary = url.deletingLastPathComponent()
            .appendingPathComponent(".\(url.lastPathComponent).\(ProcessInfo.processInfo.processIdentifier).tmp")
        let descriptor = open(temporary.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw ValidationError("cannot write --invite-file \(path): \(String(cString: strerror(errno)))")
        }
        let bytes = Array("\(invite)\n".utf8)
        let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress!, $0.count) }
        let failure = written == bytes.count ? nil : String(cString: strerror(errno))
        // The mode of a file that already existed stays what it was: set it.
        fchmod(descriptor, 0o600)
        close(descriptor)
        if let failure {
            unlink(temporary.path)
            throw ValidationError("cannot write --invite-file \(path): \(failure)")
        }
        guard rename(temporary.path, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary.path)
            throw ValidationError("cannot write --invite-file \(path): \(reason)")
        }
    }
}
