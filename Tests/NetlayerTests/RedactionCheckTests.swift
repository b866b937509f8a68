import Testing
@testable import Netlayer

/// The quick check before URL redaction (`Redaction.mayHoldSecrets`) lets through
/// every URL the full rules would change, and skips those they leave alone.
@Suite struct RedactionCheckTests {
    @Test func theQuickCheckAgreesWithTheFullRules() {
        let urls = [
            "http://127.0.0.1:8080/small.json?page=12", "http://h/p", "http://h/p?token=x", "http://h/p?a=1&API-Key=x",
            "http://u:pw@h/p", "http://h/p?to%6Ben=x", "http://h/p?page=1&sig_v2=abc", "http://h/p?a&token=x",
            "http://h/p?x=1#token=y", "http://h/p?veryveryverylongname=1", "http://h/p?caf\u{E9}=1",
        ]
        for url in urls {
            let changes = Redaction.url(in: url, queryNames: ["sigv2"]) != url
            #expect(!changes || Redaction.mayHoldSecrets(url, queryNames: ["sigv2"]), "\(url)")
        }
        #expect(!Redaction.mayHoldSecrets("http://127.0.0.1:8080/small.json?page=12", queryNames: []))
        #expect(!Redaction.mayHoldSecrets("http://h/p?a=1&b=2", queryNames: ["sigv2"]))
        #expect(Redaction.mayHoldSecrets("http://h/p?page=1&sig_v2=abc", queryNames: ["sigv2"]))
    }
}
