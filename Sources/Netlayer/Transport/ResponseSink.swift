import CCurl
import Glibc

/// Where a response body goes as libcurl hands it over: memory (bounded by
/// `maxResponseBytes`), a temporary file renamed into place on success, or a stream
/// parser feeding the caller's handler. An error status always goes to memory, so
/// its body can be reported and no file or stream sees it. Used on one thread.
final class ResponseSink {
    private enum Target { case undecided, memory, file, stream }

    private let transfer: TransferOptions
    private let limit: Int
    private var target = Target.undecided
    private(set) var body: [UInt8] = []
    private(set) var bytes: Int64 = 0
    private(set) var exceededLimit = false
    /// A local failure (a write to the download file, a stream handler's error) that
    /// ended the transfer.
    private(set) var failure: NetworkError?
    /// The stream handler asked to stop.
    private(set) var cancelledByHandler = false
    private(set) var events = 0
    private var fd: Int32 = -1
    private var temporaryPath: String?
    private var parser: StreamParser?

    init(transfer: TransferOptions, limit: Int, streamItemLimit: Int) throws(NetworkError) {
        self.transfer = transfer
        self.limit = limit
        if let path = transfer.downloadTo { try createTemporaryFile(for: path) }
        if let mode = transfer.stream { parser = StreamParser(mode: mode, maxItemBytes: streamItemLimit) }
    }

    deinit { discard() }

    /// Takes the next bytes of the body; false stops the transfer.
    func write(_ data: UnsafeRawBufferPointer, statusIsAcceptable: () -> Bool) -> Bool {
        if target == .undecided {
            let acceptable = statusIsAcceptable()
            target = !acceptable ? .memory : fd >= 0 ? .file : parser != nil ? .stream : .memory
        }
        switch target {
        case .undecided, .memory:
            guard body.count + data.count <= limit else {
                exceededLimit = true
                return false
            }
            body.append(contentsOf: data)
        case .file:
            guard bytes + Int64(data.count) <= Int64(limit) else {
                exceededLimit = true
                return false
            }
            var offset = 0
            while offset < data.count {
                let n = Glibc.write(fd, data.baseAddress! + offset, data.count - offset)
                if n < 0 {
                    if errno == EINTR { continue }
                    failure = .io("downloadTo '\(transfer.downloadTo ?? "")': write failed: \(String(cString: strerror(errno)))")
                    return false
                }
                offset += n
            }
        case .stream:
            // A stream is not kept, so it is not bounded by maxResponseBytes; only the
            // line or event being assembled is, by maxStreamItemBytes.
            guard deliver(parser!.feed(data)) else { return false }
            if let parser, parser.tooLarge {
                let item = parser.mode == .sse ? "a server-sent event or one of its lines" : "a line"
                failure = .tooLarge("\(item) of the stream is larger than maxStreamItemBytes (\(parser.maxItemBytes) bytes)")
                return false
            }
            return true
        }
        bytes += Int64(data.count)
        return true
    }

    /// Ends a transfer that completed: flushes the stream, or moves the download into
    /// place when the status is acceptable. Returns the final path of a download.
    func complete(statusIsAcceptable: Bool) throws(NetworkError) -> String? {
        if target == .stream, var parser {
            _ = deliver(parser.finish())
            self.parser = parser
        }
        guard statusIsAcceptable, target == .file || target == .undecided, fd >= 0,
              let final = transfer.downloadTo, let temporary = temporaryPath
        else {
            discard()
            return nil
        }
        let failed = fsync(fd) != 0
        close(fd)
        fd = -1
        if failed || rename(temporary, final) != 0 {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            temporaryPath = nil
            throw .io("downloadTo '\(final)': could not move the download into place: \(reason)")
        }
        temporaryPath = nil
        return final
    }

    /// Drops a partial download. Safe to call more than once.
    func discard() {
        if fd >= 0 {
            close(fd)
            fd = -1
        }
        if let temporaryPath {
            unlink(temporaryPath)
            self.temporaryPath = nil
        }
    }

    private func deliver(_ newEvents: [StreamEvent]) -> Bool {
        for event in newEvents {
            events += 1
            switch transfer.onStreamEvent?(event) ?? .proceed {
            case .proceed: continue
            case .cancel: cancelledByHandler = true
            case .fail(let error): failure = error
            }
            return false
        }
        return true
    }

    /// A temporary file next to `path` ("dir/.name.part-XXXXXX"), so the final rename
    /// stays on one file system and is atomic.
    private func createTemporaryFile(for path: String) throws(NetworkError) {
        let slash = path.lastIndex(of: "/")
        let directory = slash.map { String(path[..<$0]) } ?? "."
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        var template = Array("\(directory.isEmpty ? "/" : directory)/.\(name).part-XXXXXX".utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { nl_mkstemp_cloexec($0.baseAddress!) }
        guard descriptor >= 0 else {
            throw .io("downloadTo '\(path)': cannot create a file in '\(directory)': \(String(cString: strerror(errno)))")
        }
        fd = descriptor
        temporaryPath = String(cString: template)
    }
}
