import Foundation

extension CloudKitAPI {
    /// The bytes behind an asset `downloadURL` that `ck serve` handed out (`<server>/assets/<2
    /// hex>/<64 hex>`, the shard and the SHA-256 of the bytes, as the asset store names them).
    /// Like Apple's download URLs, the URL is the authority: it names content by its digest.
    /// The file is read without following links, and checked against its name as it is read.
    /// Anything else is NOT_FOUND.
    public func servedAsset(_ relativePath: String) throws -> [UInt8] {
        let parts = relativePath.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        let isHex = { (s: String, n: Int) in s.utf8.count == n && s.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) } }
        guard parts.count == 2, isHex(parts[0], 2), isHex(parts[1], 64), parts[1].hasPrefix(parts[0]) else {
            throw CloudKitError(.notFound, "no asset at '\(Names.describe(String(relativePath.prefix(200))))': an asset URL ends in <2 hex>/<64 hex>")
        }
        var digest: [UInt8] = []
        var i = parts[1].utf8.makeIterator()
        while let hi = i.next(), let lo = i.next() { digest.append(UInt8(String(decoding: [hi, lo], as: UTF8.self), radix: 16)!) }
        let sum = Data(digest).base64EncodedString()
        guard let size = try store.assets.size(checksum: sum) else {
            throw CloudKitError(.notFound, "no asset with checksum \(sum) is stored in this data directory")
        }
        do {
            return try AssetStore.readExported(AssetStore.ExportedFile(dataDirectory: store.paths.root, shard: parts[0], name: parts[1]), checksum: sum, size: size)
        } catch let e as CloudKitError where e.code == .badRequest {
            throw CloudKitError(.internalError, "the stored asset \(parts[1]) could not be served: \(e.reason) (ck fsck checks the asset store)")
        }
    }
}
