import Foundation
import MediaProbe
import PropertyBased
import Testing

@Suite("ContentFingerprint")
struct ContentFingerprintTests {
    @Test("the string form is stable and round-trips; the v1 form is still read and equals v2 of the same bytes")
    func stringForm() throws {
        let fingerprint = ContentFingerprint(size: 3, head: [1, 2, 3], tail: [1, 2, 3])
        // SHA-256 of 01 02 03 01 02 03 (what the browser's fingerprint.js computes too).
        #expect(fingerprint.digest == "3ba35ee83f218013f8b83f08ae2c06c9d8e05a198d271c57c9e9a1771b44a211")
        #expect(fingerprint.description == "v2:3:\(fingerprint.digest)")
        #expect(ContentFingerprint(fingerprint.description) == fingerprint)
        let v1 = try #require(ContentFingerprint("v1:3:2000000:\(fingerprint.digest)"))
        #expect(v1 == fingerprint)
        #expect(v1.durationMicroseconds == 2_000_000)
        #expect(ContentFingerprint("v1:3:-:\(fingerprint.digest)") == fingerprint)
        #expect(ContentFingerprint("v2:4:\(fingerprint.digest)") != fingerprint)
        for bad in ["", "v2:3:-:" + fingerprint.digest, "v3:3:" + fingerprint.digest, "v1:x:1:" + fingerprint.digest,
                    "v2:-1:" + fingerprint.digest, "v1:3:1:abc", "v2:3:" + fingerprint.digest.uppercased()] {
            #expect(ContentFingerprint(bad) == nil, "\(bad)")
        }
        let json = try JSONEncoder().encode(fingerprint)
        #expect(try JSONDecoder().decode(ContentFingerprint.self, from: json) == fingerprint)
    }

    @Test("property: parsing the description gives the same value")
    func roundTripProperty() async {
        await propertyCheck(input: Gen.int64(in: 0...Int64.max), Gen.uint8().array(of: 0...64)) { size, bytes in
            let value = ContentFingerprint(size: size, head: bytes, tail: bytes.reversed())
            #expect(ContentFingerprint(value.description) == value)
            #expect(ContentFingerprint(value.description)?.description == value.description)
        }
    }

    @Test("copies match; a changed byte in the head or tail chunk does not; the middle is not read")
    func identity() async throws {
        let dir = try Samples.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        // A WAV file: PCM samples up to the last byte, so every variant below still parses.
        let original = Samples.url("tone.wav")
        let bytes = try Data(contentsOf: original)
        try #require(bytes.count > 2 * ContentFingerprint.chunkSize + 1000)

        func fingerprint(_ data: Data, _ name: String) async throws -> ContentFingerprint {
            let file = dir.appendingPathComponent(name)
            try data.write(to: file)
            return try await MediaProbe.shared.probe(file).fingerprint
        }
        let a = try await MediaProbe.shared.probe(original).fingerprint
        #expect(try await fingerprint(bytes, "copy.wav") == a)
        #expect(a.size == Int64(bytes.count))

        var tail = bytes
        tail[tail.count - 1] ^= 0x01
        #expect(try await fingerprint(tail, "tail.wav") != a)

        var head = bytes
        head[1000] ^= 0x01
        #expect(try await fingerprint(head, "head.wav") != a)

        // By design (two chunks, cheap for any size) a change in the middle goes unnoticed.
        var middle = bytes
        middle[bytes.count / 2] ^= 0x01
        #expect(try await fingerprint(middle, "middle.wav") == a)

        #expect(try await MediaProbe.shared.probe(Samples.url("tone.flac")).fingerprint != a)
    }
}
