/// A file of some data directory's asset store, as a `file://` downloadURL that ck printed
/// names it (`AssetValue.source(ofURL:checksum:)` checks the shape).
public struct ExportedAssetFile: Equatable, Sendable {
    /// The data directory: reached as any path a user gives (links followed).
    public let dataDirectory: String
    /// `assets/<shard>/<name>` below it: opened without following a link.
    public let shard: String
    public let name: String

    public init(dataDirectory: String, shard: String, name: String) {
        self.dataDirectory = dataDirectory
        self.shard = shard
        self.name = name
    }
}
