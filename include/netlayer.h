/*
 * netlayer.h — the C interface of Netlayer, an HTTP API client over libcurl.
 *
 * Every request and every result is a JSON document (UTF-8, NUL-terminated).
 * The documents are described in docs/documents.md; the contract they follow
 * is versioned by NL_ABI_VERSION.
 *
 * Conventions used on every function below:
 *  - Ownership: a `char *` returned by the library is owned by the caller and
 *    must be released with nl_free(); a `const char *` it returns stays the
 *    library's, for as long as the function says. A `const char *` argument is
 *    borrowed: the library copies what it needs before the call returns.
 *  - Threads: an nl_client may be used from any number of threads at once.
 *  - Errors: bad input never crashes the process; it yields a result document
 *    with error kind "invalid_request" and a message naming the key or byte
 *    offset at fault.
 */
#ifndef NETLAYER_H
#define NETLAYER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) || defined(__clang__)
#  define NL_EXTERN __attribute__((visibility("default")))
#else
#  define NL_EXTERN
#endif

/** Version of this header; compare with nl_version() at run time.
 *  Copies of the file VERSION (scripts/set-version writes them). */
#define NL_VERSION_MAJOR 0
#define NL_VERSION_MINOR 1
#define NL_VERSION_PATCH 0
#define NL_VERSION_STRING "0.1.0"

/** Version of the C ABI and JSON contract; compare with nl_abi_version(). */
#define NL_ABI_VERSION 1

/**
 * An HTTP client: configuration and one connection pool (one libcurl multi
 * handle) that all its requests share, blocking and asynchronous alike. A
 * client holds no thread until it needs one: an event-loop thread starts with
 * the first work a caller's thread cannot do (an asynchronous request or a
 * batch, for one), a delivery thread, which runs completion callbacks, with
 * the first callback or RESOLVE_ERROR hook event it runs, and a thread for LOG
 * hook events with the first of them. Opaque;
 * create with nl_client_new(), destroy with nl_client_free().
 */
typedef struct nl_client nl_client;

/**
 * The library's version, "MAJOR.MINOR.PATCH".
 *
 * Ownership: static storage; never free it.
 * Threads: any thread, at any time.
 * Errors: none.
 */
NL_EXTERN const char *nl_version(void);

/**
 * The ABI version the library implements; equals NL_ABI_VERSION when the
 * header and the library match.
 *
 * Threads: any thread, at any time.
 */
NL_EXTERN int nl_abi_version(void);

/**
 * Creates a client from a config document (see docs/documents.md, "Config").
 *
 * @param config_json  borrowed; NULL means all defaults, like "{}".
 * @param error_json   optional; on failure, when not NULL, receives an error
 *                     document {"ok":false,"error":{...}} that the caller
 *                     frees with nl_free(). Left untouched on success.
 * @return a new client the caller destroys with nl_client_free(), or NULL when
 *         the config is invalid (kind "invalid_request", the message names the
 *         key) or the transport cannot start (kind "generic").
 * Threads: any thread.
 */
NL_EXTERN nl_client *nl_client_new(const char *config_json, char **error_json);

/**
 * Destroys a client: cancels what is in flight, delivers every pending
 * asynchronous callback (as kind "cancelled" when it had not finished), stops
 * the event loop and returns only when no callback of this client can run any
 * more. NULL is a no-op.
 *
 * Ownership: `client` is invalid after the call.
 * Threads: any thread except one of the library's own (from inside a callback
 * of the same client the call returns at once and does nothing, since waiting
 * there would deadlock). No other call may use `client` concurrently with or
 * after this one.
 */
NL_EXTERN void nl_client_free(nl_client *client);

/**
 * Performs one request described by an endpoint document and waits for it.
 *
 * The request runs on the calling thread, which drives the client's
 * connections itself, while nothing else of the client is in flight;
 * otherwise (asynchronous requests, another thread's blocking call, or an
 * ADAPT, RETRY, PROGRESS or STREAM hook set) the client's event-loop thread
 * runs it while the caller waits. Either way it uses the client's one
 * connection pool.
 *
 * @param client         the client; NULL yields an "invalid_request" result.
 * @param endpoint_json  borrowed endpoint document (docs/documents.md).
 * @return a result document (success or failure) the caller frees with
 *         nl_free(); NULL only when memory is exhausted.
 * Threads: any thread, concurrently on one client. Called from inside a
 * callback of the same client it returns "invalid_request" instead of
 * deadlocking.
 */
