import ArgumentParser

/// `coplay bench`: timing-accuracy and throughput benchmarks, one subcommand per area.
struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Measure coplay's timing accuracy and throughput.",
        subcommands: [
            BenchRunCommand.self,
            BenchClockCommand.self,
            BenchProbe.self,
            BenchScenarioAnalyzeCommand.self,
            BenchSyncplayCommand.self,
            BenchRelayCommand.self,
            BenchJournalCommand.self,
            WakeupBenchCommand.self,
            GroupBenchCommand.self,
            BenchKeypressCommand.self,
        ],
        defaultSubcommand: BenchRunCommand.self
    )
}
