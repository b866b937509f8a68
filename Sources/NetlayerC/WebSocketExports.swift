import Glibc
import Netlayer

// The WebSocket functions of include/netlayer.h: read the document, open through the
// core client, and translate events and errors. No protocol decisions are made here.

private func clientHandle(_ client: OpaquePointer?) -> ClientHandle? {
    client.map { Unmanaged<ClientHandle>.fromOpaque(UnsafeRawPointer($0)).takeUnretainedValue() }
}

private func socketHandle(_ socket: OpaquePointer?) -> WebSocketHandle? {
    socket.map { Unmanaged<WebSocketHandle>.fromOpaque(UnsafeRawPointer($0)).takeUnretainedValue() }
}

/// Stores the error document of `error` in `out` (when not NULL) and returns -1.
private func failed(_ error: NetworkError, _ out: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    out?.pointee = CString.make(RequestResult.ResultDocument.failure(.networkFailure(error)))
    return -1
}

@_cdecl("nl_websocket_open")
public func nl_websocket_open(_ client: OpaquePointer?, _ documentJSON: UnsafePointer<CChar>?,
                              _ callbacksPointer: UnsafeRawPointer?,
                              _ errorJSON: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> OpaquePointer? {
    guard let handle = clientHandle(client) else {
        _ = failed(.invalidRequest("client is NULL"), errorJSON)
        return nil
    }
    guard let callbacks = WebSocketHandle.Callbacks(callbacksPointer) else {
        _ = failed(.invalidRequest("callbacks is NULL or its version is not one this library knows"), errorJSON)
        return nil
    }
    guard let documentJSON else {
        _ = failed(.invalidRequest("websocket document is NULL"), errorJSON)
        return nil
    }
    do {
        let json: JSON
        do {
            json = try JSONParser.parse(CString.bytes(documentJSON))
        } catch {
            throw NetworkError.invalidRequest("websocket document is not valid JSON: \(error)")
        }
        let document = try WebSocketDocument(json)
        // The handle's address goes to the callbacks, which may run (on the loop's
        // thread) before this returns; they wait for the connection (`open`).
        let socket = WebSocketHandle()
        let pointer = OpaquePointer(Unmanaged.passRetained(socket).toOpaque())
        let handlers = WebSocketHandle.handlers(callbacks, socket: pointer, redactedQuery: handle.redactedQuery)
        do {
            try socket.open { () throws(NetworkError) in
                try handle.client.openWebSocket(document.endpoint, options: document.options, handlers: handlers)
            }
        } catch {
            Unmanaged<WebSocketHandle>.fromOpaque(UnsafeRawPointer(pointer)).release()
            throw error
        }
        return pointer
    } catch {
        _ = failed(error as! NetworkError, errorJSON)
        return nil
    }
}

@_cdecl("nl_websocket_send")
public func nl_websocket_send(_ socket: OpaquePointer?, _ kind: Int32, _ data: UnsafeRawPointer?, _ length: Int,
                              _ errorJSON: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    guard let handle = socketHandle(socket) else { return failed(.invalidRequest("websocket is NULL"), errorJSON) }
    guard let kind = WebSocketMessageKind(rawValue: kind) else {
        return failed(.invalidRequest("kind \(kind) is not NL_WS_TEXT (1) or NL_WS_BINARY (2)"), errorJSON)
    }
    guard data != nil || length == 0 else { return failed(.invalidRequest("data is NULL with a length of \(length)"), errorJSON) }
    // A size_t past Int.max (a negative length cast to size_t, say): no buffer is that large.
    guard length >= 0 else {
        return failed(.invalidRequest("length \(UInt(bitPattern: length)) is larger than any buffer (a size_t over \(Int.max))"), errorJSON)
    }
    do {
        try handle.connection.send(kind, UnsafeRawBufferPointer(start: data, count: length))
        return 0
    } catch {
        return failed(error, errorJSON)
    }
}

@_cdecl("nl_websocket_close")
public func nl_websocket_close(_ socket: OpaquePointer?, _ code: Int32, _ reason: UnsafePointer<CChar>?,
                               _ errorJSON: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    guard let handle = socketHandle(socket) else { return failed(.invalidRequest("websocket is NULL"), errorJSON) }
    let text = reason.map { String(validating: CString.bytes($0), as: UTF8.self) } ?? ""
    guard let text else { return failed(.invalidRequest("the close reason is not UTF-8"), errorJSON) }
    do {
        try handle.connection.close(code: Int(code), reason: text)
        return 0
    } catch {
        return failed(error, errorJSON)
    }
}

@_cdecl("nl_websocket_pause")
public func nl_websocket_pause(_ socket: OpaquePointer?, _ paused: Int32) -> Int32 {
    guard let handle = socketHandle(socket) else { return -1 }
    handle.connection.pauseReading(paused != 0)
    return 0
}

@_cdecl("nl_websocket_free")
public func nl_websocket_free(_ socket: OpaquePointer?) {
    guard let socket, let handle = socketHandle(socket) else { return }
    handle.connection.abandon()
    Unmanaged<WebSocketHandle>.fromOpaque(UnsafeRawPointer(socket)).release()
}
