import CCurl
import Glibc
import Netlayer

// MARK: - Completion queues (nl_queue_*)
//
// A completion queue collects the results of asynchronous requests for a thread that
// waits on a file descriptor (an event loop: asyncio, libuv, epoll). Library threads
// only append bytes under a mutex and, when the queue was empty, signal an eventfd;
// they never run the owner's code. The owner takes every pending result in one
// JSON array, so a language binding pays one wake-up and one parse per batch.

/// The results an `nl_queue` holds, and the eventfd that says whether it holds any.
///
/// Invariant (kept under the lock): the eventfd's counter is non-zero exactly when
/// `pending` is not empty, so it is readable exactly while results wait.
final class CompletionQueue {
    /// Elements of the array `take` returns, comma separated, without the brackets.
    private let pending = Locked<[UInt8]>([])
    let fd: Int32

    init?() {
        fd = nl_eventfd_create()  // non-blocking, close-on-exec
        guard fd >= 0 else { return nil }
    }

    deinit {
        if fd >= 0 { close(fd) }
    }

    /// Appends `{"id":id,"result":document}`; any thread. The element is written
    /// before the lock is taken.
    func push(_ id: UInt64, _ document: UnsafeBufferPointer<UInt8>) {
        var w = JSONWriter(capacity: document.count + 48)
        w.raw("{\"id\":")
        w.write(uint: id)
        w.raw(",\"result\":")
        if document.isEmpty { w.raw("null") } else { w.writeRaw(document) }
        w.raw("}")
        let element = w.bytes
        pending.withLock { bytes in
            let wasEmpty = bytes.isEmpty
            if !wasEmpty { bytes.append(UInt8(ascii: ",")) }
            bytes.append(contentsOf: element)
            if wasEmpty { nl_eventfd_signal(fd) }  // under the lock: see the invariant
        }
    }

    /// Every pending element as a malloc'ed JSON array (`[]` when none); empties the
    /// queue and resets the eventfd. nil only when memory is exhausted.
    func take() -> UnsafeMutablePointer<CChar>? {
        var taken: [UInt8] = []
        pending.withLock { bytes in
            if bytes.isEmpty { return }
            swap(&bytes, &taken)
            nl_eventfd_drain(fd)
        }
        guard let out = malloc(taken.count + 3)?.assumingMemoryBound(to: UInt8.self) else {
            return nil  // the taken results are lost with the memory; nothing else to do
        }
        out[0] = UInt8(ascii: "[")
        if !taken.isEmpty {
            taken.withUnsafeBufferPointer { (out + 1).update(from: $0.baseAddress!, count: $0.count) }
        }
        out[taken.count + 1] = UInt8(ascii: "]")
        out[taken.count + 2] = 0
        return UnsafeMutableRawPointer(out).assumingMemoryBound(to: CChar.self)
    }
}

private func queue(_ pointer: OpaquePointer?) -> CompletionQueue? {
    pointer.map { Unmanaged<CompletionQueue>.fromOpaque(UnsafeRawPointer($0)).takeUnretainedValue() }
}

@_cdecl("nl_queue_new")
public func nl_queue_new() -> OpaquePointer? {
    guard let queue = CompletionQueue() else { return nil }
    return OpaquePointer(Unmanaged.passRetained(queue).toOpaque())
}

@_cdecl("nl_queue_fd")
public func nl_queue_fd(_ pointer: OpaquePointer?) -> Int32 {
    queue(pointer)?.fd ?? -1
}

extension CompletionQueue {
    /// `nl_queue_push`'s address: a request whose callback it is has its result pushed
    /// by `pushLibraryResult`, without the check a caller's text gets.
    static let pushFunction = UInt(bitPattern: unsafeBitCast(nl_queue_push as AsyncCallback.Function, to: UnsafeRawPointer.self))

    /// Pushes a result document the library wrote (valid JSON by construction) to the
    /// queue `userData` names.
    static func pushLibraryResult(_ id: UInt64, _ document: [UInt8], to userData: UnsafeMutableRawPointer?) {
        guard let queue = queue(userData.map { OpaquePointer($0) }) else { return }
        document.withUnsafeBufferPointer { queue.push(id, $0) }
    }
}

@_cdecl("nl_queue_push")
public func nl_queue_push(_ id: UInt64, _ resultJSON: UnsafePointer<CChar>?, _ userData: UnsafeMutableRawPointer?) {
    guard let queue = queue(userData.map { OpaquePointer($0) }) else { return }
    guard let resultJSON else { return queue.push(id, UnsafeBufferPointer(start: nil, count: 0)) }
    // A caller's own text goes into the array nl_queue_take returns: text that is not
    // JSON would make the whole array unreadable, so it becomes a failure document.
    let bytes = CString.bytes(resultJSON)
    if bytes.isEmpty || JSONParser.JSONFastCheck.isValid(bytes) || (try? JSONParser.parse(bytes)) != nil {
        queue.push(id, bytes)
    } else {
        RequestResult.ResultDocument.invalid("nl_queue_push: result_json is not a JSON document").withUnsafeBufferPointer {
            queue.push(id, $0)
        }
    }
}

@_cdecl("nl_queue_take")
public func nl_queue_take(_ pointer: OpaquePointer?) -> UnsafeMutablePointer<CChar>? {
    queue(pointer)?.take()
}

@_cdecl("nl_queue_free")
public func nl_queue_free(_ pointer: OpaquePointer?) {
    guard let pointer else { return }
    Unmanaged<CompletionQueue>.fromOpaque(UnsafeRawPointer(pointer)).release()
}
