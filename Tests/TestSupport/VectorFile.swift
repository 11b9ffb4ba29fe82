import Foundation

/// A shared test-vector file (`Tests/Vectors/…`, which the page's Node tests read too): written
/// from the Swift values when the run writes vectors, read back to compare otherwise.
public enum VectorFile {
    /// Writes `vector` to `file` (pretty, sorted keys, a final newline) when `writing` and returns
    /// `nil`; otherwise returns the vector stored in `file`.
    public static func writeOrRead<Vector: Codable>(_ vector: Vector, at file: URL, writing: Bool) throws -> Vector? {
        guard writing else { return try JSONDecoder().decode(Vector.self, from: Data(contentsOf: file)) }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        var data = try encoder.encode(vector)
        data.append(0x0A)
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try data.write(to: file)
        return nil
    }
}
