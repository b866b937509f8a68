import CCurl
import NetlayerCore
import NetlayerJSON

extension CurlTransfer {
    /// A pooled libcurl easy handle and what it was last configured with.
    ///
    /// Resetting a handle and setting its ~25 options again costs as much as a small
    /// request's own work in libcurl, so a handle that ran a plain request (no body,
    /// upload, multipart or progress handler) keeps its options; the next plain request
    /// with the same options only sets the few that point at itself. Anything else gets
    /// `curl_easy_reset` first, so no option of one request leaks into the next.
    /// Used by one thread at a time.
    package final class EasyHandle {
        let pointer: UnsafeMutableRawPointer
        /// libcurl's CURLOPT_ERRORBUFFER for this handle: set once per configuration,
        /// emptied before each transfer.
        let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
        /// The options in force, when they are exactly a plain request's; nil after a
        /// reset, a failed configuration or a request that was not plain.
        var profile: EasyProfile? {
            didSet { hasProfile = profile != nil }
        }
        /// `profile != nil`, without copying the profile's strings to find out.
        private var hasProfile = false
        private var needsReset = false
        /// `CURLOPT_COOKIEFILE` is set (the cookie engine is on): `reset()` clears it first,
        /// since libcurl 7.88's `curl_easy_reset` loses that list without freeing it.
        var cookieEngineOn = false
        /// `CURLOPT_COOKIE` holds a request's own cookies: the next request sets it again,
        /// to its own or to none.
        var hasCookieOption = false
        /// The share whose cookie jar this handle left for one of its own (`CurlTransfer.CookieOverride`):
        /// `reset()` goes back to it, which frees the handle's own jar.
        private var leftShare: UnsafeMutableRawPointer?
        /// The `CURLOPT_HTTPHEADER` list of the last transfer, kept for the next one with
        /// the same headers (most requests of a client send the same few).
        private var headers: (key: CurlTransfer.HeaderList, list: UnsafeMutablePointer<curl_slist>?)?
        /// The context of the open and close socket callbacks in force (an event loop's),
        /// nil after a reset.
        private var socketCallbacksContext: UnsafeMutableRawPointer?
        /// The URL option (`CURLOPT_URL` or `CURLOPT_CURLU`) of the next transfer.
        let url = CurlTransfer.EasyURL()

        init?() {
            guard let pointer = curl_easy_init() else { return nil }
            self.pointer = pointer
            errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        }

        deinit {
            curl_easy_cleanup(pointer)
            if let list = headers?.list { curl_slist_free_all(list) }
            errorBuffer.deallocate()
        }

        /// The header list for `key`: the one the last transfer sent when it is the same,
        /// else a new one (the old one freed: no transfer of this handle runs now). It
        /// stays valid until the next call or the handle's end.
        func headerList(for key: CurlTransfer.HeaderList) -> UnsafeMutablePointer<curl_slist>? {
            if let headers, headers.key == key { return headers.list }
            if let list = headers?.list { curl_slist_free_all(list) }
            let list = key.build()
            headers = (key, list)
            return list
        }

        /// What libcurl wrote about the last failure ("" if nothing).
        var errorDetail: String { String(cString: errorBuffer) }

        /// Whether the options of `request` (a plain one) are already set, so only
        /// per-request ones are needed. Compares in place: no profile is built for it.
        func canReuse(for request: HTTPRequest) -> Bool {
            hasProfile && profile?.matches(request) == true
        }

        /// Sets the callbacks that open and close the sockets of the connections this handle
        /// opens (each connection keeps those of the handle that opened it); a handle that
        /// has them already is left as it is.
        func useSocketCallbacks(open: curl_opensocket_callback, close: curl_closesocket_callback,
                                context: UnsafeMutableRawPointer) {
            guard socketCallbacksContext != context else { return }
            if nl_curl_setopt_sockets(pointer, open, close, context) == CURLE_OK { socketCallbacksContext = context }
        }

        /// Before a full configuration: back to libcurl's defaults if anything was set.
        func resetIfUsed() {
            if needsReset { reset() }
            needsReset = true
            profile = nil
        }

        /// The cookie engine runs over a jar of the handle's own until the next reset,
        /// instead of `share`'s.
        func holdsOwnCookieJar(instead share: UnsafeMutableRawPointer) {
            leftShare = share
        }

        private func reset() {
            if let share = leftShare {
                // Attaching a share that has a cookie jar frees the handle's own.
                _ = nl_curl_setopt_ptr(pointer, CURLOPT_SHARE, share)
                leftShare = nil
            }
            if cookieEngineOn {
                _ = nl_curl_setopt_str(pointer, CURLOPT_COOKIEFILE, nil)
                cookieEngineOn = false
            }
            curl_easy_reset(pointer)
            url.handleWasReset()
            socketCallbacksContext = nil
            hasCookieOption = false
        }

        /// After a transfer: a handle whose options are not a known profile is reset
        /// now, so it holds no pointer to the finished transfer's MIME parts or files.
        func finishedTransfer() {
            guard !hasProfile, needsReset else { return }
            reset()
            needsReset = false
        }
    }
}

