import Foundation
import GroupSessions
import NIOCore
import NIOPosix
import PlaybackCoordinator

#if canImport(Glibc)
import Glibc
#endif

/// Why `coplay host`, `join`, `control` or `demo` could not start or had to stop.
struct PlaybackSetupError: Error, Sendable, CustomStringConvertible {
    private enum Code: Sendable {
        case relayUnreachable
        case relayTransport
        case inviteRefused
        case mediaMismatch
        case noVideoFrames
        case noPlaybackState
        case commandNotConfirmed
        case sessionLost
        case notWaited
        case interrupted
        case mpvUnreachable
        case unknownSession
        case unplayableMedia
        case onlyHostsControl
        case unknownMember
        case successorWithoutHostKey
    }

    private let code: Code
    let description: String

    private init(_ code: Code, _ description: String) {
        self.code = code
        self.description = description
    }

    /// Nothing answers at the relay's address (or the connection failed otherwise).
    static func relayUnreachable(_ address: String, _ error: any Error) -> Self {
        Self(.relayUnreachable, ConnectionFailure.explain(error, relay: address))
    }

    /// The relay answered, but not as the invite says it would (TLS or not, its certificate, its key).
    static func relayTransport(_ error: RelayTransportError) -> Self {
        Self(.relayTransport, error.description)
    }

    /// The relay refused the invite: a wrong secret, or a session that no longer exists.
    static func inviteRefused(_ address: String, _ error: any Error) -> Self {
        if let error = error as? GroupSessionError {
            if error.isSameKind(as: .noActivity) { return unknownSession(address) }
            if error.relayCode == .unauthorized {
                return Self(.inviteRefused, """
                    the relay at \(address) has this session, but the invite's secret does not match it: \
                    the invite was changed or cut short; copy it again from the host (or its --invite-file)
                    """)
            }
        }
        return Self(.inviteRefused, "the relay at \(address) refused this invite (wrong secret, or the session has ended): \(error)")
    }

    /// The relay knows no session of this id: mistyped, or over.
    static func unknownSession(_ address: String) -> Self {
        Self(.unknownSession, """
            the relay at \(address) has no session with this invite's id: the invite may be mistyped or cut short \
            (copy it again from the host, or use --invite-file), the session ended, or the relay was restarted \
            without keeping its sessions (coplay serve --memory-only)
            """)
    }

    /// `--mpv-socket` names no mpv coplay can reach.
    static func mpvUnreachable(_ detail: String) -> Self {
        Self(.mpvUnreachable, detail)
    }

    /// The local file is not the session's media.
    static func mediaMismatch(file: String, local: String, session: String, title: String) -> Self {
        Self(.mediaMismatch, """
            \(file) is not the session's media: its fingerprint is \(local), the session plays "\(title)" \
            with fingerprint \(session)
            """)
    }

    /// None of the member's copies is the session's item (nor a near copy of it).
    static func noMatchingCopy(_ media: MemberMedia, activity: WatchTogetherActivity) -> Self {
        let named = media.copies.filter(\.named)
        let session = activity.duration.map { " (\(TimeText.position($0)), stream identity \(activity.item))" }
            ?? " (stream identity \(activity.item))"
        let folder = media.copies.count - named.count
        var text: String
        if let first = named.first {
            let yours = named.map { copy in
                "\(URL(fileURLWithPath: copy.path).lastPathComponent) (\(TimeText.position(copy.timeline.duration)), \(copy.timeline.identifier))"
            }.joined(separator: ", ")
            text = "\(first.path) is not the session's media: the session plays \"\(activity.title)\"\(session); yours: \(yours). "
        } else {
            text = "none of your copies is the session's media: the session plays \"\(activity.title)\"\(session). "
        }
        if folder > 0 { text += "None of the \(folder) video files of --media-dir has its video packets. " }
        text += activity.exactCopies == true
            ? "The host accepts exact copies only (its file, or a remux of it)."
            : "A copy joins when it has the same video packets (the same file, or a remux into another container), or is another encode whose duration is within \(MemberMedia.nearTolerance) s of the session's."
        return Self(.mediaMismatch, text)
    }

    /// None of the member's copies is the session's item or an entry of its queue.
    static func noCopyInQueue(_ media: MemberMedia, activity: WatchTogetherActivity, entries: Int) -> Self {
        let text = noMatchingCopy(media, activity: activity).description
        return entries == 0 ? Self(.mediaMismatch, text) : Self(.mediaMismatch, "none of your copies is an entry of the session's queue (\(entries) entries) either: " + text)
    }

    /// A near copy, and the host accepts exact copies only.
    static func exactCopiesRequired(file: String, title: String) -> Self {
        Self(.mediaMismatch, """
            \(file) is not the session's media exactly: it is another encode of the same duration as "\(title)", \
            and the host accepts exact copies only (coplay host --exact-copies): use the host's file or a remux of it \
            (the same video packets in any container)
            """)
    }

    /// `join --media-dir` found no video file and no file was named.
    static func noCopies(folders: [String]) -> Self {
        Self(.mediaMismatch, "no video files in --media-dir \(folders.joined(separator: ", ")): name your copy of the session's media, or a folder that holds it")
    }

    /// A file to queue could not be read as media coplay plays.
    static func unplayable(_ file: String, _ error: any Error) -> Self {
        Self(.unplayableMedia, "cannot queue \(file): \(error)")
    }

