import NetlayerCore
import NetlayerJSON

/// What a client does with a cassette.
public enum CassetteMode: Sendable {
    /// Send over the network and keep every exchange, its secrets redacted as
    /// `redaction` says; `save` receives them once, when the client shuts down.
    case record(CassetteRedaction, save: @Sendable (Cassette) -> Void)
    /// Answer from the cassette and never touch the network. An unmatched request's
    /// message has the values of the query parameters `redactedQuery` names (and
    /// the well-known ones) redacted.
    case replay(Cassette, redactedQuery: Set<String>)
}
