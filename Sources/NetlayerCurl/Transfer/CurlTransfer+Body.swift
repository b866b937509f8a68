import CCurl
import Glibc
import NetlayerCore
import NetlayerJSON

/// Request bodies (bytes, a file streamed from disk, a multipart form) and progress
/// reports of a `CurlTransfer`.
extension CurlTransfer {
    /// Sets the method's body options. Returns an `io` error for an unreadable file.
    func configureBody(_ easy: UnsafeMutableRawPointer, check: (CURLcode) -> Void) -> NetworkError? {
        let isPost = request.method == .post
        if let parts = request.transfer.multipart {
            guard let mime = curl_mime_init(easy) else { return .generic("curl_mime_init failed", curlCode: 27) }
            self.mime = mime
            // Names and filenames as RFC 9110 quoted strings (\" and \\), which parsers
            // following RFC 9110 decode; libcurl's default, the HTML standard's "%22"
            // with "\" left bare, reaches them as other text. HTTPRequest+Building has refused
            // the control characters a quoted string cannot carry.
            check(nl_curl_setopt_long(easy, CURLOPT_MIME_OPTIONS, Int(CURLMIMEOPT_FORMESCAPE)))
            for part in parts {
                guard let handle = curl_mime_addpart(mime) else { return .generic("curl_mime_addpart failed", curlCode: 27) }
                check(curl_mime_name(handle, part.name))
                switch part.content {
                case .text(var text):
                    // With its length: a NUL is part of the text, not its end.
                    check(text.withUTF8 { bytes in
                        guard let base = bytes.baseAddress, !bytes.isEmpty else { return curl_mime_data(handle, "", 0) }
                        return base.withMemoryRebound(to: CChar.self, capacity: bytes.count) { curl_mime_data(handle, $0, bytes.count) }
                    })
                case .data(let bytes):
                    check(bytes.withUnsafeBufferPointer { buffer in
                        buffer.withMemoryRebound(to: CChar.self) { curl_mime_data(handle, $0.baseAddress, $0.count) }
                    })
                case .file(let path):
                    // Opened now without blocking and read from that descriptor, as
                    // `uploadFrom` is: libcurl's own fopen() of the path, later, would
                    // block for ever on a FIFO put in its place, and read past the size
                    // it sent of a file that grows.
                    let source: UploadSource
                    do {
                        source = try UploadSource(path: path, role: "multipart part '\(part.name.escapedForMessage)'")
                    } catch {
                        return error
                    }
                    source.transfer = self
                    partSources.append(source)
                    check(curl_mime_data_cb(handle, source.size.map { curl_off_t($0) } ?? -1, curlReadPart, curlSeekPart, nil,
                                            Unmanaged.passUnretained(source).toOpaque()))
                    // libcurl names a file part by its path unless told otherwise (as curl_mime_filedata does).
                    if part.filename == nil {
                        check(curl_mime_filename(handle, MultipartPart.fileName(of: path)))
                    }
                }
                if let filename = part.filename { check(curl_mime_filename(handle, filename)) }
                if let type = part.contentType { check(curl_mime_type(handle, type)) }
            }
            check(nl_curl_setopt_ptr(easy, CURLOPT_MIMEPOST, UnsafeRawPointer(mime)))
        } else if let path = request.transfer.uploadFrom {
            let source: UploadSource
            do {
                source = try UploadSource(path: path)
            } catch {
                return error
            }
            upload = source
            // -1 (unknown): libcurl sends the body chunked as the source gives it.
            let size = source.size.map { curl_off_t($0) } ?? -1
            let me = Unmanaged.passUnretained(self).toOpaque()
            check(nl_curl_setopt_read(easy, CURLOPT_READFUNCTION, curlReadUpload))
            check(nl_curl_setopt_ptr(easy, CURLOPT_READDATA, me))
            if isPost {
                check(nl_curl_setopt_off(easy, CURLOPT_POSTFIELDSIZE_LARGE, size))
            } else {
                // UPLOAD means PUT to libcurl; CUSTOMREQUEST (set for the method) wins.
                check(nl_curl_setopt_long(easy, CURLOPT_UPLOAD, 1))
                check(nl_curl_setopt_off(easy, CURLOPT_INFILESIZE_LARGE, size))
            }
        } else if let payload = request.body ?? (isPost ? [] : nil) {
            check(nl_curl_setopt_off(easy, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(payload.count)))
            if payload.isEmpty {
                check(nl_curl_setopt_str(easy, CURLOPT_COPYPOSTFIELDS, ""))
            } else {
                check(payload.withUnsafeBytes { nl_curl_setopt_ptr(easy, CURLOPT_COPYPOSTFIELDS, $0.baseAddress) })
            }
        }
        return nil
    }

