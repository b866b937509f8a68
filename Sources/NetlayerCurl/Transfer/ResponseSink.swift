import CCurl
import Glibc
import NetlayerCore
import NetlayerJSON

extension CurlTransfer {
    /// Where a response body goes as libcurl hands it over: memory (bounded by
    /// `maxResponseBytes`), a `DownloadFile` (bounded by `maxDownloadBytes`, unlimited by
    /// default), or a stream parser feeding the caller's handler. An error status always
    /// goes to memory, so its body can be reported and no file or stream sees it. Used on
    /// one thread.
    package final class ResponseSink {
        private enum Target { case undecided, memory, file, stream }

        /// What a write asks of the transfer.
        enum Outcome {
            case proceed
            case stop
            /// Pause until the download target takes bytes again.
            case wait(TransferWait)
        }

        /// The request whose body this is: its transfer options say where the body goes.
        private let request: HTTPRequest
        private let memoryLimit: Int
        private let downloadLimit: Int?
        private var target = Target.undecided
        private(set) var body: [UInt8] = []
        private(set) var exceededLimit = false
        /// A local failure (a write to the download file, a stream handler's error) that
        /// ended the transfer.
        private(set) var failure: NetworkError?
        /// The stream handler asked to stop.
        private(set) var cancelledByHandler = false
        private(set) var events = 0
        private var file: DownloadFile?
        private var parser: StreamParser?

        init(for request: HTTPRequest) throws(NetworkError) {
            self.request = request
            memoryLimit = request.options.maxResponseBytes
            downloadLimit = request.options.maxDownloadBytes
            if let path = request.transfer.downloadTo { file = try DownloadFile(path: path) }
            if let mode = request.transfer.stream {
                parser = StreamParser(mode: mode, maxItemBytes: request.options.maxStreamItemBytes)
            }
        }

        deinit { discard() }

        /// Body bytes taken so far.
        var bytes: Int64 { target == .file ? file?.written ?? 0 : Int64(body.count) }

        /// Whether a write may pause the transfer (a download to a device or FIFO).
        var mayPause: Bool { file?.writesThrough ?? false }

        /// The limit a too large body passed, for the error message.
        var limitDescription: String {
            if request.transfer.downloadTo != nil, target != .memory, let downloadLimit { return "maxDownloadBytes (\(downloadLimit))" }
            return "maxResponseBytes (\(memoryLimit))"
        }

        /// CURLOPT_MAXFILESIZE_LARGE for `request` (0: none), which refuses a body whose
        /// Content-Length passes the limit before it arrives. A download's error status goes
        /// to memory, so its value is the larger of the two limits.
        ///
        /// The limits count decoded bytes, which `write` holds exactly; this is only the
        /// early refusal. A HEAD response announces a body it does not carry, so none is
        /// refused; and when compression is offered, the length announced may be an
        /// encoded one, which for a body just under the limit can be a little longer than
        /// it (gzip's header and trailer, stored blocks): the early refusal leaves room for
        /// what any coding adds to a body that does not compress.
        static func announcedSizeLimit(for request: HTTPRequest) -> Int {
            let options = request.options
            guard request.method != .head else { return 0 }
            let limit: Int
            if request.transfer.downloadTo != nil {
                guard let download = options.maxDownloadBytes else { return 0 }
                limit = max(download, options.maxResponseBytes)
            } else {
                limit = options.maxResponseBytes
            }
            guard options.compression, limit < Int.max / 2 else { return limit }
            return limit + limit / 1024 + 1024
        }

        /// The transfer whose cancel stops a stream's events, also between the events of
        /// one write (a fast server's read holds thousands). Set for streams only; the
        /// transfer owns this sink and outlives it.
        unowned(unsafe) var cancelSource: CurlTransfer?

        /// Takes the next bytes of the body.
        func write(_ data: UnsafeRawBufferPointer, statusIsAcceptable: () -> Bool) -> Outcome {
            if target == .undecided {
                // Only where a download or a stream goes depends on the status (asking for
                // it is a call into libcurl): a body for memory goes there whatever it is.
                target = file == nil && parser == nil ? .memory
                    : !statusIsAcceptable() ? .memory : file != nil ? .file : .stream
                if target == .stream, parser?.mode == .lines { parser?.charset = cancelSource?.responseCharset }
            }
            switch target {
            case .undecided, .memory:
                guard body.count + data.count <= memoryLimit else {
                    exceededLimit = true
                    return .stop
                }
                body.append(contentsOf: data)
            case .file:
                let file = file!
                if let downloadLimit, file.written + Int64(file.newBytes(of: data.count)) > Int64(downloadLimit) {
                    exceededLimit = true
                    return .stop
                }
                switch file.write(data) {
                case .done: break
                case .wait(let wait): return .wait(wait)
                case .failed(let error):
                    failure = error
                    return .stop
                }
            case .stream:
                // A stream is not kept, so it is not bounded by maxResponseBytes; only the
                // line or event being assembled is, by maxStreamItemBytes.
                guard deliver(parser!.feed(data)) else { return .stop }
                if let parser, parser.tooLarge {
                    let item = parser.mode == .sse ? "a server-sent event or one of its lines" : "a line"
                    failure = .tooLarge("\(item) of the stream is larger than maxStreamItemBytes (\(parser.maxItemBytes) bytes)")
                    return .stop
                }
                return .proceed
            }
            return .proceed
        }

        /// Ends a transfer that completed: flushes the stream, or completes the download
        /// when the status is acceptable. Returns the path of a download.
        func complete(statusIsAcceptable: Bool) throws(NetworkError) -> String? {
            if target == .stream, var parser {
                _ = deliver(parser.finish())
                self.parser = parser
            }
            guard statusIsAcceptable, target == .file || target == .undecided, let file else {
                discard()
                return nil
            }
            try file.complete()
            return file.path
        }

        /// Drops a partial download. Safe to call more than once.
        func discard() {
            file?.discard()
        }

        private func deliver(_ newEvents: [StreamEvent]) -> Bool {
            for event in newEvents {
                if cancelSource?.isCancelRequested == true { return false }
                events += 1
                switch request.transfer.onStreamEvent?(event) ?? .proceed {
                case .proceed: continue
                case .cancel: cancelledByHandler = true
                case .fail(let error): failure = error
                }
                return false
            }
            return true
        }
    }
}
