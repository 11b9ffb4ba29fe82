import Foundation

/// Media positions as people write and read them: `90`, `1.5`, `1:30`, `1:02:03.5`.
enum TimeText {
    /// Seconds from `SECONDS`, `M:SS` or `H:MM:SS` (each with an optional fraction on the
    /// seconds); `nil` for anything else (negative, minutes or seconds of 60 and more after a colon,
    /// not finite).
    static func seconds(_ text: String) -> Double? {
        let parts = text.trimmingCharacters(in: .whitespaces).split(separator: ":", omittingEmptySubsequences: false)
        guard (1...3).contains(parts.count), parts.allSatisfy({ !$0.isEmpty }) else { return nil }
        // Only digits and one dot: no signs, exponents, "inf" or "nan".
        guard parts.allSatisfy({ $0.allSatisfy { $0.isASCII && ($0.isNumber || $0 == ".") } }) else { return nil }
        guard let last = Double(parts[parts.count - 1]), last.isFinite else { return nil }
        if parts.count == 1 { return last }
        guard last < 60 else { return nil }
        var units: [Int] = []
        for part in parts.dropLast() {
            guard let value = Int(part) else { return nil }
            units.append(value)
        }
        if units.count == 2 && units[1] >= 60 { return nil }
        let whole = units.reduce(0) { $0 * 60 + $1 }
        return Double(whole) * 60 + last
    }

    /// `h:mm:ss`, with tenths when `seconds` is not a whole second (`0:01:30`, `1:02:03.5`).
    static func position(_ seconds: Double) -> String {
        guard seconds.isFinite else { return "?" }
        let negative = seconds < 0
        let tenths = Int((abs(seconds) * 10).rounded())
        let whole = tenths / 10
        var text = String(format: "%d:%02d:%02d", whole / 3600, whole / 60 % 60, whole % 60)
        if tenths % 10 != 0 { text += ".\(tenths % 10)" }
        return negative ? "-" + text : text
    }

    /// The local wall-clock time of a `CLOCK_REALTIME` reading, `HH:MM:SS`.
    static func clock(_ realtime: Double) -> String {
        var seconds = time_t(realtime.rounded(.down))
        var parts = tm()
        localtime_r(&seconds, &parts)
        return String(format: "%02d:%02d:%02d", parts.tm_hour, parts.tm_min, parts.tm_sec)
    }
}
