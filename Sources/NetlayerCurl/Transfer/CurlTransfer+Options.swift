import CCurl
import NetlayerCore
import NetlayerJSON

extension CurlTransfer {
    /// Whether a proxy may carry the request: one is configured, or the environment
    /// named one at start. Then the user agent goes in `CURLOPT_USERAGENT`, the only way
    /// libcurl puts it in a proxy's CONNECT request; else it is a header line of ours.
    static func proxyMayApply(_ options: RequestOptions) -> Bool {
        options.proxy != nil || CurlSessionManager.CurlGlobal.environmentNamesProxy
    }

    /// TLS verification, client certificates and the authentication libcurl answers
    /// (digest; `.netrc` is an Authorization header Netlayer builds): the options that
    /// carry secrets, in one place.
    /// A WebSocket's connection (`CurlWebSocket`) takes them from here too.
    func configureCredentials(_ easy: UnsafeMutableRawPointer, options: RequestOptions, check: (CURLcode) -> Void) {
        Self.applyCredentials(easy, options: options, check: check)
    }

    static func applyCredentials(_ easy: UnsafeMutableRawPointer, options: RequestOptions, check: (CURLcode) -> Void) {
        check(nl_curl_setopt_long(easy, CURLOPT_SSL_VERIFYPEER, options.tls.verify ? 1 : 0))
        check(nl_curl_setopt_long(easy, CURLOPT_SSL_VERIFYHOST, options.tls.verify ? 2 : 0))
        if let caFile = options.tls.caFile { check(nl_curl_setopt_str(easy, CURLOPT_CAINFO, caFile)) }
        if let pin = options.tls.pinnedPublicKey { check(nl_curl_setopt_str(easy, CURLOPT_PINNEDPUBLICKEY, pin)) }
        if let cert = options.tls.certFile { check(nl_curl_setopt_str(easy, CURLOPT_SSLCERT, cert)) }
        if let key = options.tls.keyFile { check(nl_curl_setopt_str(easy, CURLOPT_SSLKEY, key)) }
        if options.tls.certFile != nil {
            // Always a password, "" when none is given: without one OpenSSL asks for the
            // passphrase of an encrypted key on the terminal (or reads standard input)
            // and the handshake waits for an answer no timeout bounds. With one, a key
            // encrypted after the client was made fails the handshake (kind tls).
            check(nl_curl_setopt_str(easy, CURLOPT_KEYPASSWD, options.tls.keyPassword ?? ""))
        }
        switch options.auth {
        case .digest(let user, let password)?:
            check(nl_curl_setopt_long(easy, CURLOPT_HTTPAUTH, 1 << 1))  // CURLAUTH_DIGEST, a macro Swift cannot import
            check(nl_curl_setopt_str(easy, CURLOPT_USERNAME, user))
            check(nl_curl_setopt_str(easy, CURLOPT_PASSWORD, password))
        default:
            break
        }
    }

    /// The transport choices: HTTP version, Unix socket, DNS overrides, interface. nil,
    /// or `invalidRequest` naming the config key whose option libcurl refused: each was
    /// checked when the client was made (`TransportChoices.validate`), so this is a
    /// libcurl that differs from the one the checks follow, or memory running out.
    func configureConnection(_ easy: UnsafeMutableRawPointer, _ choices: TransportChoices) -> NetworkError? {
        let (error, list) = Self.applyConnection(easy, choices)
        resolveList = list
        return error
    }

    /// `configureConnection` for any handle: the error, and the `CURLOPT_RESOLVE` list
    /// the caller frees (with `curl_slist_free_all`) after the handle's last transfer.
    static func applyConnection(_ easy: UnsafeMutableRawPointer,
                                _ choices: TransportChoices) -> (NetworkError?, UnsafeMutablePointer<curl_slist>?) {
        func refused(_ key: String, _ code: CURLcode) -> NetworkError? {
            guard code != CURLE_OK else { return nil }
            return .invalidRequest("config key '\(key)': libcurl refused it: \(String(cString: curl_easy_strerror(code)))")
        }
        let version: Int? = switch choices.httpVersion {
        case .http1_1?: Int(CURL_HTTP_VERSION_1_1)
        case .http2?: Int(CURL_HTTP_VERSION_2_0)
        case .http2PriorKnowledge?: Int(CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE)
        case .http3?: Int(CURL_HTTP_VERSION_3)
        case nil: nil
        }
        if let version, let error = refused("httpVersion", nl_curl_setopt_long(easy, CURLOPT_HTTP_VERSION, version)) {
            return (error, nil)
        }
        if let path = choices.unixSocket,
           let error = refused("unixSocket", nl_curl_setopt_str(easy, CURLOPT_UNIX_SOCKET_PATH, path)) {
            return (error, nil)
        }
        if let name = choices.interface, let error = refused("interface", nl_curl_setopt_str(easy, CURLOPT_INTERFACE, name)) {
            return (error, nil)
        }
        if !choices.resolve.isEmpty {
            var list: UnsafeMutablePointer<curl_slist>?
            for entry in choices.resolve {
                guard let longer = curl_slist_append(list, entry) else {
                    if let list { curl_slist_free_all(list) }
                    return (refused("resolve", CURLE_OUT_OF_MEMORY), nil)
                }
                list = longer
            }
            return (refused("resolve", nl_curl_setopt_slist(easy, CURLOPT_RESOLVE, list)), list)
        }
        return (nil, nil)
    }

    /// The proxy, or none: "" is "no proxy" (and no exceptions to it), which spares
    /// libcurl looking for both in the environment again on every transfer (~3k
    /// instructions).
    static func applyProxy(_ easy: UnsafeMutableRawPointer, options: RequestOptions, check: (CURLcode) -> Void) {
        if let proxy = options.proxy {
            check(nl_curl_setopt_str(easy, CURLOPT_PROXY, proxy))
        } else if !CurlSessionManager.CurlGlobal.environmentNamesProxy {
            check(nl_curl_setopt_str(easy, CURLOPT_PROXY, ""))
            check(nl_curl_setopt_str(easy, CURLOPT_NOPROXY, ""))
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
