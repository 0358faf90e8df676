import Foundation

/// Asset bytes, kept once per content under `assets/` by SHA-256; records hold the asset
/// dictionary (`fileChecksum`, `size`) and gain a `file://` `downloadURL` when read.
public struct AssetStore {
    public let paths: DataPaths

    public init(paths: DataPaths) { self.paths = paths }

    /// The checksum CloudKit-style: base64 of the digest.
    public static func checksum(of bytes: [UInt8]) -> String { Data(SHA256.digest(bytes)).base64EncodedString() }

    /// `xx/<hex>` for a checksum, or a path that cannot exist for a malformed one.
    public static func relativePath(checksum: String) -> String {
        guard let d = Data(base64Encoded: checksum), d.count == 32 else { return "invalid/" + PathEncoding.component(checksum) }
        let hex = Identifiers.hex(Array(d))
        return String(hex.prefix(2)) + "/" + hex
    }

    public func path(checksum: String) -> String { paths.assetsDirectory + "/" + AssetStore.relativePath(checksum: checksum) }

    public var baseURL: String { "file://" + paths.assetsDirectory + "/" }

    /// Stores bytes (idempotent) and returns the asset dictionary for a record field.
    public func put(_ bytes: [UInt8]) throws -> JSONValue {
        let sum = AssetStore.checksum(of: bytes)
        let p = path(checksum: sum)
        if try !FileSystem.exists(p) { try FileSystem.writeAtomically(p, bytes) }
        return ["fileChecksum": .string(sum), "size": .int(Int64(bytes.count))]
    }

    public func contains(checksum: String) throws -> Bool { try FileSystem.exists(path(checksum: checksum)) }

    public func read(checksum: String) throws -> [UInt8]? { try FileSystem.read(path(checksum: checksum)) }
}
