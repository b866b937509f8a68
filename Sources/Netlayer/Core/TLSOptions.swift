import Glibc

/// TLS settings. Peer and host verification are on unless turned off explicitly.
public struct TLSOptions: Sendable, Hashable {
    public var verify = true
    /// A PEM file of CA certificates to trust instead of the system's.
    public var caFile: String?
    /// libcurl's pinned public key: a PEM/DER path or "sha256//BASE64" hashes.
    public var pinnedPublicKey: String?
    /// The client certificate (PEM) presented for mutual TLS; it may hold the key too.
    public var certFile: String?
    /// The client certificate's private key (PEM), when not in `certFile`.
    public var keyFile: String?
    /// The passphrase of an encrypted key; a secret, never logged.
    public var keyPassword: String?

    public init(verify: Bool = true, caFile: String? = nil, pinnedPublicKey: String? = nil,
                certFile: String? = nil, keyFile: String? = nil, keyPassword: String? = nil) {
        self.verify = verify
        self.caFile = caFile
        self.pinnedPublicKey = pinnedPublicKey
        self.certFile = certFile
        self.keyFile = keyFile
        self.keyPassword = keyPassword
    }

    /// Throws `invalidRequest` naming the key of a client certificate or key that
    /// cannot be read, or a password without them: found when the client is made,
    /// not at the first handshake.
    public func validate() throws(NetworkError) {
        for (key, path) in [("certFile", certFile), ("keyFile", keyFile)] {
            guard let path else { continue }
            if access(path, R_OK) != 0 {
                let reason = String(cString: strerror(errno))
                throw .invalidRequest("tls key '\(key)': cannot read '\(path.escapedForMessage)': \(reason)")
            }
        }
        if keyFile != nil, certFile == nil {
            throw .invalidRequest("tls key 'keyFile' needs 'certFile', the certificate it belongs to")
        }
        if keyPassword != nil, certFile == nil {
            throw .invalidRequest("tls key 'keyPassword' needs 'certFile' (and 'keyFile' when the key is apart)")
        }
    }
}
