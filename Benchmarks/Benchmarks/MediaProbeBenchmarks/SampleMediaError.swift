/// The samples could not be made.
struct SampleMediaError: Error, CustomStringConvertible {
    /// What went wrong.
    let description: String

    init(_ description: String) {
        self.description = description
    }
}
