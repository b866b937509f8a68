import Glibc
import Netlayer

// The C ABI of include/netlayer.h: each function decodes its documents, calls the
// core, and encodes the result. No HTTP decisions are made here.

private func handle(_ client: OpaquePointer?) -> ClientHandle? {
    client.map { Unmanaged<ClientHandle>.fromOpaque(UnsafeRawPointer($0)).takeUnretainedValue() }
}

private func output(_ bytes: [UInt8]) -> UnsafeMutablePointer<CChar>? { CString.make(bytes) }

private let reentrantCallMessage =
    "was called from inside a callback or hook of the same client, where waiting would deadlock; use nl_request_async there"

// MARK: - Version

nonisolated(unsafe) private let versionCString: UnsafePointer<CChar> = {
    UnsafePointer(strdup(Netlayer.version)!)
}()

@_cdecl("nl_version")
public func nl_version() -> UnsafePointer<CChar> { versionCString }

@_cdecl("nl_abi_version")
public func nl_abi_version() -> Int32 { Int32(Netlayer.abiVersion) }

// MARK: - Clients

@_cdecl("nl_client_new")
public func nl_client_new(_ configJSON: UnsafePointer<CChar>?,
                          _ errorJSON: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> OpaquePointer? {
    do {
        let json: JSON
        if let configJSON {
            do {
                json = try JSONParser.parse(CString.bytes(configJSON))
            } catch {
                throw NetworkError.invalidRequest("config is not valid JSON: \(error)")
            }
        } else {
            json = .object(JSONObject())
        }
        let client = try ClientHandle(config: try ConfigDocument(json))
        return OpaquePointer(Unmanaged.passRetained(client).toOpaque())
    } catch {
        errorJSON?.pointee = output(RequestResult.ResultDocument.failure(.networkFailure(error as! NetworkError)))
        return nil
    }
}

@_cdecl("nl_client_free")
public func nl_client_free(_ client: OpaquePointer?) {
    guard let client, let handle = handle(client) else { return }
    guard handle.client.shutdown() else { return }  // documented: freeing from a callback would deadlock
    Unmanaged<ClientHandle>.fromOpaque(UnsafeRawPointer(client)).release()
}

// MARK: - Requests

@_cdecl("nl_request")
public func nl_request(_ client: OpaquePointer?, _ endpointJSON: UnsafePointer<CChar>?) -> UnsafeMutablePointer<CChar>? {
    requestResult(client, endpointJSON, function: "nl_request").cString()
}

@_cdecl("nl_request_borrowed")
public func nl_request_borrowed(_ client: OpaquePointer?, _ endpointJSON: UnsafePointer<CChar>?) -> UnsafePointer<CChar>? {
    requestResult(client, endpointJSON, function: "nl_request_borrowed").lend()
}

/// The result document of a blocking request, for `nl_request` and `nl_request_borrowed`.
private func requestResult(_ client: OpaquePointer?, _ endpointJSON: UnsafePointer<CChar>?,
                           function: String) -> CString.OutgoingDocument {
    guard let handle = handle(client) else { return .bytes(RequestResult.ResultDocument.invalid("client is NULL")) }
    guard let endpointJSON else { return .bytes(RequestResult.ResultDocument.invalid("endpoint document is NULL")) }
    if handle.client.isLoopThread { return .bytes(RequestResult.ResultDocument.invalid("\(function) \(reentrantCallMessage)")) }
    return handle.perform(handle.prepare(json: CString.bytes(endpointJSON), what: "endpoint document"))
}

/// The endpoint `nl_call(name, overlay)` performs, or the failure.
private func namedEndpoint(_ handle: ClientHandle, _ name: UnsafePointer<CChar>?,
                           _ overlayJSON: UnsafePointer<CChar>?) -> Result<EndpointDocument, NetworkError> {
    guard let name else { return .failure(.invalidRequest("endpoint name is NULL")) }
    // Decoded strictly: a byte that is not UTF-8 would become U+FFFD and call the
    // endpoint whose name holds that character.
    guard let nameText = String(validating: CString.bytes(name), as: UTF8.self) else {
        return .failure(.invalidRequest("endpoint name is not UTF-8 text"))
    }
    let overlay: JSON
    do {
        overlay = try overlayJSON.map { try JSONParser.parse(CString.bytes($0)) } ?? .object(JSONObject())
    } catch {
        return .failure(.invalidRequest("overlay is not valid JSON: \(error)"))
    }
    do {
        return .success(try handle.client.namedEndpointDocument(nameText, overlay: overlay))
    } catch {
        return .failure(error)
    }
}

@_cdecl("nl_call")
public func nl_call(_ client: OpaquePointer?, _ name: UnsafePointer<CChar>?,
                    _ overlayJSON: UnsafePointer<CChar>?) -> UnsafeMutablePointer<CChar>? {
    callResult(client, name, overlayJSON, function: "nl_call").cString()
}

@_cdecl("nl_call_borrowed")
public func nl_call_borrowed(_ client: OpaquePointer?, _ name: UnsafePointer<CChar>?,
                             _ overlayJSON: UnsafePointer<CChar>?) -> UnsafePointer<CChar>? {
    callResult(client, name, overlayJSON, function: "nl_call_borrowed").lend()
}

/// The result document of a blocking named request, for `nl_call` and `nl_call_borrowed`.
private func callResult(_ client: OpaquePointer?, _ name: UnsafePointer<CChar>?,
                        _ overlayJSON: UnsafePointer<CChar>?, function: String) -> CString.OutgoingDocument {
    guard let handle = handle(client) else { return .bytes(RequestResult.ResultDocument.invalid("client is NULL")) }
    if handle.client.isLoopThread { return .bytes(RequestResult.ResultDocument.invalid("\(function) \(reentrantCallMessage)")) }
    switch namedEndpoint(handle, name, overlayJSON) {
    case .success(let document): return handle.perform(handle.prepare(parsed: document))
    case .failure(let error): return .bytes(RequestResult.ResultDocument.failure(.networkFailure(error)))
    }
}

@_cdecl("nl_request_batch")
public func nl_request_batch(_ client: OpaquePointer?,
                             _ endpointsJSON: UnsafePointer<CChar>?) -> UnsafeMutablePointer<CChar>? {
    guard let handle = handle(client) else { return output(RequestResult.ResultDocument.invalid("client is NULL")) }
    guard let endpointsJSON else { return output(RequestResult.ResultDocument.invalid("endpoints array is NULL")) }
    if handle.client.isLoopThread { return output(RequestResult.ResultDocument.invalid("nl_request_batch \(reentrantCallMessage)")) }
    let parsed: JSON
    do {
        parsed = try JSONParser.parse(CString.bytes(endpointsJSON))
    } catch {
        return output(RequestResult.ResultDocument.invalid("endpoints array is not valid JSON: \(error)"))
    }
    guard case .array(let documents) = parsed else {
        return output(RequestResult.ResultDocument.invalid("nl_request_batch takes a JSON array of endpoint documents, not \(parsed.typeName)"))
    }
    let results = handle.perform(count: documents.count) { handle.prepare(documents[$0]) }
    var w = JSONWriter(capacity: results.reduce(2) { $0 + $1.count + 1 })
    w.raw("[")
    for (i, result) in results.enumerated() {
        if i > 0 { w.raw(",") }
        w.writeRaw(result)
    }
    w.raw("]")
    return output(w.bytes)
}

@_cdecl("nl_request_async")
public func nl_request_async(_ client: OpaquePointer?, _ endpointJSON: UnsafePointer<CChar>?,
                             _ callback: (@convention(c) (UInt64, UnsafePointer<CChar>?, UnsafeMutableRawPointer?) -> Void)?,
                             _ userData: UnsafeMutableRawPointer?) -> UInt64 {
    guard let handle = handle(client), let callback else { return 0 }
    let id = handle.client.newID()
    let prepared: ClientHandle.Prepared = endpointJSON.map { handle.prepare(json: CString.bytes($0), what: "endpoint document", id: id) }
        ?? .failed(RequestResult.ResultDocument.invalid("endpoint document is NULL"))
    handle.start(prepared, id: id, notify: AsyncCallback(function: callback, userData: userData))
    return id
}

@_cdecl("nl_call_async")
public func nl_call_async(_ client: OpaquePointer?, _ name: UnsafePointer<CChar>?, _ overlayJSON: UnsafePointer<CChar>?,
                          _ callback: (@convention(c) (UInt64, UnsafePointer<CChar>?, UnsafeMutableRawPointer?) -> Void)?,
                          _ userData: UnsafeMutableRawPointer?) -> UInt64 {
    guard let handle = handle(client), let callback else { return 0 }
    let id = handle.client.newID()
    let prepared: ClientHandle.Prepared
    switch namedEndpoint(handle, name, overlayJSON) {
    case .success(let document): prepared = handle.prepare(parsed: document, id: id)
    case .failure(let error): prepared = .failed(RequestResult.ResultDocument.failure(.networkFailure(error)))
    }
    handle.start(prepared, id: id, notify: AsyncCallback(function: callback, userData: userData))
    return id
}

@_cdecl("nl_request_start")
public func nl_request_start(_ client: OpaquePointer?, _ endpointJSON: UnsafePointer<CChar>?,
                             _ callbacksPointer: UnsafeRawPointer?) -> UInt64 {
    guard let handle = handle(client), let callbacks = RequestCallbacks(callbacksPointer) else { return 0 }
    let id = handle.client.newID()
    let prepared: ClientHandle.Prepared = endpointJSON.map {
        handle.prepare(json: CString.bytes($0), what: "endpoint document", id: id, callbacks: callbacks)
    } ?? .failed(RequestResult.ResultDocument.invalid("endpoint document is NULL"))
    handle.start(prepared, id: id, notify: callbacks.complete)
    return id
}

@_cdecl("nl_call_start")
public func nl_call_start(_ client: OpaquePointer?, _ name: UnsafePointer<CChar>?, _ overlayJSON: UnsafePointer<CChar>?,
                          _ callbacksPointer: UnsafeRawPointer?) -> UInt64 {
    guard let handle = handle(client), let callbacks = RequestCallbacks(callbacksPointer) else { return 0 }
    let id = handle.client.newID()
    let prepared: ClientHandle.Prepared
    switch namedEndpoint(handle, name, overlayJSON) {
    case .success(let document): prepared = handle.prepare(parsed: document, id: id, callbacks: callbacks)
    case .failure(let error): prepared = .failed(RequestResult.ResultDocument.failure(.networkFailure(error)))
    }
    handle.start(prepared, id: id, notify: callbacks.complete)
    return id
}

@_cdecl("nl_cancel")
public func nl_cancel(_ client: OpaquePointer?, _ id: UInt64) -> Int32 {
    guard let handle = handle(client) else { return 0 }
    return handle.client.cancel(id: id) ? 1 : 0
}

@_cdecl("nl_pause")
public func nl_pause(_ client: OpaquePointer?, _ id: UInt64, _ paused: Int32) -> Int32 {
    guard let handle = handle(client) else { return 0 }
    return handle.client.pause(id: id, paused != 0) ? 1 : 0
}

// MARK: - Hooks

@_cdecl("nl_client_set_hook")
public func nl_client_set_hook(_ client: OpaquePointer?, _ kind: Int32, _ function: HookFunction?,
                               _ userData: UnsafeMutableRawPointer?) -> Int32 {
    guard let handle = handle(client), let kind = ClientHandle.HookKind(rawValue: kind) else { return -1 }
    handle.setHook(kind, function, userData)
    return 0
}

@_cdecl("nl_reply_set")
public func nl_reply_set(_ reply: OpaquePointer?, _ json: UnsafePointer<CChar>?) {
    guard let reply else { return }
    let box = HookReply.from(reply)
    guard let json else {
        box.value = nil
        box.invalid = nil
        return
    }
    do {
        box.value = try JSONParser.parse(CString.bytes(json))
        box.invalid = nil
    } catch {
        box.value = nil
        box.invalid = "is not valid JSON: \(error)"
    }
}

@_cdecl("nl_reply_fail")
public func nl_reply_fail(_ reply: OpaquePointer?, _ kind: UnsafePointer<CChar>?, _ message: UnsafePointer<CChar>?) {
    guard let reply else { return }
    let box = HookReply.from(reply)
    let text = message.map { String(decoding: CString.bytes($0), as: UTF8.self) } ?? "failed by \(box.who)"
    let name = kind.map { String(decoding: CString.bytes($0), as: UTF8.self) } ?? ErrorKind.invalidRequest.rawValue
    if let kind = ErrorKind(rawValue: name), let error = NetworkError(kind: kind, message: text) {
        box.failure = error
    } else {
        box.failure = .invalidRequest("nl_reply_fail kind '\(name.escapedForMessage)' from \(box.who) is not one a hook can"
                                      + " cause (status, resolved, parsing and no_response come only from a response)")
    }
}

@_cdecl("nl_thread_set_interrupt_fd")
public func nl_thread_set_interrupt_fd(_ fd: Int32) -> Int32 {
    Platform.ThreadInterrupt.set(fd)
}

// MARK: - Memory

@_cdecl("nl_free")
public func nl_free(_ pointer: UnsafeMutableRawPointer?) {
    free(pointer)
}

@_cdecl("nl_client_operations")
public func nl_client_operations(_ client: OpaquePointer?) -> UnsafeMutablePointer<CChar>? {
    guard let handle = handle(client) else { return output(RequestResult.ResultDocument.invalid("client is NULL")) }
    return output(JSONWriter.serialize(.object(["operations": .array(handle.client.operations)])))
}
