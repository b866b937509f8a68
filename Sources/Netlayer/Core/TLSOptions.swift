/// TLS settings. Peer and host verification are on unless turned off explicitly.
public struct TLSOptions: Sendable, Hashable {
    public var verify = true
    /// A PEM file of CA certificates to trust instead of the system's.
    public var caFile: String?
    /// libcurl's pinned public key: a PEM/DER path or "sha256//BASE64" hashes.
    public var pinnedPublicKey: String?

    public init(verify: Bool = true, caFile: String? = nil, pinnedPublicKey: String? = nil) {
        self.verify = verify
        self.caFile = caFile
        self.pinnedPublicKey = pinnedPublicKey
    }
}