NL_EXTERN char *nl_request(nl_client *client, const char *endpoint_json);

/**
 * Performs the named endpoint of the config ("endpoints"), with `overlay_json`
 * (an endpoint document, all keys optional, plus "params" to fill the
 * {placeholders} of the path) merged over it, and waits for it.
 *
 * A name the config's "endpoints" do not have is looked up among the operations
 * of its "openapi" document: then "params" are the operation's parameters (path,
 * query, header, cookie) and "body" its request body, checked against the
 * document before anything is sent (docs/documents.md, "OpenAPI operations").
 *
 * @param name          borrowed; an unknown name is "invalid_request".
 * @param overlay_json  borrowed; NULL means "{}".
 * @return a result document the caller frees with nl_free(); NULL only when
 *         memory is exhausted.
 * Threads: as nl_request().
 */
NL_EXTERN char *nl_call(nl_client *client, const char *name, const char *overlay_json);

/**
 * nl_request(), with the result document lent instead of given: for callers
 * that copy or parse the document at once (language bindings, tight loops),
 * it spares the nl_free() call per request.
 *
 * @return the same result document nl_request() returns, owned by the library:
 *         do not free it. It stays valid until the calling thread's next call
 *         of nl_request_borrowed() or nl_call_borrowed(), or the thread's exit;
 *         each thread has its own. NULL only when memory (or the process's
 *         thread-specific keys) is exhausted.
 * Threads: as nl_request().
 */
NL_EXTERN const char *nl_request_borrowed(nl_client *client, const char *endpoint_json);

/**
 * nl_call(), with the result document lent as by nl_request_borrowed().
 *
 * @return the same result document nl_call() returns, owned by the library and
 *         valid until the calling thread's next nl_request_borrowed() or
 *         nl_call_borrowed() call, or its exit. NULL as for
 *         nl_request_borrowed().
 * Threads: as nl_request().
 */
NL_EXTERN const char *nl_call_borrowed(nl_client *client, const char *name, const char *overlay_json);

/**
 * Lists what nl_call() can call: the config's named endpoints, then the
 * operations of its "openapi" document, as
 * `{"operations": [{"name", "method", "path", "source", "params", "body", ...}]}`
 * (docs/documents.md, "Discovery").
 *
 * @param client  the client; NULL yields an "invalid_request" failure document.
 * @return a JSON document the caller frees with nl_free(); NULL only when
 *         memory is exhausted.
 * Threads: any thread, also inside a callback; the list never changes.
 */
NL_EXTERN char *nl_client_operations(nl_client *client);

/**
 * Runs a JSON array of endpoint documents concurrently (at most the config's
 * "maxConcurrent" at once) on the client's event-loop thread, over its one
 * connection pool, and waits for all of them.
 *
 * @param endpoints_json_array  borrowed JSON array.
 * @return a JSON array of result documents in input order, which the caller
 *         frees with nl_free(); if the argument is not an array, a single
 *         "invalid_request" result document. NULL only when memory is
 *         exhausted.
 * Threads: as nl_request().
 */
NL_EXTERN char *nl_request_batch(nl_client *client, const char *endpoints_json_array);

/**
 * Receives the result of an asynchronous request.
 *
 * @param id           the id nl_request_async() returned.
 * @param result_json  the result document; borrowed, valid only during the call.
 * @param user_data    the pointer given to nl_request_async().
 */
typedef void (*nl_callback)(uint64_t id, const char *result_json, void *user_data);

/**
 * Starts a request and returns at once; `callback` runs exactly once for the
 * returned id, on a library thread, with a success, an error or kind
 * "cancelled". Problems with the endpoint document are reported through the
 * callback too. Completion callbacks run one at a time, on the client's
 * delivery thread beside its event loop, where a slow callback delays other
 * callbacks, not other transfers; while an ADAPT, RETRY, PROGRESS or STREAM hook
 * is set they run on the event loop, where a slow one delays the client's
 * transfers too (and their timeouts with them): keep callbacks short.
 *
 * @param endpoint_json  borrowed; copied before the call returns.
 * @param user_data      passed to `callback` untouched; the caller keeps it
 *                       alive until the callback has run.
 * @return a non-zero id, unique in the process (across clients), or 0 when
 *         `client` or `callback` is NULL (then no callback runs).
 * Threads: any thread, including from inside a callback.
 */
