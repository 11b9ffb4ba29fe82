import Testing

@Suite("coplay command line")
struct HelpTests {
    @Test("--help describes the tool and exits 0")
    func help() async throws {
        let result = try await CoplayProcess.run(["--help"])
        #expect(result.status == 0)
        #expect(result.stdout.contains("USAGE: coplay"))
    }

    @Test("an unknown subcommand is a usage error with a non-zero exit")
    func unknownSubcommand() async throws {
        let result = try await CoplayProcess.run(["no-such-command"])
        #expect(result.status != 0)
        #expect(result.stderr.contains("Error"))
    }
}
