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

    private var mutex = pthread_mutex_t()
    private var condition = pthread_cond_t()
    private var connections: [ObjectIdentifier: CurlWebSocket] = [:]
    private var waiting: [CurlWebSocket] = []
    private var openers = 0
    private var shutDown = false

    init() {
        pthread_mutex_init(&mutex, nil)
        pthread_cond_init(&condition, nil)
    }

    deinit {
        pthread_cond_destroy(&condition)
        pthread_mutex_destroy(&mutex)
    }

    /// Whether `shutdown()` ran: a connection that reaches the loop after it ends.
    var isShutDown: Bool {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        return shutDown
    }

    /// Keeps `socket` and queues its opening; false after shutdown (nothing queued).
    func open(_ socket: CurlWebSocket) -> Bool {
        pthread_mutex_lock(&mutex)
        guard !shutDown else {
            pthread_mutex_unlock(&mutex)
            return false
        }
        connections[ObjectIdentifier(socket)] = socket
        waiting.append(socket)
        var start = false
        if openers < Self.maxOpeners {
            openers += 1
            start = true
        }
        pthread_mutex_unlock(&mutex)
        if start, !startOpener() {
            pthread_mutex_lock(&mutex)
            openers -= 1
            let orphans = openers == 0 ? waiting : []
            if openers == 0 { waiting = [] }
            pthread_mutex_unlock(&mutex)
            for orphan in orphans { orphan.connectFailed(.generic("could not start a thread to open the WebSocket", curlCode: -1)) }
        }
        return true
    }

    /// Forgets a connection that ended.
    func remove(_ socket: CurlWebSocket) {
        pthread_mutex_lock(&mutex)
        connections[ObjectIdentifier(socket)] = nil
        pthread_mutex_unlock(&mutex)
    }

    /// Stops what is opening and waits for the opener threads to leave; what reaches
    /// the loop after this ends as cancelled there.
    func shutdown() {
        pthread_mutex_lock(&mutex)
        shutDown = true
        let all = Array(connections.values)
        pthread_mutex_unlock(&mutex)
        for socket in all { socket.cancelOpening() }
        pthread_mutex_lock(&mutex)
        while openers > 0 { pthread_cond_wait(&condition, &mutex) }
        pthread_mutex_unlock(&mutex)
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
            pthread_mutex_lock(&mutex)
            guard !waiting.isEmpty else {
                openers -= 1
                pthread_cond_broadcast(&condition)
                pthread_mutex_unlock(&mutex)
                return
            }
            let next = waiting.removeFirst()
            if shutDown { next.cancelOpening() }
            pthread_mutex_unlock(&mutex)
            next.connect()
        }
    }
}