NL_EXTERN uint64_t nl_request_async(nl_client *client, const char *endpoint_json,
                                    nl_callback callback, void *user_data);

/**
 * The asynchronous nl_call(): the named endpoint with `overlay_json` merged over
 * it, started like nl_request_async(). An unknown name or a bad overlay is
 * reported through the callback.
 *
 * @param name, overlay_json  borrowed; copied before the call returns.
 * @return a non-zero id, or 0 when `client` or `callback` is NULL.
 * Threads: any thread, including from inside a callback.
 */
NL_EXTERN uint64_t nl_call_async(nl_client *client, const char *name, const char *overlay_json,
                                 nl_callback callback, void *user_data);

/**
 * Cancels an asynchronous request.
 *
 * @return 1 if the request was still in flight (its callback then reports kind
 *         "cancelled"), 0 if it had already completed, is unknown, or
 *         `client` is NULL.
 * Threads: any thread, including from inside a callback.
 */
NL_EXTERN int nl_cancel(nl_client *client, uint64_t id);

/**
 * Stops (`paused` non-zero) or resumes (0) reading the response of an
 * asynchronous request from its connection, so that a consumer that cannot keep
 * up with a stream makes the server wait instead of filling memory.
 *
 * A pause made inside the request's own on_stream or on_progress callback (or
 * its STREAM or PROGRESS hook) takes effect before the next read: what follows
 * is at most the other events of the bytes already read (one read of at most
 * 16 KiB, and what it decompresses to). From another thread it takes effect
 * when the event loop next runs. A request paused before it starts, or between
 * its redirects and retries, starts paused. While paused, a stream's `timeout`
 * (which bounds the server's silences) does not count; `deadline` does, and so
 * does the `timeout` of a request that is not a stream. A connection paused for long may
 * be closed by the server; that ends the request as any broken connection does.
 *
 * @return 1 if the request was still in flight, 0 if it had already completed,
 *         is unknown, or `client` is NULL.
 * Threads: any thread, including from inside a callback.
 */
NL_EXTERN int nl_pause(nl_client *client, uint64_t id, int paused);

/*
 * Completion queues
 * -----------------
 * For programs that run an event loop (asyncio, libuv, epoll): results of
 * asynchronous requests are collected in a queue instead of running user code
 * on a library thread, and the loop learns about them from a file descriptor.
 * Pass nl_queue_push as the callback and the queue as user_data:
 *
 *     nl_queue *q = nl_queue_new();
 *     uint64_t id = nl_request_async(client, endpoint_json, nl_queue_push, q);
 *     ... poll nl_queue_fd(q) for reading; when readable:
 *     char *results = nl_queue_take(q);   // [{"id":<id>,"result":{...}}, ...]
 *     ... handle them ...; nl_free(results);
 *     ... once no request can push any more (see nl_queue_free):
 *     nl_queue_free(q);
 *
 * One queue may serve any number of requests and clients. Library threads
 * never block on the queue's owner: a push only copies the document under a
 * mutex.
 */

/** A queue of results of asynchronous requests. Opaque. */
typedef struct nl_queue nl_queue;

/**
 * Creates an empty completion queue.
 *
 * @return a queue the caller destroys with nl_queue_free(), or NULL when
 *         memory or file descriptors are exhausted.
 * Threads: any thread.
 */
NL_EXTERN nl_queue *nl_queue_new(void);

/**
 * The queue's file descriptor (an eventfd): readable (poll/epoll POLLIN)
 * exactly while results are waiting, i.e. from the push that makes the queue non-empty
 * until the nl_queue_take() that empties it. Level-triggered; do not read it
 * yourself.
 *
 * Ownership: the queue owns the descriptor; it is valid until nl_queue_free()
 * (remove it from your poll set first).
 * @return the descriptor (non-blocking, close-on-exec), or -1 for NULL.
 * Threads: any thread.
 */
