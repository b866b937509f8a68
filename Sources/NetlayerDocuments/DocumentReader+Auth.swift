import NetlayerCore
import NetlayerFeatures
import NetlayerJSON


extension DocumentReader {
    /// `auth` (config or endpoint): exactly one of `{"basic": {"user", "password"}}`,
    /// `{"bearer": "TOKEN"}`, `{"digest": {"user", "password"}}` and
    /// `{"netrc": true | "FILE"}`; `{}` is no authentication (nil), which lets an
    /// endpoint turn off its config's.
    package func authentication(_ key: String) throws(NetworkError) -> Authentication? {
        guard let auth = try reader(key) else { return nil }
        try auth.checkKeys(known: ["basic", "bearer", "digest", "netrc"])
        let given = auth.object.filter { !$0.value.isNull }
        guard given.count <= 1 else {
            throw .invalidRequest("\(context) key '\(key)' must hold one of basic, bearer, digest and netrc, not \(given.count)")
        }
        let value: Authentication
        if let token = try auth.string("bearer") {
            value = .bearer(token: token)
        } else if let netrc = auth.value("netrc") {
            switch netrc {
            case .bool(true): value = .netrc(file: nil)
            case .string(let file): value = .netrc(file: file)
            default:
                throw .invalidRequest("\(context) key '\(key)': netrc must be true (~/.netrc) or a file path, not \(netrc.typeName)")
            }
        } else if let basic = try auth.reader("basic") {
            let (user, password) = try basic.credentials()
            value = .basic(user: user, password: password)
        } else if let digest = try auth.reader("digest") {
            let (user, password) = try digest.credentials()
            value = .digest(user: user, password: password)
        } else {
            return nil
        }
        try value.validate(key: "\(context) key '\(key)'")
        return value
    }

    /// `{"user": ..., "password": ...}`, both strings (the password may be empty).
    private func credentials() throws(NetworkError) -> (String, String) {
        try checkKeys(known: ["user", "password"])
        guard let user = try string("user") else { throw .invalidRequest("\(context) needs 'user'") }
        return (user, try string("password") ?? "")
    }
}
