import Logging

extension Logger {
    /// The logger the relay benchmarks' clients use: errors only, so runs print the tables alone.
    static var benchmarks: Logger {
        var logger = Logger(label: "coplay.benchmarks")
        logger.logLevel = .error
        return logger
    }
}
