import NIOSSL

extension RelayConfiguration {
    /// Builds a server TLS context from PEM files (certificate chain and private key).
    ///
    /// ```swift
    /// configuration.tls = try RelayConfiguration.tlsContext(certificatePath: "cert.pem", keyPath: "key.pem")
    /// ```
    ///
    /// - Parameters:
    ///   - certificatePath: PEM file with the certificate chain, leaf first.
    ///   - keyPath: PEM file with the private key.
    /// - Throws: NIOSSL's errors when a file is missing or unreadable.
    public static func tlsContext(certificatePath: String, keyPath: String) throws -> NIOSSLContext {
        let chain = try NIOSSLCertificate.fromPEMFile(certificatePath).map { NIOSSLCertificateSource.certificate($0) }
        let key = try NIOSSLPrivateKey(file: keyPath, format: .pem)
        let configuration = TLSConfiguration.makeServerConfiguration(certificateChain: chain, privateKey: .privateKey(key))
        return try NIOSSLContext(configuration: configuration)
    }
}