    /// The file has no video frames to present.
    static func noVideoFrames(_ file: String) -> Self {
        Self(.noVideoFrames, "\(file) has no video frames to play")
    }

    /// A control command found no playback state in the session.
    /// A command from a member without control in a session where only hosts control: nothing was sent.
    static func onlyHostsControl(name: String) -> Self {
        Self(
            .onlyHostsControl,
            "only hosts control this session: this is a viewer invite, and '\(name)' has no grant (a host can give it: coplay control CONTROLLER_INVITE grant \(name)); nothing was sent")
    }

    /// `control … grant NAME` / `revoke NAME`: no member, or more than one, answers to NAME.
    static func unknownMember(_ detail: String) -> Self { Self(.unknownMember, detail) }

    /// A removal sealed this member a successor invite without a host key, out of a session where
    /// only hosts control: everyone would control there, so the member does not move.
    static var successorWithoutHostKey: Self {
        Self(
            .successorWithoutHostKey,
            "the successor invite has no host key, but only hosts control this session: everyone would control there, so this member does not move")
    }

    static var noPlaybackState: Self {
        Self(.noPlaybackState, "the session has no playback state yet (is its host running?)")
    }

    /// The relay did not confirm a control command in time.
    static func commandNotConfirmed(_ command: String) -> Self {
        Self(.commandNotConfirmed, "the relay did not confirm '\(command)' in time")
    }

    /// `control suspend`: the group did not wait for the suspension.
    static func notWaited(_ detail: String) -> Self {
        Self(.notWaited, detail)
    }

    /// `control suspend` was stopped by SIGINT/SIGTERM; `detail` says what was done before leaving.
    static func interrupted(_ detail: String) -> Self {
        Self(.interrupted, "interrupted: \(detail)")
    }

    /// The session ended for this member other than by leaving or by someone ending it: the relay
    /// stayed away longer than the reconnect policy allows, or refused to resume.
    static func sessionLost(_ reason: GroupSessionInvalidationReason, relay: String) -> Self {
        switch reason {
        case .refused(let detail) where detail.contains("no longer knows session"),
            .connectionLost(let detail) where detail.contains("no longer knows session"):
            // The relay answered again, without the session: it ended while this member was away (the
            // relay cannot say which), or the relay restarted keeping nothing.
            return Self(.sessionLost, """
                the session ended: the relay at \(relay) no longer has it. Either it ended while this member was \
                away (a host ended it, or removed someone and moved the others to a new session: ask a host for \
                the new session's invite), or the relay restarted and forgot the session (it ran without a state directory: \
                coplay serve --memory-only, or a coplay serve from before sessions were kept by default; start a \
                new session with coplay host)
                """)
        case .refused(let detail) where detail.hasPrefix("\(RelayErrorCode.cannotResume)"):
            return Self(.sessionLost, "the session ended: the relay at \(relay) could not take this member back (\(detail))")
        case .connectionLost(let detail) where detail.hasPrefix("could not resume"):
            return Self(.sessionLost, """
                the session ended: connection lost: the relay at \(relay) did not come back in time \
                (\(ConnectionFailure.explainText(detail, relay: relay)))
                """)
        default:
            return Self(.sessionLost, "the session ended: \(reason)")
        }
    }
}

/// Why a connection failed, in words that say what to do next.
enum ConnectionFailure {
    /// The `errno` under a NIO connection error (`NIOConnectionError`, `IOError`), if any.
    static func errno(in error: any Error) -> Int32? {
        if let error = error as? IOError { return error.errnoCode }
        if let error = error as? NIOConnectionError {
            for failure in error.connectionErrors {
                if let code = Self.errno(in: failure.error) { return code }
            }
        }
        return nil
    }

    /// Whether the error is a failed name lookup.
    static func isResolution(_ error: any Error) -> Bool {
        guard let error = error as? NIOConnectionError else { return false }
        return error.connectionErrors.isEmpty && (error.dnsAError != nil || error.dnsAAAAError != nil)
    }

    /// A sentence for a failed connection to the relay at `relay`.
    static func explain(_ error: any Error, relay: String) -> String {
        if isResolution(error) {
            return "cannot find the relay's host \(relay.split(separator: ":").dropLast().joined(separator: ":")): the name does not resolve; check the invite or --relay"
        }
        switch errno(in: error) {
        case ECONNREFUSED?:
            return "nothing listens at \(relay) — is `coplay serve` running there (coplay serve --listen \(relay))?"
        case ETIMEDOUT?:
            return "the relay at \(relay) does not answer (timed out): check the address, and that no firewall drops the port"
        case EHOSTUNREACH?, ENETUNREACH?:
            return "no route to the relay at \(relay): check the address and the network"
        default:
            return "cannot reach the relay at \(relay): \(error)"
        }
    }

    /// ``explain(_:relay:)`` for an error already turned into text (the reconnect's last error).
    static func explainText(_ text: String, relay: String) -> String {
        if text.contains("(errno: \(ECONNREFUSED))") || text.contains("Connection refused") {
            return "nothing listens at \(relay) — is `coplay serve` running there?"
        }
        return text
    }

    /// Tries a Unix-domain stream connection to `path`: `nil` when it connects (and is closed at
    /// once), else the `errno` of the failure.
    static func connectUnix(_ path: String) -> Int32? {
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return Glibc.errno }
        defer { close(descriptor) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return ENAMETOOLONG }
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            for (index, byte) in bytes.enumerated() { buffer[index] = byte }
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        return result == 0 ? nil : Glibc.errno
    }
}
