import CKCore

/// Asset bytes behind `file://` downloadURLs. ck prints an asset with a `file://` URL into its
/// data directory's asset store; a record copied from that output (`ck export`, `record get`)
/// and saved into another data directory (`ck import`, `record modify`, `record save --stdin`)
/// brings its bytes along from there, accepted only when they match the asset's fileChecksum
/// and size. Anything else (an https URL of Apple's servers, a missing file) is left to the
/// save, which keeps a server's asset as remote or refuses one it cannot account for.
enum AssetDownloads {
    static func collect(_ ops: [RecordOperation], store: AssetStore, into assets: inout [String: [UInt8]]) {
        for op in ops {
            for case let f? in op.fields.values where f.type.base == .asset { visit(f.value, store, &assets) }
            for raw in op.untyped.values { visit(raw, store, &assets) }
        }
    }

    private static func visit(_ v: JSONValue, _ store: AssetStore, _ assets: inout [String: [UInt8]]) {
        if let list = v.arrayValue { for e in list { visit(e, store, &assets) }; return }
        guard let sum = v["fileChecksum"]?.stringValue, let size = v["size"]?.int64Value, size >= 0,
              let url = v["downloadURL"]?.stringValue, let path = AssetValue.localPath(ofURL: url),
              assets[sum] == nil, (try? store.contains(checksum: sum)) != true,
              let bytes = FileSystem.readRegularFile(path, size: size), AssetStore.checksum(of: bytes) == sum
        else { return }
        assets[sum] = bytes
    }
}