NL_EXTERN int nl_queue_fd(const nl_queue *queue);

/**
 * Appends a result to the queue: an nl_callback, meant to be passed to
 * nl_request_async() or nl_call_async() with the queue as `user_data`.
 * It copies `result_json` and makes nl_queue_fd() readable; it never blocks
 * for long and never calls user code.
 *
 * @param result_json  borrowed; copied before the call returns (NULL is
 *                     queued as the JSON value null; text that is not JSON as
 *                     a failure document of kind invalid_request, so that
 *                     nl_queue_take's array stays JSON).
 * @param queue        an nl_queue *; NULL is a no-op.
 * Threads: any thread, concurrently with every other queue function except
 * nl_queue_free().
 */
NL_EXTERN void nl_queue_push(uint64_t id, const char *result_json, void *queue);

/**
 * Takes every result waiting in the queue, in the order they were pushed, as
 * one JSON array `[{"id": <request id>, "result": <result document>}, ...]`
 * (`[]` when none waits), and empties the queue.
 *
 * @return a new string the caller frees with nl_free(); NULL when `queue` is
 *         NULL or memory is exhausted.
 * Threads: any thread; concurrent takes each get different results.
 */
NL_EXTERN char *nl_queue_take(nl_queue *queue);

/**
 * Destroys a queue, its descriptor and the results still in it. NULL is a
 * no-op.
 *
 * Call it only when nothing can push any more: every request started with
 * this queue has called back (its result was pushed), or every client that
 * ran such requests has been freed (nl_client_free() delivers every pending
 * callback before it returns). A push after the free is undefined behaviour.
 *
 * Ownership: `queue` is invalid after the call.
 * Threads: any thread, but not concurrently with another call on the queue.
 */
NL_EXTERN void nl_queue_free(nl_queue *queue);

/** A hook's way to answer; valid only during the hook call. Opaque. */
typedef struct nl_reply nl_reply;

/** Hook kinds for nl_client_set_hook(). Values are never renumbered. */
enum {
    NL_HOOK_ADAPT = 1,         /**< before every attempt: may add headers or cancel */
    NL_HOOK_RETRY = 2,         /**< after a failed attempt: may ask for a retry */
    NL_HOOK_RESOLVE_ERROR = 3, /**< on a status failure: may name it (kind "resolved") */
    NL_HOOK_LOG = 4,           /**< every log event, secrets redacted */
    NL_HOOK_PROGRESS = 5,      /**< transfer progress of requests with "progress": true */
    NL_HOOK_STREAM = 6         /**< body events of requests with "stream" set */
};

/**
 * A hook: receives an event document and may answer with nl_reply_set().
 *
 * @param event_json  borrowed; valid only during the call.
 * @param reply       where to answer; valid only during the call. Returning
 *                    without calling nl_reply_set() accepts the default.
 * @param user_data   the pointer given to nl_client_set_hook().
 *
 * Hooks run on a library thread, never on the thread that made the request:
 * ADAPT, RETRY, PROGRESS and STREAM hooks on the client's event loop (while
 * one is set, every request of the client runs there, and a slow hook delays
 * every transfer of the client); RESOLVE_ERROR and LOG hooks on a thread of
 * their own beside the delivery thread (LOG hooks on the event loop while one of
 * the others is set), so they leave a blocking request on its caller's thread.
 * A hook set while a blocking request is under way on its caller's thread is
 * called for it on that thread of their own too, the caller waiting for the
 * reply. A blocking call returns after its LOG events, waiting behind hook calls
 * only, never behind a completion callback. A blocking
 * call on the same client from inside a hook returns "invalid_request". The
 * events and replies of each kind are described in docs/documents.md
 * ("Hooks").
 */
typedef void (*nl_hook_fn)(const char *event_json, nl_reply *reply, void *user_data);

