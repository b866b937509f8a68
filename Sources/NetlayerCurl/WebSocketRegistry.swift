import CCurl
import Glibc
import NetlayerCore
import NetlayerJSON

/// The WebSocket connections of one transport, and the few threads that open them.
///
/// libcurl makes a WebSocket's connection with `curl_easy_perform` (`CONNECT_ONLY`),
/// which blocks through DNS, TCP, a proxy tunnel and TLS; at most `maxOpeners`
/// threads run those, and leave when no connection waits to be opened. Each connection
/// stays here until it ends, so that `shutdown()` can stop what is still opening.
package final class WebSocketRegistry: @unchecked Sendable {
    static let maxOpeners = 4

    private let gate = Platform.MutexCondition()
    private var connections: [ObjectIdentifier: CurlWebSocket] = [:]
    private var waiting: [CurlWebSocket] = []
    private var openers = 0
    private var shutDown = false

    /// Whether `shutdown()` ran: a connection that reaches the loop after it ends.
    var isShutDown: Bool {
        gate.lock()
        defer { gate.unlock() }
        return shutDown
    }

    /// Keeps `socket` and queues its opening; false after shutdown (nothing queued).
    func open(_ socket: CurlWebSocket) -> Bool {
        gate.lock()
        guard !shutDown else {
            gate.unlock()
            return false
        }
        connections[ObjectIdentifier(socket)] = socket
        waiting.append(socket)
        var start = false
        if openers < Self.maxOpeners {
            openers += 1
            start = true
        }
        gate.unlock()
        if start, !startOpener() {
            gate.lock()
            openers -= 1
            let orphans = openers == 0 ? waiting : []
            if openers == 0 { waiting = [] }
            gate.unlock()
            for orphan in orphans { orphan.connectFailed(.generic("could not start a thread to open the WebSocket", curlCode: -1)) }
        }
        return true
    }

    /// Forgets a connection that ended.
    func remove(_ socket: CurlWebSocket) {
        gate.lock()
        connections[ObjectIdentifier(socket)] = nil
        gate.unlock()
    }

    /// Stops what is opening and waits for the opener threads to leave; what reaches
    /// the loop after this ends as cancelled there.
    func shutdown() {
        gate.lock()
        shutDown = true
        let all = Array(connections.values)
        gate.unlock()
        for socket in all { socket.cancelOpening() }
        gate.lock()
        while openers > 0 { gate.wait() }
        gate.unlock()
    }

    private func startOpener() -> Bool {
        var thread = pthread_t()
        let context = Unmanaged.passRetained(self).toOpaque()
        let rc = pthread_create(&thread, nil, { context in
            let registry = Unmanaged<WebSocketRegistry>.fromOpaque(context!).takeRetainedValue()
            nl_block_signals()
            registry.runOpener()
            return nil
        }, context)
        guard rc == 0 else {
            Unmanaged<WebSocketRegistry>.fromOpaque(context).release()
            return false
        }
        pthread_detach(thread)
        return true
    }

    private func runOpener() {
        while true {
            gate.lock()
            guard !waiting.isEmpty else {
                openers -= 1
                gate.broadcast()
                gate.unlock()
                return
            }
            let next = waiting.removeFirst()
            if shutDown { next.cancelOpening() }
            gate.unlock()
            next.connect()
        }
    }
}
