extension NetlayerClient.Parts {
    /// The transport a client with these parts sends through, over its libcurl
    /// `session`, and the recorder to finish at shutdown when it records. A stub or a
    /// replay answers in place of libcurl, and the session still gives it its thread.
    func transport(over session: CurlSessionManager) -> (any NetworkSessionManager, RecordingSessionManager?) {
        switch cassette {
        case .record(let redaction, let save)?:
            let recorder = RecordingSessionManager(over: session, redaction: redaction, save: save)
            return (recorder, recorder)
        case .replay(let cassette, let redactedQuery)?:
            return (ReplaySessionManager(cassette: cassette, redactedQuery: redactedQuery, loop: session), nil)
        case nil:
            return (stubRules.map { StubSessionManager(rules: $0, loop: session) } ?? session, nil)
        }
    }
}