/**
 * Sets, replaces or (with fn == NULL) removes the hook of `kind`. Safe while
 * requests are in flight: each hook call uses the hook set at that moment.
 * Replacing or removing a hook returns once no call of the hook it replaced
 * is running on another thread, so the caller may then free its user_data;
 * from inside a hook call it does not wait (two hooks removing each other
 * would wait for each other), and that hook's own call is still running.
 *
 * @param user_data  passed to `fn` untouched; the caller keeps it alive while
 *                   the hook is set (and, when it was removed or replaced from
 *                   inside a hook, until that hook call has returned).
 * @return 0 on success; -1 for a NULL client or an unknown kind.
 * Threads: any thread, including from inside a hook. Do not hold a lock that
 *          the hook takes while removing it from another thread.
 */
NL_EXTERN int nl_client_set_hook(nl_client *client, int kind, nl_hook_fn fn, void *user_data);

/**
 * Answers a hook with a JSON document. The library copies `json`; a second
 * call replaces the first, NULL withdraws the answer. A reply that is not valid
 * JSON of the expected shape fails only the request concerned, with kind
 * "invalid_request".
 *
 * Ownership: `json` is borrowed. `reply` is the hook's argument; NULL is a no-op.
 * Threads: only from inside the hook that received `reply`.
 */
NL_EXTERN void nl_reply_set(nl_reply *reply, const char *json);

/**
 * Fails the request a hook or event callback is about to decide on, with an
 * error of `kind` and `message` (the result document's error.kind and
 * error.message). Takes precedence over any nl_reply_set() answer of the same
 * call.
 *
 * Works from the ADAPT, RETRY, RESOLVE_ERROR, PROGRESS and STREAM hooks and
 * from the on_progress and on_stream callbacks of nl_request_start(); from
 * the LOG hook, which decides nothing, it is ignored.
 *
 * @param kind     borrowed; NULL means "invalid_request". One of the contract's
 *                 kinds that a hook can cause: "invalid_request", "cancelled",
 *                 "url_generation", "not_connected", "timeout", "tls",
 *                 "too_large", "io", "protocol", "generic". Any other value
 *                 (including "status", "resolved", "parsing" and
 *                 "no_response", which only a response or a resolver can
 *                 cause) fails the request with "invalid_request" naming it.
 * @param message  borrowed and copied; NULL means "failed by <the hook's name>".
 * Ownership: `reply` is the hook's argument; NULL is a no-op.
 * Threads: only from inside the hook or callback that received `reply`.
 */
NL_EXTERN void nl_reply_fail(nl_reply *reply, const char *kind, const char *message);

/*
 * Per-request callbacks
 * ---------------------
 * nl_request_start() and nl_call_start() start a request like
 * nl_request_async(), with callbacks and user data of its own: its progress
 * and stream events go to them instead of the client-wide PROGRESS and
 * STREAM hooks, so every event reaches the code that started the request,
 * whether it arrives before or after the id is returned. Fill the struct
 * from NL_REQUEST_CALLBACKS_INIT so that fields added later start as NULL:
 *
 *     nl_request_callbacks cb = NL_REQUEST_CALLBACKS_INIT;
 *     cb.on_complete = done;  cb.on_stream = on_event;  cb.user_data = state;
 *     uint64_t id = nl_request_start(client, "{\"path\":\"events\",\"stream\":\"sse\"}", &cb);
 */

/**
 * Receives one progress or stream event of a request started with
 * nl_request_start().
 *
 * @param id          the request's id (the value nl_request_start() returns,
 *                    also when the event arrives before it has returned).
 * @param event_json  borrowed, valid only during the call: the same document
 *                    the PROGRESS or STREAM hook receives (docs/documents.md).
 * @param reply       answer {"cancel": true} with nl_reply_set() to stop the
 *                    transfer (kind "cancelled"), or fail it with
 *                    nl_reply_fail(); valid only during the call.
 * @param user_data   the callbacks' user_data.
 *
 * Runs on the client's event loop; the events of one request run one at a
 * time, in order, and all of them before its on_complete. A slow one delays
 * the client's other transfers: keep it short, or hand the work to a thread.
 */
typedef void (*nl_event_fn)(uint64_t id, const char *event_json, nl_reply *reply, void *user_data);

/** The version of nl_request_callbacks this header describes. */
#define NL_REQUEST_CALLBACKS_VERSION 1

