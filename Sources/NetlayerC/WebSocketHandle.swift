import Glibc
import Netlayer

/// The object behind an `nl_websocket *`: one connection and the C callbacks its
/// events go to.
final class WebSocketHandle: @unchecked Sendable {
    /// Guards `attached`. `open` holds it until the connection is attached: a callback
    /// may run on the loop's thread before `nl_websocket_open` returns (on_open, then
    /// an `nl_websocket_send` of it), and it waits for the connection instead of
    /// finding none. Recursive, so that no thread can wait for itself.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t> = {
        let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        var attributes = pthread_mutexattr_t()
        pthread_mutexattr_init(&attributes)
        pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_RECURSIVE))
        pthread_mutex_init(mutex, &attributes)
        pthread_mutexattr_destroy(&attributes)
        return mutex
    }()
    private var attached: (any WebSocketConnection)?
    private static let notOpen = PlaceholderConnection()

    init() {}

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Attaches what `open` returns, holding the lock while it runs.
    func open(_ open: () throws(NetworkError) -> any WebSocketConnection) throws(NetworkError) {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        attached = try open()
    }

    /// The connection, once `open` has attached it.
    var connection: any WebSocketConnection {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return attached ?? Self.notOpen
    }

    /// The `nl_websocket_callbacks` of one connection, read from C.
    struct Callbacks: @unchecked Sendable {
        typealias Opened = @convention(c) (OpaquePointer?, UnsafePointer<CChar>?, UnsafeMutableRawPointer?) -> Void
        typealias Message = @convention(c) (OpaquePointer?, Int32, UnsafePointer<CChar>?, Int, UnsafeMutableRawPointer?) -> Void
        typealias Failed = @convention(c) (OpaquePointer?, UnsafePointer<CChar>?, UnsafeMutableRawPointer?) -> Void
        typealias Closed = @convention(c) (OpaquePointer?, Int32, UnsafePointer<CChar>?, UnsafeMutableRawPointer?) -> Void

        let opened: Opened?
        let message: Message?
        let failed: Failed?
        let closed: Closed?
        let userData: UnsafeMutableRawPointer?

        /// The `nl_websocket_callbacks` versions this library reads.
        static let knownVersions: ClosedRange<Int32> = 1...1

        /// Reads the struct field by field at C's offsets (`int version`, then five
        /// pointers at the pointer alignment); nil for NULL or an unknown version.
        init?(_ pointer: UnsafeRawPointer?) {
            guard let pointer else { return nil }
            guard Self.knownVersions.contains(pointer.loadUnaligned(as: Int32.self)) else { return nil }
            let size = MemoryLayout<UnsafeRawPointer?>.stride
            let first = (MemoryLayout<Int32>.size + size - 1) / size * size
            func field(_ index: Int) -> UnsafeRawPointer? {
                pointer.load(fromByteOffset: first + index * size, as: UnsafeRawPointer?.self)
            }
            opened = field(0).map { unsafeBitCast($0, to: Opened.self) }
            message = field(1).map { unsafeBitCast($0, to: Message.self) }
            failed = field(2).map { unsafeBitCast($0, to: Failed.self) }
            closed = field(3).map { unsafeBitCast($0, to: Closed.self) }
            userData = UnsafeMutableRawPointer(mutating: field(4))
        }
    }

    /// The handlers that call `callbacks` with `socket` (the `nl_websocket *`, which
    /// outlives every call: `nl_websocket_free` stops them first).
    static func handlers(_ callbacks: Callbacks, socket: OpaquePointer, redactedQuery: Set<String>) -> WebSocketHandlers {
        let pointer = UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(socket)))
        @Sendable func ws() -> OpaquePointer? { OpaquePointer(bitPattern: pointer) }
        return WebSocketHandlers(opened: { opening in
            guard let function = callbacks.opened else { return }
            var headers = JSONObject()
            for field in opening.response.headers { headers[field.name] = .string(field.value) }
            let document = JSON.object(["protocol": opening.subprotocol.map { .string($0) } ?? .null,
                                        "status": .int(Int64(opening.response.statusCode)), "headers": .object(headers)])
            CString.withTemporary(JSONWriter.serialize(document)) { text in
                ForkSafePoint.atRest { function(ws(), text, callbacks.userData) }
            }
        }, message: { kind, bytes in
            guard let function = callbacks.message else { return }
            ForkSafePoint.atRest {
                function(ws(), kind.rawValue, bytes.baseAddress?.assumingMemoryBound(to: CChar.self), bytes.count,
                         callbacks.userData)
            }
        }, failed: { error, response in
            guard let function = callbacks.failed else { return }
            let document = RequestResult.ResultDocument.failure(DataTransferError.networkFailure(error).redactingQuery(redactedQuery),
                                                  response: response)
            CString.withTemporary(document) { text in ForkSafePoint.atRest { function(ws(), text, callbacks.userData) } }
        }, closed: { code, reason in
            guard let function = callbacks.closed else { return }
            CString.withTemporary(Array(reason.utf8)) { text in
                ForkSafePoint.atRest { function(ws(), Int32(code), text, callbacks.userData) }
            }
        })
    }
}

/// What a handle answers with until its connection is attached: refuses everything.
final class PlaceholderConnection: WebSocketConnection, Sendable {
    func send(_ kind: WebSocketMessageKind, _ bytes: UnsafeRawBufferPointer) throws(NetworkError) {
        throw .notConnected("the WebSocket is not open")
    }
    func close(code: Int, reason: String) throws(NetworkError) {}
    func abandon() {}
    func pauseReading(_ paused: Bool) {}
}
