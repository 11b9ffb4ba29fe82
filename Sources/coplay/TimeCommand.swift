import ArgumentParser

/// `coplay time`: the NTP reference clock, as a server and as a client.
struct TimeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "time",
        abstract: "Serve or query an NTPv4 reference clock.",
        discussion: """
            `coplay time serve` runs an NTPv4 server (RFC 5905) on UDP whose time is this process's \
            monotonic clock anchored to UTC at start; real NTP clients (chrony, ntpd) accept it. \
            `coplay time query` measures a server's offset from this machine's clock.
            """,
        subcommands: [TimeServeCommand.self, TimeQueryCommand.self]
    )
}