/** The callbacks of one request; see nl_request_start(). */
typedef struct nl_request_callbacks {
    /** NL_REQUEST_CALLBACKS_VERSION (set by NL_REQUEST_CALLBACKS_INIT). */
    int version;
    /** Required: the result, exactly once, as for nl_request_async(). */
    nl_callback on_complete;
    /** Optional: progress events of an endpoint with "progress": true; when
     *  NULL they go to the client's PROGRESS hook. */
    nl_event_fn on_progress;
    /** Optional: stream events of an endpoint with "stream" set; when NULL
     *  they go to the client's STREAM hook. */
    nl_event_fn on_stream;
    /** Passed untouched to every callback above. */
    void *user_data;
} nl_request_callbacks;

/** Initializer for nl_request_callbacks: version set, everything else NULL. */
#define NL_REQUEST_CALLBACKS_INIT { NL_REQUEST_CALLBACKS_VERSION, 0, 0, 0, 0 }

/**
 * Starts a request with callbacks of its own and returns at once; otherwise
 * as nl_request_async(): `on_complete` runs exactly once for the returned id,
 * on a library thread, after every event of the request; problems with the
 * document are reported through it.
 *
 * @param endpoint_json  borrowed; copied before the call returns.
 * @param callbacks      borrowed; copied before the call returns. The caller
 *                       keeps `user_data` alive until on_complete has run.
 * @return a non-zero id, or 0 (and no callback runs) when `client`,
 *         `callbacks` or `callbacks->on_complete` is NULL, or
 *         `callbacks->version` is not one this library knows.
 * Threads: any thread, including from inside a callback or hook.
 */
NL_EXTERN uint64_t nl_request_start(nl_client *client, const char *endpoint_json,
                                    const nl_request_callbacks *callbacks);

/**
 * The named endpoint (as nl_call()) started with callbacks of its own (as
 * nl_request_start()). An unknown name or a bad overlay is reported through
 * `on_complete`.
 *
 * @return as nl_request_start().
 * Threads: any thread, including from inside a callback or hook.
 */
NL_EXTERN uint64_t nl_call_start(nl_client *client, const char *name, const char *overlay_json,
                                 const nl_request_callbacks *callbacks);

/*
 * Interrupting blocking calls
 * ---------------------------
 * A program that handles signals with a self-pipe (Python's
 * signal.set_wakeup_fd(), or a C handler that writes to a pipe) gives the
 * pipe's read end to the threads that make blocking calls; a signal then
 * ends the call within a fraction of a second instead of when its timeout
 * expires.
 */

/**
 * Sets the interrupt descriptor of the calling thread: while this thread is
 * in a blocking call (nl_request, nl_call, their _borrowed variants,
 * nl_request_batch), a byte becoming readable on `fd` cancels the call's
 * requests, which fail with kind "cancelled" and a message saying they were
 * interrupted. The library drains (reads and discards) what is waiting on
 * `fd` when a blocking call starts and when it interrupts one, so use a
 * non-blocking descriptor that only the signal handler writes to. A
 * descriptor that can never deliver a byte again (closed, or a pipe whose
 * write end is closed) is ignored.
 *
 * @param fd  a readable, non-blocking descriptor, or -1 to remove it. The
 *            caller keeps it open while it is set.
 * @return the descriptor set before (-1 when none).
 * Threads: any thread; the setting belongs to the calling thread only (a
 * child of fork() keeps the forking thread's setting).
 */
NL_EXTERN int nl_thread_set_interrupt_fd(int fd);

/*
 * WebSockets
 * ----------
 * A WebSocket connection (RFC 6455) made with the client's settings: the same
 * base URL, query, default headers, `auth`, cookie jar, TLS settings, proxy
 * (a CONNECT tunnel), Unix socket, `resolve`, timeouts and LOG and ADAPT
 * hooks as its requests. The connection runs on the client's event loop: an
 * idle one costs its socket and a few buffers, no thread. Every connection
 * ends with exactly one on_close; see docs/documents.md ("WebSockets").
 *
 *     nl_websocket_callbacks cb = NL_WEBSOCKET_CALLBACKS_INIT;
 *     cb.on_message = got;  cb.on_close = closed;  cb.user_data = state;
 *     nl_websocket *ws = nl_websocket_open(client, "{\"path\":\"chat\"}", &cb, &err);
 *     nl_websocket_send(ws, NL_WS_TEXT, "hi", 2, NULL);
 *     ...
 *     nl_websocket_close(ws, 1000, "bye", NULL);   (on_close follows)
 *     nl_websocket_free(ws);
 */

