import ArgumentParser
import Crypto
import Foundation
import GroupChat

#if canImport(Glibc)
import Glibc
#endif

/// The person's signing keys, one per name, in the state directory: `coplay join --name alice`,
/// `coplay host --name alice` and `coplay chat --name alice` on one account sign as the same
/// person, so the others see the same key (and tag) each time.
///
/// `STATE/keys/NAME.ed25519` (`STATE` as ``StateDirectory/base(environment:)``; a name with other
/// characters than letters, digits, `.`, `_` and `-` is stored as `name-SHA256PREFIX.ed25519`):
/// the 32-byte Ed25519 seed in base64url, mode 0600, in a directory of mode 0700. Members without
/// a name of their own (`coplay join`'s default `player-PID`) use a fresh key each run.
enum MemberKeyStore {
    /// The directory of key files.
    static func directory(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        (StateDirectory.base(environment: environment) as NSString).appendingPathComponent("keys")
    }

    /// The file that holds `name`'s key.
    static func path(for name: String, environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        let plain = !name.isEmpty && !name.hasPrefix(".") && name.utf8.count <= 64
            && name.unicodeScalars.allSatisfy { $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "._-".unicodeScalars.contains($0)) }
        let file = plain ? name : "name-" + SHA256.hash(data: Array(name.utf8)).prefix(8).map { String(format: "%02x", $0) }.joined()
        return (directory(environment: environment) as NSString).appendingPathComponent(file + ".ed25519")
    }

    /// `name`'s key: read from its file, or made and written there the first time.
    ///
    /// - Throws: `ValidationError` when the file exists but holds no key, or cannot be written.
    static func key(for name: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws -> MemberKey {
        let path = path(for: name, environment: environment)
        if let key = try read(path) { return key }
        let directory = (path as NSString).deletingLastPathComponent
        do {
            try FileManager.default.createDirectory(
                atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw ValidationError("cannot create \(directory) for the signing key of '\(name)': \(error.localizedDescription)")
        }
        let key = MemberKey()
        // Written under a temporary name and linked into place: two members starting at once with
        // the same name end up with the one key that was linked first.
        let temporary = path + ".\(getpid()).tmp"
        let text = Array((Base64URL.text(key.seed) + "\n").utf8)
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw ValidationError("cannot write the signing key of '\(name)' to \(temporary): \(String(cString: strerror(errno)))")
        }
        let written = text.withUnsafeBytes { write(descriptor, $0.baseAddress!, $0.count) }
        close(descriptor)
        defer { unlink(temporary) }
        guard written == text.count else { throw ValidationError("cannot write the signing key of '\(name)' to \(temporary)") }
        if link(temporary, path) != 0 && errno != EEXIST {
            throw ValidationError("cannot store the signing key of '\(name)' as \(path): \(String(cString: strerror(errno)))")
        }
        guard let stored = try read(path) else { throw ValidationError("cannot read back the signing key of '\(name)' from \(path)") }
        return stored
    }

    /// The key a member signs with: `name`'s stored key when the person gave a name (`persistent`),
    /// a key for this run otherwise (or when the stored one cannot be had, with a notice).
    static func memberKey(name: String, persistent: Bool, notice: (String) -> Void = { _ in }) -> MemberKey {
        guard persistent else { return MemberKey() }
        do {
            return try key(for: try ChatText.name(name))
        } catch {
            notice("signing key: \(error): signing with a key for this run only")
            return MemberKey()
        }
    }

    private static func read(_ path: String) throws -> MemberKey? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard let seed = Base64URL.bytes(text), seed.count == 32, let key = try? MemberKey(seed: seed) else {
            throw ValidationError("\(path) holds no signing key (32 bytes of base64url): move it away and coplay makes a new one")
        }
        return key
    }

    /// Unpadded base64url.
    enum Base64URL {
        static func text(_ bytes: [UInt8]) -> String {
            Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
        }

        static func bytes(_ text: String) -> [UInt8]? {
            var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
            while base64.count % 4 != 0 { base64.append("=") }
            return Data(base64Encoded: base64).map(Array.init)
        }
    }
}