    fileprivate func readUpload(into buffer: UnsafeMutableRawPointer, count: Int) -> Int {
        guard let upload else { return Int(CURL_READFUNC_ABORT) }
        return read(upload, into: buffer, count: count)
    }

    /// A read of `source` for libcurl: pauses the transfer while it has nothing to
    /// give, and keeps the failure that aborts it.
    fileprivate func read(_ source: UploadSource, into buffer: UnsafeMutableRawPointer, count: Int) -> Int {
        switch source.read(into: buffer, count: count) {
        case .bytes(let n): return n
        case .end: return 0
        case .wait(let wait):
            pause(until: wait)
            return nl_readfunc_pause
        case .failed(let error):
            uploadFailure = error
            return Int(CURL_READFUNC_ABORT)
        }
    }

    /// libcurl's progress callback: notices a cancel of a blocking transfer and
    /// reports progress at most every 50 ms. False stops the transfer.
    func progress(downloaded: Int64, ofDownload: Int64, uploaded: Int64, ofUpload: Int64) -> Bool {
        if isCancelRequested { return false }
        guard let handler = request.transfer.progress else { return true }
        let now = Platform.MonotonicClock.now()
        guard now &- lastProgress.at >= 50_000_000 else { return true }
        var control = TransferControl.proceed
        var reported = false
        if uploaded != lastProgress.upload, uploaded > 0 || ofUpload > 0 {
            control = handler(TransferProgress(direction: .upload, done: uploaded, total: ofUpload))
            reported = true
        }
        if case .proceed = control, downloaded != lastProgress.download, downloaded > 0 || ofDownload > 0 {
            control = handler(TransferProgress(direction: .download, done: downloaded, total: ofDownload))
            reported = true
        }
        if reported { lastProgress = (now, uploaded, downloaded) }
        switch control {
        case .proceed: return true
        case .cancel: cancelledByHandler = true
        case .fail(let error): uploadFailure = error
        }
        return false
    }

    /// The closing progress report of a finished transfer, sent whatever the throttle.
    func reportFinalProgress(_ easy: UnsafeMutableRawPointer) {
        guard let handler = request.transfer.progress else { return }
        var uploaded: curl_off_t = 0
        var downloaded: curl_off_t = 0
        nl_curl_getinfo_off(easy, CURLINFO_SIZE_UPLOAD_T, &uploaded)
        nl_curl_getinfo_off(easy, CURLINFO_SIZE_DOWNLOAD_T, &downloaded)
        if uploaded > 0 { _ = handler(TransferProgress(direction: .upload, done: Int64(uploaded), total: Int64(uploaded))) }
        _ = handler(TransferProgress(direction: .download, done: Int64(downloaded), total: Int64(downloaded)))
    }
}

private func curlReadPart(_ buffer: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int,
                          _ context: UnsafeMutableRawPointer?) -> Int {
    guard let buffer, let context else { return Int(CURL_READFUNC_ABORT) }
    let source = Unmanaged<UploadSource>.fromOpaque(context).takeUnretainedValue()
    guard let transfer = source.transfer else { return Int(CURL_READFUNC_ABORT) }
    return transfer.read(source, into: buffer, count: size * count)
}

private func curlSeekPart(_ context: UnsafeMutableRawPointer?, _ offset: curl_off_t, _ origin: Int32) -> Int32 {
    guard let context, origin == SEEK_SET else { return nl_seekfunc_cantseek }
    let source = Unmanaged<UploadSource>.fromOpaque(context).takeUnretainedValue()
    return source.seek(to: Int64(offset)) ? nl_seekfunc_ok : nl_seekfunc_cantseek
}

private func curlReadUpload(_ buffer: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int,
                            _ context: UnsafeMutableRawPointer?) -> Int {
    guard let buffer, let context else { return Int(CURL_READFUNC_ABORT) }
    let transfer = Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue()
    return transfer.readUpload(into: buffer, count: size * count)
}
