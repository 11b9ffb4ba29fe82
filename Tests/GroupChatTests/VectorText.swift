import Foundation

// How the shared vector files (Tests/Vectors/chat, roles, removal) spell values, for the suites that
// write and check them: one copy for the three.

/// A value as sorted-key JSON without escaped slashes (the members' wire JSON, as the page compares it).
func json<T: Encodable>(_ value: T) throws -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    return String(decoding: try encoder.encode(value), as: UTF8.self)
}

/// Lowercase hex, two digits per byte.
func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

/// Unpadded base64url.
func base64url(_ bytes: [UInt8]) -> String {
    Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        .replacingOccurrences(of: "=", with: "")
}
