import ArgumentParser
import Foundation
import GroupSessions

/// `coplay invite INVITE --viewer [--link]`: the viewer invite of a session where only hosts
/// control, derived offline from its controller invite (docs/protocol.md, "Roles: who may control").
struct InviteCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "invite",
        abstract: "Print the viewer invite (or its browser link) of a session where only hosts control.",
        discussion: """
            Reads the controller invite that `coplay host --control hosts` printed (the argument, \
            --invite-file FILE or COPLAY_INVITE) and prints the same invite without the host key's seed: \
            its holders join and watch in step, but their commands count nowhere until a host grants them \
            control (`coplay control CONTROLLER_INVITE grant NAME`). Offline: nothing is sent. --link \
            prints the viewers' browser link instead (the page the relay serves), as `coplay host` prints \
            the controller's.

            Examples:
              coplay invite --invite-file invite.txt --viewer > viewer.txt
              coplay invite --invite-file invite.txt --viewer --link
            """
    )

    @Argument(help: "The controller invite (unless --invite-file or COPLAY_INVITE gives it).")
    var invite: String?

    @Flag(help: "Print the viewer invite (the only form this command prints so far).")
    var viewer = false

    @Flag(help: "Print the viewers' browser link (http[s]://RELAY/#invite=…) instead of the invite.")
    var link = false

    @OptionGroup(title: "Invite") var inviteOptions: InviteOptions

    func validate() throws {
        guard viewer else { throw ValidationError("say which invite to print: --viewer (the viewers' invite of a session where only hosts control)") }
        _ = try derived()
    }

    /// The viewer invite.
    func derived() throws -> Invite {
        let controller = try inviteOptions.invite(argument: invite)
        guard controller.onlyHostsControl else {
            throw ValidationError(
                "this session lets everyone control (it was hosted without --control hosts): there is no viewer invite; everyone with the invite controls")
        }
        guard controller.controls else {
            throw ValidationError("this is a viewer invite already (it holds no host key): it is what viewers get")
        }
        if link && controller.suite != .aes256GCM {
            throw ValidationError("browsers cannot join a \(controller.suite) session (host with --cipher aes-256-gcm): there is no link")
        }
        return controller.viewer
    }

    func run() throws {
        let viewer = try derived()
        Console.out.line(link ? viewer.webPageURL() : viewer.description)
    }
}
