import Netlayer

/// `nl_callback` and its `user_data`, carried to a library thread.
struct AsyncCallback: @unchecked Sendable {
    typealias Function = @convention(c) (UInt64, UnsafePointer<CChar>?, UnsafeMutableRawPointer?) -> Void

    let function: Function
    let userData: UnsafeMutableRawPointer?

    func callAsFunction(_ id: UInt64, _ document: [UInt8]) {
        if UInt(bitPattern: unsafeBitCast(function, to: UnsafeRawPointer.self)) == CompletionQueue.pushFunction {
            return CompletionQueue.pushLibraryResult(id, document, to: userData)
        }
        // The NUL-terminated copy lives only for the call: on the stack when small.
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: document.count + 1) { text in
            document.withUnsafeBytes { bytes in
                UnsafeMutableRawBufferPointer(text).copyMemory(from: bytes)
            }
            text[document.count] = 0
            ForkSafePoint.atRest { function(id, text.baseAddress, userData) }
        }
    }
}

/// The callbacks of one request started with `nl_request_start` or `nl_call_start`:
/// its progress and stream events go to the code that started it, not to the
/// client-wide hooks.
struct RequestCallbacks: @unchecked Sendable {
    /// `nl_event_fn`.
    typealias EventFunction = @convention(c) (UInt64, UnsafePointer<CChar>?, OpaquePointer?,
                                              UnsafeMutableRawPointer?) -> Void

    let complete: AsyncCallback
    let progress: EventFunction?
    let stream: EventFunction?
    let userData: UnsafeMutableRawPointer?

    /// The `nl_request_callbacks` versions this library reads.
    static let knownVersions: ClosedRange<Int32> = 1...1

    /// Reads an `nl_request_callbacks` struct; nil when it cannot be used (NULL,
    /// no `on_complete`, an unknown version). Read field by field at C's offsets:
    /// `int version` and then four pointers, each at the pointer alignment.
    init?(_ pointer: UnsafeRawPointer?) {
        guard let pointer else { return nil }
        let version = pointer.loadUnaligned(as: Int32.self)
        guard Self.knownVersions.contains(version) else { return nil }
        let size = MemoryLayout<UnsafeRawPointer?>.stride
        let first = (MemoryLayout<Int32>.size + size - 1) / size * size
        func field(_ index: Int) -> UnsafeRawPointer? {
            pointer.load(fromByteOffset: first + index * size, as: UnsafeRawPointer?.self)
        }
        guard let complete = field(0) else { return nil }
        self.complete = AsyncCallback(function: unsafeBitCast(complete, to: AsyncCallback.Function.self),
                                      userData: UnsafeMutableRawPointer(mutating: field(3)))
        progress = field(1).map { unsafeBitCast($0, to: EventFunction.self) }
        stream = field(2).map { unsafeBitCast($0, to: EventFunction.self) }
        userData = UnsafeMutableRawPointer(mutating: field(3))
    }

    /// Calls `function` with one event of request `id` and returns what its answer asks.
    func deliver(_ function: EventFunction, id: UInt64, _ fields: JSONObject, who: String) -> TransferControl {
        let reply = HookReply.collect(.object(fields), who: who) { function(id, $0, $1, userData) }
        return TransferControl(reply.outcome, who: who)
    }
}
