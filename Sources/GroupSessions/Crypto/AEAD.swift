import Crypto
import Foundation

/// One sealing and opening routine for both ``PayloadSuite``s: `ciphertext || 16-byte tag`
/// under a 12-byte nonce, the layout both swift-crypto and WebCrypto produce.
enum AEAD {
    /// Bytes of the authentication tag.
    static let tagLength = 16

    /// Seals `plaintext`; returns the ciphertext followed by the tag.
    static func seal(
        _ plaintext: some DataProtocol, suite: PayloadSuite, key: SymmetricKey, nonce: [UInt8],
        authenticating aad: [UInt8]
    ) throws -> [UInt8] {
        switch suite {
        case .chaCha20Poly1305:
            let box = try ChaChaPoly.seal(plaintext, using: key, nonce: ChaChaPoly.Nonce(data: nonce), authenticating: aad)
            return Array(box.ciphertext) + Array(box.tag)
        case .aes256GCM:
            let box = try AES.GCM.seal(plaintext, using: key, nonce: AES.GCM.Nonce(data: nonce), authenticating: aad)
            return Array(box.ciphertext) + Array(box.tag)
        }
    }

    /// Opens `ciphertext || tag`.
    ///
    /// `sealed` must hold at least the tag (callers check and report a truncation themselves).
    ///
    /// - Throws: A CryptoKit error when the box was altered or sealed under another key or suite.
    static func open(
        _ sealed: some Collection<UInt8>, suite: PayloadSuite, key: SymmetricKey, nonce: [UInt8],
        authenticating aad: [UInt8]
    ) throws -> [UInt8] {
        let bytes = Array(sealed)
        let ciphertext = bytes.prefix(bytes.count - tagLength)
        let tag = bytes.suffix(tagLength)
        switch suite {
        case .chaCha20Poly1305:
            let box = try ChaChaPoly.SealedBox(nonce: ChaChaPoly.Nonce(data: nonce), ciphertext: ciphertext, tag: tag)
            return Array(try ChaChaPoly.open(box, using: key, authenticating: aad))
        case .aes256GCM:
            let box = try AES.GCM.SealedBox(nonce: AES.GCM.Nonce(data: nonce), ciphertext: ciphertext, tag: tag)
            return Array(try AES.GCM.open(box, using: key, authenticating: aad))
        }
    }
}
