import CKModel
import CKStore
import Foundation

/// An asset's bytes as `ck serve` sends them for a `downloadURL`, and how long a client may
/// keep them under that URL (what is left of its lifetime).
public struct ServedAsset: Sendable {
    public var bytes: [UInt8]
    public var maxAgeSeconds: Int64
}

extension CloudKitAPI {
    /// The bytes behind an asset `downloadURL` that `ck serve` handed out: `<2 hex>/<64 hex>`
    /// (the shard and the SHA-256 of the bytes, as the asset store names them) and the query
    /// that signs it for its reader until its expiry (`AssetURLSigner`). Like Apple's download
    /// URLs, the URL is the capability. Every refusal — no or a wrong signature, another
    /// asset's, a malformed path, bytes not stored — is the same NOT_FOUND, so no answer says
    /// whether an asset exists; only a URL this server signed learns that it expired. The file
    /// is read without following links, and checked against its name as it is read.
    public func servedAsset(_ relativePath: String, query: String?) throws -> ServedAsset {
        let refused = CloudKitError(.notFound, "no asset at this URL: a downloadURL is ck serve's own, signed for the reader of the record it came in, and good for 30 minutes; fetch the record again for a fresh one")
        let parts = relativePath.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        let isHex = { (s: String, n: Int) in s.utf8.count == n && s.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) } }
        guard parts.count == 2, isHex(parts[0], 2), isHex(parts[1], 64), parts[1].hasPrefix(parts[0]),
              let q = Self.signedQuery(query), let key = assetURLSecret.existing(),
              Self.sameBytes(AssetURLSigner.mac(hex: parts[1], reader: q.reader, expires: q.expires, key: key), q.mac) else { throw refused }
        let left = q.expires * 1000 - clock.now()
        guard left > 0 else {
            throw CloudKitError(.notFound, "this downloadURL expired at \(Timestamps.iso(q.expires * 1000)) (a downloadURL is good for 30 minutes); fetch the record again for a fresh one")
        }
        var digest: [UInt8] = []
        var i = parts[1].utf8.makeIterator()
        while let hi = i.next(), let lo = i.next() { digest.append(UInt8(String(decoding: [hi, lo], as: UTF8.self), radix: 16)!) }
        let sum = Data(digest).base64EncodedString()
        guard let size = try store.assets.size(checksum: sum) else { throw refused }
        do {
            let bytes = try AssetStore.readExported(ExportedAssetFile(dataDirectory: store.paths.root, shard: parts[0], name: parts[1]), checksum: sum, size: size)
            return ServedAsset(bytes: bytes, maxAgeSeconds: left / 1000)
        } catch let e as CloudKitError where e.code == .badRequest {
            throw CloudKitError(.internalError, "the stored asset \(parts[1]) could not be served: \(e.reason) (ck fsck checks the asset store)")
        }
    }

    /// `e=<s>&r=<reader>&s=<mac>` (`r` absent for nobody), in that shape and no other.
    private static func signedQuery(_ query: String?) -> (expires: Int64, reader: String, mac: String)? {
        guard let query, query.utf8.count <= 512 else { return nil }
        var fields: [String: String] = [:]
        for pair in query.split(separator: "&", omittingEmptySubsequences: false) {
            let kv = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard kv.count == 2, ["e", "r", "s"].contains(kv[0]), fields[String(kv[0])] == nil else { return nil }
            fields[String(kv[0])] = String(kv[1])
        }
        guard let e = fields["e"].flatMap({ Int64($0) }), e > 0, let mac = fields["s"] else { return nil }
        return (e, fields["r"] ?? "", mac)
    }

    /// Compares two MACs in time that does not depend on where they differ.
    private static func sameBytes(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        guard x.count == y.count else { return false }
        return zip(x, y).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }
}