/** One WebSocket connection; opened with nl_websocket_open(). */
typedef struct nl_websocket nl_websocket;

/** Message kinds: text (UTF-8) and binary. */
#define NL_WS_TEXT 1
#define NL_WS_BINARY 2

/** The version of nl_websocket_callbacks this header describes. */
#define NL_WEBSOCKET_CALLBACKS_VERSION 1

/**
 * The callbacks of one connection; each is optional (NULL: that event is
 * dropped). They run on a library thread (the client's event loop; inside
 * nl_client_free(), on its caller's thread), one at a time and in order:
 * on_open at most once, before any on_message; on_error at most once; on_close
 * exactly once and last, also after a failure or a handshake that never
 * completed. Every pointer they receive is valid only during the call. They
 * may call nl_websocket_send(), nl_websocket_close() and nl_websocket_free()
 * (of any connection) and nl_request_async(); a blocking call of the same
 * client (nl_request, ...) returns an invalid_request error. While one runs,
 * no other transfer of the client progresses: keep them short.
 */
typedef struct nl_websocket_callbacks {
    /** NL_WEBSOCKET_CALLBACKS_VERSION (set by NL_WEBSOCKET_CALLBACKS_INIT). */
    int version;
    /** The handshake succeeded. `open_json`: {"protocol": the subprotocol the
     *  server chose or null, "status": 101, "headers": {...}}. */
    void (*on_open)(nl_websocket *ws, const char *open_json, void *user_data);
    /** A whole message (its fragments joined): `kind` NL_WS_TEXT (valid UTF-8,
     *  not NUL-terminated) or NL_WS_BINARY, `length` bytes at `data`. */
    void (*on_message)(nl_websocket *ws, int kind, const char *data, size_t length, void *user_data);
    /** The connection failed. `error_json` is a result document
     *  ({"ok": false, "error": {"kind": K, "message": M, ...}}, with "status" and
     *  "headers" when the server answered the handshake with another status). */
    void (*on_error)(nl_websocket *ws, const char *error_json, void *user_data);
    /** The connection ended: `code` is the server's close code (1005 when its
     *  close frame had none, 1006 when the connection ended without one) and
     *  `reason` its reason (UTF-8, NUL-terminated). */
    void (*on_close)(nl_websocket *ws, int code, const char *reason, void *user_data);
    /** Passed untouched to every callback above. */
    void *user_data;
} nl_websocket_callbacks;

/** Initializer for nl_websocket_callbacks: version set, everything else NULL. */
#define NL_WEBSOCKET_CALLBACKS_INIT { NL_WEBSOCKET_CALLBACKS_VERSION, 0, 0, 0, 0, 0 }

/**
 * Opens a WebSocket and returns at once; the handshake and everything after it
 * are reported through `callbacks`.
 *
 * @param client          the client whose settings and event loop it uses.
 * @param websocket_json  borrowed; copied before the call returns. A websocket
 *                        document: `path` (a `ws://` or `wss://` URL with
 *                        `isFullPath`), `query`, `encodedQuery`, `headers`, `auth`,
 *                        `timeout` (of the handshake), and `protocols`,
 *                        `maxMessageBytes`, `maxQueuedBytes`, `idleTimeout`,
 *                        `pingInterval`, `closeTimeout`, `compression`,
 *                        `fragmentBytes` (docs/documents.md).
 * @param callbacks       borrowed; copied before the call returns. The caller
 *                        keeps `user_data` alive until on_close has run or
 *                        nl_websocket_free() has returned.
 * @param error_json      when not NULL and the call fails, receives an error
 *                        document (kind invalid_request naming the key); the
 *                        caller frees it with nl_free().
 * @return a new handle, which the caller frees with nl_websocket_free(); NULL
 *         (and no callback runs) when `client` or the document is NULL or
 *         invalid, `callbacks` is NULL or of an unknown version, or the client's
 *         event loop cannot start its thread (kind generic).
 * Threads: any thread, including from inside a callback or hook. A callback
 * may run before this returns (on the event loop's thread); a call it makes
 * with the handle waits until this has returned.
 */
