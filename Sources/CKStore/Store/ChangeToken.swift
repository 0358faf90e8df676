import CKCrypto
import CKJSON
import CKModel
import Foundation

/// Opaque change tokens. A token names a point (`seq`) in one history — a zone's, or a
/// database's — and is signed with the data directory's secret, so a forged, truncated or
/// edited token is refused, and a token of another zone or database is recognised as such.
struct ChangeToken: Equatable, Sendable {
    package enum Kind: String, Sendable { case zone, database }

    package var kind: Kind
    /// Which history: container/environment/scope/owner(/zone), and the zone's incarnation.
    var scopeKey: String
    package var seq: Int64
    /// The history's expiry epoch when the token was issued.
    var epoch: Int64
    /// On the pages of a zone fetch from scratch: the head where it began (`seq` is behind it).
    /// What it left out as deleted is decided against it (ZoneChanges); the page that reaches it
    /// issues a token without it.
    package var origin: Int64?

    package init(kind: Kind, scopeKey: String, seq: Int64, epoch: Int64 = 0, origin: Int64? = nil) {
        self.kind = kind
        self.scopeKey = scopeKey
        self.seq = seq
        self.epoch = epoch
        self.origin = origin
    }

    package static let prefix = "ck1."

    package func encode(secret: [UInt8]) -> String {
        var payload: [String: JSONValue] = ["k": .string(kind.rawValue), "s": .string(scopeKey), "q": .int(seq), "e": .int(epoch)]
        if let o = origin { payload["o"] = .int(o) }
        let body = Base64URL.encode(Array(JSONWriter.compact(.object(payload)).utf8))
        let mac = Base64URL.encode(Array(HMAC.sha256(key: secret, message: Array((ChangeToken.prefix + body).utf8)).prefix(16)))
        return ChangeToken.prefix + body + "." + mac
    }

    /// Decodes and verifies a token; BAD_REQUEST for anything ck did not issue.
    package static func decode(_ s: String, secret: [UInt8]?) throws -> ChangeToken {
        let bad = CloudKitError.badRequest("change token is not valid (forged, truncated or not issued by this store)")
        guard s.hasPrefix(prefix), s.utf8.count < 4096 else { throw bad }
        let rest = s.dropFirst(prefix.count)
        let parts = rest.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, let secret = secret else { throw bad }
        let expect = Base64URL.encode(Array(HMAC.sha256(key: secret, message: Array((prefix + parts[0]).utf8)).prefix(16)))
        guard String(parts[1]) == expect, let bytes = Base64URL.decode(String(parts[0])),
              let j = try? JSONParser.parse(bytes), let k = j["k"]?.stringValue, let kind = Kind(rawValue: k),
              let key = j["s"]?.stringValue, let seq = j["q"]?.int64Value, seq >= 0,
              let epoch = j["e"]?.int64Value, epoch >= 0
        else { throw bad }
        let origin = j["o"]?.int64Value
        if j["o"] != nil && !(origin.map { $0 > seq } ?? false) { throw bad }
        return ChangeToken(kind: kind, scopeKey: key, seq: seq, epoch: epoch, origin: origin)
    }

}

/// The data directory's token-signing secret (`secret`, 0600), made on first use.
package struct TokenSecret {
    package let paths: DataPaths
    package var file: String { paths.root + "/secret" }

    /// The secret if one exists (reading never creates it).
    package func existing() throws -> [UInt8]? {
        guard let b = try FileSystem.read(file), b.count == 32 else { return nil }
        return b
    }

    package func getOrCreate() throws -> [UInt8] {
        if let s = try existing() { return s }
        try FileSystem.makeDirectories(paths.root)
        let lock = try FileLock(path: paths.root + "/secret.lock")
        defer { lock.unlock() }
        if let s = try existing() { return s }
        let s = (0..<32).map { _ in UInt8.random(in: 0...255) }
        try FileSystem.writeAtomically(file, s)
        return s
    }

    package init(paths: DataPaths) {
        self.paths = paths
    }
}
