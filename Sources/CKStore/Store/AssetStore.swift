import CKCrypto
import CKJSON
import CKModel
import Foundation

/// Asset bytes, kept once per content under `assets/` by SHA-256; records hold the asset
/// dictionary (`fileChecksum`, `size`) and gain a `file://` `downloadURL` when read.
package struct AssetStore {
    package let paths: DataPaths

    package init(paths: DataPaths) { self.paths = paths }

    /// The checksum CloudKit-style: base64 of the digest.
    package static func checksum(of bytes: [UInt8]) -> String { AssetValue.checksum(of: bytes) }

    package func path(checksum: String) -> String { paths.assetsDirectory + "/" + AssetValue.relativePath(checksum: checksum) }

    package var baseURL: String { "file://" + paths.assetsDirectory + "/" }

    /// Stores bytes (idempotent) and returns the asset dictionary for a record field.
    package func put(_ bytes: [UInt8]) throws -> JSONValue {
        let sum = AssetStore.checksum(of: bytes)
        let p = path(checksum: sum)
        if try !FileSystem.exists(p) { try FileSystem.writeAtomically(p, bytes) }
        return ["fileChecksum": .string(sum), "size": .int(Int64(bytes.count))]
    }

    package func contains(checksum: String) throws -> Bool { try FileSystem.exists(path(checksum: checksum)) }

    /// The number of bytes stored for a checksum; nil when none are.
    package func size(checksum: String) throws -> Int64? { try FileSystem.size(path(checksum: checksum)) }

    package func read(checksum: String) throws -> [UInt8]? { try FileSystem.read(path(checksum: checksum)) }

    /// The bytes of another data directory's asset (`ck export` there, `ck import` here):
    /// a regular file, no link on `assets/<shard>/<name>`, of exactly `size` bytes (at most
    /// CloudKit's asset limit, checked before anything is opened), hashed as it is read and
    /// refused unless its SHA-256 is `checksum`. A refusal is BAD_REQUEST whose reason is only
    /// what went wrong, to be put in context by the caller.
    package static func readExported(_ f: ExportedAssetFile, checksum: String, size: Int64) throws -> [UInt8] {
        guard size <= Limits.assetBytes else { throw AssetValue.tooLarge(size, what: "the file") }
        var hash = SHA256Stream()
        let bytes = try FileSystem.readRegularFile(f.dataDirectory, ["assets", f.shard, f.name], size: size) { hash.update($0) }
        guard Data(hash.finish()).base64EncodedString() == checksum else {
            throw CloudKitError.badRequest("the file's SHA-256 is not the fileChecksum")
        }
        return bytes
    }
}
