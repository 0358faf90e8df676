import CKCrypto
import CKJSON
import CKModel

/// A small JSON payload made tamper-evident with the data directory's secret, for what the API
/// hands a client to bring back later — an asset upload URL's token, an upload's receipt — so
/// that nothing has to be kept for it: `PREFIX` + base64url(payload) + "." + base64url(mac).
package enum SignedEnvelope {
    /// The prefix of an asset upload URL's token.
    package static let uploadToken = "ck1u."
    /// The prefix of an upload's (or an assets/rereference's) receipt.
    package static let receipt = "ck1r."

    package static func seal(_ payload: JSONValue, prefix: String, secret: [UInt8]) -> String {
        let body = Base64URL.encode(Array(JSONWriter.compact(payload).utf8))
        return prefix + body + "." + mac(prefix + body, secret)
    }

    /// The payload, when `token` is one this secret sealed with `prefix`; nil for anything else.
    package static func open(_ token: String, prefix: String, secret: [UInt8]?) -> JSONValue? {
        guard let secret, token.hasPrefix(prefix), token.utf8.count < 8192 else { return nil }
        let parts = token.dropFirst(prefix.count).split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, String(parts[1]) == mac(prefix + parts[0], secret),
              let bytes = Base64URL.decode(String(parts[0])) else { return nil }
        return try? JSONParser.parse(bytes)
    }

    private static func mac(_ s: String, _ secret: [UInt8]) -> String {
        Base64URL.encode(Array(HMAC.sha256(key: secret, message: Array(s.utf8)).prefix(16)))
    }
}
