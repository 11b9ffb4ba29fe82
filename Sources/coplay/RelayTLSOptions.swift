import ArgumentParser
import Foundation
import GroupSessions
import NIOSSL

/// How `coplay host`, `join` and `control` verify a TLS relay (a `coplays://` invite).
struct RelayTLSOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "For a coplays:// invite: trust the relay's certificate when it chains to this CA (PEM) instead of the system's trust store. An invite that pins the relay's key needs neither.",
            valueName: "FILE"))
    var ca: String?

    func validate() throws {
        if let ca, !FileManager.default.isReadableFile(atPath: ca) {
            throw ValidationError("--ca \(ca) is not a readable file")
        }
    }

    /// The client TLS settings for `invite`: `nil` for a plain one.
    func configuration(for invite: Invite) throws -> TLSConfiguration? {
        guard invite.usesTLS else { return nil }
        var configuration = TLSConfiguration.makeClientConfiguration()
        if let ca {
            do {
                configuration.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(ca))
            } catch {
                throw ValidationError("cannot read the CA certificate --ca \(ca): \(error)")
            }
        }
        return configuration
    }
}
