/// A relay benchmark could not set up or lost its session.
struct RelayBenchmarkError: Error, CustomStringConvertible {
    /// What went wrong.
    let description: String

    init(_ description: String) {
        self.description = description
    }
}
