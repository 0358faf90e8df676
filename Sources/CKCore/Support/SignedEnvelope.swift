import CKCrypto
import CKJSON
/// A small JSON payload made tamper-evident with the data directory's secret, for what the API
/// hands a client to bring back later — an asset upload URL's token, an upload's receipt — so
/// that nothing has to be kept for it: `PREFIX` + base64url(payload) + "." + base64url(mac).
enum SignedEnvelope {
    static func seal(_ payload: JSONValue, prefix: String, secret: [UInt8]) -> String {
        let body = ChangeToken.base64url(Array(JSONWriter.compact(payload).utf8))
        return prefix + body + "." + mac(prefix + body, secret)
    }

    /// The payload, when `token` is one this secret sealed with `prefix`; nil for anything else.
    static func open(_ token: String, prefix: String, secret: [UInt8]?) -> JSONValue? {
        guard let secret, token.hasPrefix(prefix), token.utf8.count < 8192 else { return nil }
        let parts = token.dropFirst(prefix.count).split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, String(parts[1]) == mac(prefix + parts[0], secret),
              let bytes = ChangeToken.unbase64url(String(parts[0])) else { return nil }
        return try? JSONParser.parse(bytes)
    }

    private static func mac(_ s: String, _ secret: [UInt8]) -> String {
        ChangeToken.base64url(Array(HMAC.sha256(key: secret, message: Array(s.utf8)).prefix(16)))
    }
}
