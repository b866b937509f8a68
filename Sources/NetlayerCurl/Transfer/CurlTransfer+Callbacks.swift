import CCurl
import Glibc
import NetlayerCore

// The C functions libcurl calls for a transfer (on the thread driving its multi handle),
// each handing what it gets to the transfer its context points at.

func curlProgress(_ context: UnsafeMutableRawPointer?, _ dltotal: curl_off_t, _ dlnow: curl_off_t,
                  _ ultotal: curl_off_t, _ ulnow: curl_off_t) -> Int32 {
    guard let context else { return 0 }
    let transfer = Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue()
    if transfer.silenceEnded() { return 1 }
    return transfer.progress(downloaded: Int64(dlnow), ofDownload: Int64(dltotal), uploaded: Int64(ulnow),
                             ofUpload: Int64(ultotal)) ? 0 : 1
}

func curlDebug(_ easy: UnsafeMutableRawPointer?, _ type: curl_infotype, _ data: UnsafeMutablePointer<CChar>?,
               _ size: Int, _ context: UnsafeMutableRawPointer?) -> Int32 {
    guard type == CURLINFO_HEADER_OUT, let data, let context, size > 0 else { return 0 }
    Unmanaged<CurlTransfer>.fromOpaque(context)._withUnsafeGuaranteedRef {
        $0.noteSent(headerBlock: UnsafeRawBufferPointer(start: data, count: size))
    }
    return 0
}

func curlWriteBody(_ data: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int,
                   _ context: UnsafeMutableRawPointer?) -> Int {
    guard let context else { return 0 }
    let length = size * count
    guard length > 0, let data else { return 0 }
    // The transfer outlives its callbacks: no retain and release per call.
    return Unmanaged<CurlTransfer>.fromOpaque(context)._withUnsafeGuaranteedRef {
        $0.appendBody(UnsafeRawBufferPointer(start: data, count: length))
    }
}

func curlWriteHeader(_ data: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int,
                     _ context: UnsafeMutableRawPointer?) -> Int {
    guard let context else { return 0 }
    let length = size * count
    if length > 0, let data, !Unmanaged<CurlTransfer>.fromOpaque(context)._withUnsafeGuaranteedRef({
        $0.appendHeaderLine(UnsafeRawBufferPointer(start: data, count: length))
    }) {
        return 0  // libcurl ends the transfer with CURLE_WRITE_ERROR
    }
    return length
}
