import ArgumentParser

/// The `coplay` command-line tool: glue over the coplay modules.
@main
struct Coplay: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "coplay",
        abstract: "Keep media players on different machines in step.",
        version: "0.1.0",
        subcommands: [
            BenchCommand.self,
            ChatCommand.self,
            ControlCommand.self,
            DemoCommand.self,
            HostCommand.self,
            InviteCommand.self,
            JoinCommand.self,
            PeopleCommand.self,
            QueueCommand.self,
            ProbeCommand.self,
            ServeCommand.self,
            TimeCommand.self,
        ]
    )

    /// ArgumentParser's entry point, with `SIGPIPE` ignored first: a reader that closes coplay's
    /// output (`| head -1`) ends writing there, never the process (``Console``).
    static func main() async {
        Console.ignoreBrokenPipes()
        await main(nil)
    }
}
