import Glibc
import NetlayerJSON

extension HTTPRequest {
    /// What a request sends from and receives into beyond in-memory bytes: multipart
    /// forms, files, progress reports and streamed bodies.
    public struct TransferOptions: Sendable {
        /// A `multipart/form-data` body built by libcurl's MIME API; file parts are
        /// streamed from disk.
        public var multipart: [MultipartPart]?
        /// A file streamed as the raw body.
        public var uploadFrom: String?
        /// Where the body goes instead of memory: written to a temporary file in the same
        /// folder and renamed on success, so a failed download never leaves a partial
        /// file under this name.
        public var downloadTo: String?
        /// Called at most every 50 ms while data moves, and once at the end.
        public var progress: (@Sendable (TransferProgress) -> TransferControl)?
        /// Deliver the body incrementally instead of keeping it.
        public var stream: StreamMode?
        /// Receives each streamed event.
        public var onStreamEvent: (@Sendable (StreamEvent) -> TransferControl)?
        /// Answer from, and store into, the service's response cache (`ResponseCaching`; GET and HEAD only).
        public var useCache = false

        public init(multipart: [MultipartPart]? = nil, uploadFrom: String? = nil, downloadTo: String? = nil,
                    progress: (@Sendable (TransferProgress) -> TransferControl)? = nil, stream: StreamMode? = nil,
                    onStreamEvent: (@Sendable (StreamEvent) -> TransferControl)? = nil, useCache: Bool = false) {
            self.multipart = multipart
            self.uploadFrom = uploadFrom
            self.downloadTo = downloadTo
            self.progress = progress
            self.stream = stream
            self.onStreamEvent = onStreamEvent
            self.useCache = useCache
        }

        var isEmpty: Bool {
            multipart == nil && uploadFrom == nil && downloadTo == nil && progress == nil && stream == nil
        }
    }
}

/// `HTTPRequest.TransferOptions` by the name it is known by.
public typealias TransferOptions = HTTPRequest.TransferOptions

/// What a progress or stream handler wants next.
public enum TransferControl: Sendable {
    case proceed
    /// Stop the transfer: it fails with `cancelled`.
    case cancel
    /// Stop the transfer with this error.
    case fail(NetworkError)
}

extension HTTPRequest {
    /// One part of a multipart form.
    public struct MultipartPart: Sendable, Hashable {
        public enum Content: Sendable, Hashable {
            case text(String)
            case file(path: String)
            case data([UInt8])
        }

        public var name: String
        public var content: Content
        public var filename: String?
        public var contentType: String?

        public init(name: String, content: Content, filename: String? = nil, contentType: String? = nil) {
            self.name = name
            self.content = content
            self.filename = filename
            self.contentType = contentType
        }
        /// The name a file part without `filename` is sent with: the last component of its
        /// path, as `curl -F name=@path` names it.
        package static func fileName(of path: String) -> String {
            String(path.split(separator: "/").last ?? Substring(path))
        }
    }
}

/// `HTTPRequest.MultipartPart` by the name it is known by.
public typealias MultipartPart = HTTPRequest.MultipartPart

/// Bytes moved so far; `total` is 0 when unknown.
public struct TransferProgress: Sendable, Hashable {
    public enum Direction: String, Sendable { case upload, download }
    public var direction: Direction
    public var done: Int64
    public var total: Int64

    public init(direction: Direction, done: Int64, total: Int64) {
        self.direction = direction
        self.done = done
        self.total = total
    }
}

/// How a streamed body is cut into events.
public enum StreamMode: String, Sendable, CaseIterable {
    /// Server-sent events (`text/event-stream`).
    case sse
    /// One event per line, without the line ending.
    case lines
    /// One event per block of bytes as it arrives.
    case chunks
}

/// One piece of a streamed body.
public enum StreamEvent: Sendable, Hashable {
    case serverSent(event: String, data: String, lastEventId: String, retry: Int?)
    case line(String)
    case chunk([UInt8])
}

extension TransferOptions {
    /// Why the body cannot be sent a second time (a redirect that keeps it, a retry):
    /// a file it streams is not a regular file, so a second read would wait for a new
    /// writer or send other bytes; nil when it can be. curl fails such a repeat at
    /// once too (exit 65, it cannot rewind). Looks at the files only when there are any.
    package func whyBodyIsNotRepeatable() -> String? {
        guard uploadFrom != nil || multipart != nil else { return nil }
        var paths: [String] = []
        if let uploadFrom { paths.append(uploadFrom) }
        for part in multipart ?? [] {
            if case .file(let path) = part.content { paths.append(path) }
        }
        for path in paths {
            var info = stat()
            guard stat(path, &info) == 0 else { continue }  // gone: the next open says why
            let type = info.st_mode & S_IFMT
            if type != S_IFREG {
                return "its body comes from '\(path.escapedForMessage)', \(RegularFile.describe(type)), which cannot be read again"
            }
        }
        return nil
    }
}