extension CurlTransfer {
    /// Every option value a plain request sets on its easy handle; two plain requests
    /// with equal profiles configure a handle identically but for per-request pointers.
    package struct EasyProfile: Equatable {
        let method: HTTPMethod
        let https: Bool
        let timeout: Double?
        let connectTimeout: Double?
        /// CURLOPT_MAXFILESIZE_LARGE (`CurlTransfer.ResponseSink.announcedSizeLimit`).
        let announcedSizeLimit: Int
        let compression: Bool
        /// The request's options: the boxed ones (user agent, proxy, TLS, auth, transport)
        /// compare at once when the next request shares their box, as a client's do.
        let options: RequestOptions

        package static func == (lhs: EasyProfile, rhs: EasyProfile) -> Bool {
            lhs.method == rhs.method && lhs.https == rhs.https
                && lhs.timeout == rhs.timeout && lhs.connectTimeout == rhs.connectTimeout
                && lhs.announcedSizeLimit == rhs.announcedSizeLimit && lhs.compression == rhs.compression
                && lhs.options.sameBoxedOptions(as: rhs.options)
        }

        /// Whether `request` has a profile: no body, upload, multipart form, progress
        /// handler or stream (those options are set afresh each time; a stream's timeout
        /// means something else).
        static func isPlain(_ request: HTTPRequest) -> Bool {
            request.body == nil && request.method != .post && request.transfer.multipart == nil
                && request.transfer.uploadFrom == nil && request.transfer.progress == nil && request.transfer.stream == nil
                && request.options.transport.resolve.isEmpty  // its list is the transfer's, set afresh each time
        }

        /// Whether `request` would have exactly this profile: `self == EasyProfile(request,
        /// `, compared field by field without building the other profile (this
        /// runs for every request). Debug builds check the two agree, so a field added to
        /// the profile but not here cannot let one request's options leak into the next.
        func matches(_ request: HTTPRequest) -> Bool {
            let same = compare(request)
            assert(same == (EasyProfile(request) == self), "EasyProfile.matches misses a field")
            return same
        }

        private func compare(_ request: HTTPRequest) -> Bool {
            guard Self.isPlain(request), method == request.method else { return false }
            let options = request.options
            return https == request.url.hasASCIIPrefix("https:") && timeout == options.timeout
                && connectTimeout == options.connectTimeout && announcedSizeLimit == CurlTransfer.ResponseSink.announcedSizeLimit(for: request)
                && compression == options.compression && self.options.sameBoxedOptions(as: options)
        }

        /// The profile of `request`, or nil when it is not plain (`isPlain`).
        init?(_ request: HTTPRequest) {
            guard Self.isPlain(request) else { return nil }
            let options = request.options
            method = request.method
            https = request.url.hasASCIIPrefix("https:")
            timeout = options.timeout
            connectTimeout = options.connectTimeout
            announcedSizeLimit = CurlTransfer.ResponseSink.announcedSizeLimit(for: request)
            compression = options.compression
            self.options = options
        }
    }
}
