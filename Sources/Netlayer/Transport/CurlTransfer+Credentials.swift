import CCurl

extension CurlTransfer {
    /// TLS verification, client certificates and the authentication libcurl answers
    /// (digest, .netrc): the options that carry secrets, in one place.
    func configureCredentials(_ easy: UnsafeMutableRawPointer, options: RequestOptions, check: (CURLcode) -> Void) {
        check(nl_curl_setopt_long(easy, CURLOPT_SSL_VERIFYPEER, options.tls.verify ? 1 : 0))
        check(nl_curl_setopt_long(easy, CURLOPT_SSL_VERIFYHOST, options.tls.verify ? 2 : 0))
        if let caFile = options.tls.caFile { check(nl_curl_setopt_str(easy, CURLOPT_CAINFO, caFile)) }
        if let pin = options.tls.pinnedPublicKey { check(nl_curl_setopt_str(easy, CURLOPT_PINNEDPUBLICKEY, pin)) }
        if let cert = options.tls.certFile { check(nl_curl_setopt_str(easy, CURLOPT_SSLCERT, cert)) }
        if let key = options.tls.keyFile { check(nl_curl_setopt_str(easy, CURLOPT_SSLKEY, key)) }
        if let password = options.tls.keyPassword { check(nl_curl_setopt_str(easy, CURLOPT_KEYPASSWD, password)) }
        switch options.auth {
        case .digest(let user, let password)?:
            check(nl_curl_setopt_long(easy, CURLOPT_HTTPAUTH, 1 << 1))  // CURLAUTH_DIGEST, a macro Swift cannot import
            check(nl_curl_setopt_str(easy, CURLOPT_USERNAME, user))
            check(nl_curl_setopt_str(easy, CURLOPT_PASSWORD, password))
        case .netrc(let file)?:
            check(nl_curl_setopt_long(easy, CURLOPT_NETRC, Int(CURL_NETRC_OPTIONAL.rawValue)))
            if let file { check(nl_curl_setopt_str(easy, CURLOPT_NETRC_FILE, file)) }
        default:
            break
        }
    }

    /// libcurl's phase marks of the finished transfer.
    static func timing(_ easy: UnsafeMutableRawPointer) -> TransferTiming {
        func ms(_ info: CURLINFO) -> Double {
            var micros: curl_off_t = 0
            nl_curl_getinfo_off(easy, info, &micros)
            return Double(micros) / 1000
        }
        var timing = TransferTiming()
        timing.dnsMs = ms(CURLINFO_NAMELOOKUP_TIME_T)
        timing.connectMs = ms(CURLINFO_CONNECT_TIME_T)
        timing.tlsMs = ms(CURLINFO_APPCONNECT_TIME_T)
        timing.firstByteMs = ms(CURLINFO_STARTTRANSFER_TIME_T)
        return timing
    }

}
