import Glibc
import NetlayerJSON

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

    /// Throws `invalidRequest` naming the key of a file that is not a regular file this
    /// process can read (a folder, a FIFO or a device would fail or block every
    /// handshake), of a private key that is encrypted when no `keyPassword` is given
    /// (OpenSSL would ask for the passphrase on the terminal), or of a password without
    /// a certificate: found when the client is made, not at the first handshake.
    public func validate() throws(NetworkError) {
        var files = [("caFile", caFile), ("certFile", certFile), ("keyFile", keyFile)]
        // Not "sha256//" hashes: the path of a PEM or DER public key.
        if let pin = pinnedPublicKey, !pin.hasPrefix("sha256//") { files.append(("pinnedPublicKey", pin)) }
        for (key, path) in files {
            guard let path else { continue }
            do {
                try DocumentFile.checkReadable(path)
            } catch {
                throw .invalidRequest("tls key '\(key)': " + DataTransferError.networkFailure(error).message)
            }
        }
        if keyFile != nil, certFile == nil {
            throw .invalidRequest("tls key 'keyFile' needs 'certFile', the certificate it belongs to")
        }
        if keyPassword != nil, certFile == nil {
            throw .invalidRequest("tls key 'keyPassword' needs 'certFile' (and 'keyFile' when the key is apart)")
        }
        // The key is in keyFile, or else in certFile beside the certificate.
        if keyPassword == nil, let (key, path) = keyFile.map({ ("keyFile", $0) }) ?? certFile.map({ ("certFile", $0) }) {
            if try Self.holdsEncryptedKey(path, key: key) {
                throw .invalidRequest(
                    "tls key 'keyPassword' is needed: the private key in \(key) '\(path.escapedForMessage)' is encrypted")
            }
        }
    }

    /// The most of a certificate or key file read to look for an encrypted key.
    static let maxKeyFileBytes = 1 << 20

    /// Whether the PEM file at `path` holds an encrypted private key: a PKCS #8
    /// `ENCRYPTED PRIVATE KEY` block, or a traditional key with `Proc-Type: 4,ENCRYPTED`.
    private static func holdsEncryptedKey(_ path: String, key: String) throws(NetworkError) -> Bool {
        let bytes: [UInt8]
        do {
            bytes = try DocumentFile.read(path, maxBytes: maxKeyFileBytes)
        } catch {
            throw .invalidRequest("tls key '\(key)': " + DataTransferError.networkFailure(error).message)
        }
        for line in bytes.split(separator: 0x0A) {
            let text = String(decoding: line, as: UTF8.self).trimmingCharacters(in: " \t\r")
            if text == "-----BEGIN ENCRYPTED PRIVATE KEY-----" || text.hasPrefix("Proc-Type: 4,ENCRYPTED") { return true }
        }
        return false
    }
}