NL_EXTERN nl_websocket *nl_websocket_open(nl_client *client, const char *websocket_json,
                                          const nl_websocket_callbacks *callbacks, char **error_json);

/**
 * Queues a message and returns at once; messages go out in the order they were
 * queued, those queued before on_open after the handshake.
 *
 * @param kind        NL_WS_TEXT (`data` must be UTF-8) or NL_WS_BINARY.
 * @param data        borrowed; copied before the call returns (NULL when
 *                    `length` is 0).
 * @param error_json  when not NULL and the call fails, receives an error
 *                    document; the caller frees it with nl_free().
 * @return 0, or -1 when the message cannot be queued: kind invalid_request (bad
 *         arguments, text that is not UTF-8), not_connected (the connection is
 *         closing or closed) or too_large (the queue would hold more than
 *         `maxQueuedBytes` not yet written to the socket: the server is not
 *         reading; nothing is queued).
 * Threads: any thread, concurrently with other calls on the same connection,
 * including from inside a callback.
 */
NL_EXTERN int nl_websocket_send(nl_websocket *ws, int kind, const void *data, size_t length, char **error_json);

/**
 * Starts the closing handshake after the messages already queued: a close frame
 * with `code` (1000, or 3000-4999) and `reason` (at most 123 bytes of UTF-8;
 * NULL for none). on_close reports the server's answer; without one within
 * `closeTimeout`, on_error reports kind timeout and on_close 1006. A connection
 * already closing or closed is left as it is (0).
 *
 * @param error_json  as for nl_websocket_send().
 * @return 0, or -1 (kind invalid_request) for a code or reason that cannot be sent.
 * Threads: any thread, including from inside a callback.
 */
NL_EXTERN int nl_websocket_close(nl_websocket *ws, int code, const char *reason, char **error_json);

/**
 * Stops (`paused` non-zero) or resumes (0) reading from the connection's socket:
 * a consumer that cannot keep up makes the server wait (TCP flow control) instead
 * of holding its messages. Pausing takes effect at the next read, also from inside
 * on_message: on_message still runs for the messages already read (at most what
 * one read of 4 KiB, or the read that ended the handshake, held), and a message
 * partly read stays so. While paused, the server's pings are not answered, no
 * ping is sent, and `idleTimeout` and `pingInterval` do not count; a broken socket
 * is noticed when reading resumes.
 * nl_websocket_close() reads again (its answer must be read). May be called
 * before on_open (the handshake is read regardless).
 *
 * @return 0, or -1 when `ws` is NULL.
 * Threads: any thread, including from inside a callback.
 */
NL_EXTERN int nl_websocket_pause(nl_websocket *ws, int paused);

/**
 * Frees the handle. A connection still open ends at once (a close frame with
 * 1001 is sent if the socket takes it, without waiting for the answer). When it
 * returns, no callback of the connection runs any more, except the one it is
 * called from. Free every handle, before or after nl_client_free() (which ends
 * every connection of the client, with on_error kind cancelled and on_close
 * 1006). NULL is a no-op.
 *
 * Threads: any thread, including from inside a callback.
 */
NL_EXTERN void nl_websocket_free(nl_websocket *ws);

/*
 * fork()
 * ------
 * A client may be used in the child of fork(): on its first use there, it
 * starts a new event loop and new connections of its own (nothing the
 * parent's sockets carry is touched), keeps its config and hooks, and the
 * parent's client keeps working. Requests in flight at the fork belong to the
 * parent; their callbacks never run in the child, and nl_cancel or nl_pause
 * of their ids there returns 0. Nothing needs to be called around fork().
 * Before a fork the library's threads finish what they are running (they wait
 * while it happens), so that none leaves a lock of its own or of the Swift
 * runtime held in the child; a thread inside a callback or hook is not waited
 * for, and a fork waits at most 100 ms for the others.
 */

/**
 * Frees a string returned by the library. NULL is a no-op.
 *
 * Threads: any thread.
 */
NL_EXTERN void nl_free(void *p);

#ifdef __cplusplus
}
#endif

#endif /* NETLAYER_H */
