import GroupSessions
import NIOCore
import Testing

@Suite("End-to-end payload crypto")
struct PayloadCipherTests {
    let invite = Invite.generate(host: "127.0.0.1", port: 1)
    let alice = ParticipantID(rawValue: 0xA)

    @Test("seal then open returns the plaintext; the ciphertext does not contain it", arguments: PayloadSuite.allCases)
    func sealOpen(suite: PayloadSuite) throws {
        let invite = Invite.generate(host: "127.0.0.1", port: 1, suite: suite)
        var cipher = PayloadCipher(keys: SessionKeys(invite: invite))
        let canary = Array("CANARY-plaintext-1234".utf8)
        let frame = try cipher.seal(canary, route: DataRoute(senderSequence: 1), flags: [], sender: alice)
        #expect(!frame.payload.readableBytesView.containsSubsequence(canary))
        var receiver = PayloadCipher(keys: SessionKeys(invite: invite))
        let (route, plaintext) = try receiver.open(frame)
        #expect(plaintext == canary)
        #expect(route.senderSequence == 1)
    }

    @Test("a flipped bit anywhere in the sealed part or the bound header is rejected", arguments: PayloadSuite.allCases)
    func tamper(suite: PayloadSuite) throws {
        let invite = Invite.generate(host: "127.0.0.1", port: 1, suite: suite)
        var cipher = PayloadCipher(keys: SessionKeys(invite: invite))
        let frame = try cipher.seal(Array("hello".utf8), route: DataRoute(senderSequence: 3, retainKey: [7, 7]), flags: [], sender: alice)
        let receiver = PayloadCipher(keys: SessionKeys(invite: invite))
        for index in 0..<frame.payload.readableBytes {
            var tampered = frame
            var bytes = Array(tampered.payload.readableBytesView)
            bytes[index] ^= 0x01
            tampered.payload = ByteBuffer(bytes: bytes)
            // Bytes 10..<18 would be recipients (count 0 here, so none); every byte is bound or framing.
            #expect(throws: (any Error).self) { var r = receiver; _ = try r.open(tampered) }
        }
        var otherSender = frame
        otherSender.sender = ParticipantID(rawValue: 0xB)
        #expect(throws: (any Error).self) { var r = receiver; _ = try r.open(otherSender) }
        var unreliable = frame
        unreliable.flags = .unreliable
        #expect(throws: (any Error).self) { var r = receiver; _ = try r.open(unreliable) }
        // The relay-owned fields are not bound: a restamped sequence still opens.
        var restamped = frame
        restamped.sequence = 999
        restamped.flags = [.replayed, .evictable]
        #expect(throws: Never.self) { var r = receiver; _ = try r.open(restamped) }
    }

    @Test("a frame sealed under one suite does not open under the other (keys differ per suite)")
    func suitesDoNotMix() throws {
        var chacha = PayloadCipher(keys: SessionKeys(invite: invite))
        var aesInvite = invite
        aesInvite.suite = .aes256GCM
        var aes = PayloadCipher(keys: SessionKeys(invite: aesInvite))
        let fromChaCha = try chacha.seal(Array("x".utf8), route: DataRoute(senderSequence: 1), flags: [], sender: alice)
        let fromAES = try aes.seal(Array("x".utf8), route: DataRoute(senderSequence: 1), flags: [], sender: alice)
        #expect(throws: (any Error).self) { try aes.open(fromChaCha) }
        #expect(throws: (any Error).self) { try chacha.open(fromAES) }
        let chachaKey = SessionKeys(invite: invite).payloadKey(for: alice).withUnsafeBytes { Array($0) }
        let aesKey = SessionKeys(invite: aesInvite).payloadKey(for: alice).withUnsafeBytes { Array($0) }
        #expect(chachaKey != aesKey)
    }

    @Test("a different secret for the same session cannot open, and gets a different join token")
    func wrongSecret() throws {
        var cipher = PayloadCipher(keys: SessionKeys(invite: invite))
        let frame = try cipher.seal(Array("x".utf8), route: DataRoute(senderSequence: 1), flags: [], sender: alice)
        var other = invite
        other.secret[0] ^= 0xFF
        let receiver = PayloadCipher(keys: SessionKeys(invite: other))
        #expect(throws: (any Error).self) { var r = receiver; _ = try r.open(frame) }
        #expect(SessionKeys(invite: other).joinToken != SessionKeys(invite: invite).joinToken)
        #expect(SessionKeys.joinTokenHash(SessionKeys(invite: invite).joinToken) != SessionKeys(invite: invite).joinToken)
    }

    @Test("the replay guard accepts increasing sequences per sender only")
    func replay() {
        var guardian = ReplayGuard()
        let bob = ParticipantID(rawValue: 0xB)
        let results = [
            guardian.accept(1, from: alice), guardian.accept(1, from: bob), guardian.accept(1, from: alice),
            guardian.accept(5, from: alice), guardian.accept(4, from: alice),
        ]
        #expect(results == [true, true, false, true, false])
        #expect(guardian.lastAccepted(from: alice) == 5)
    }
}

extension ByteBufferView {
    func containsSubsequence(_ needle: [UInt8]) -> Bool {
        let haystack = Array(self)
        guard needle.count <= haystack.count else { return false }
        for start in 0...(haystack.count - needle.count) where haystack[start..<start + needle.count].elementsEqual(needle) {
            return true
        }
        return false
    }
}
