import CKJSON
import CKModel
import CKStore

/// Asset bytes behind `file://` downloadURLs, read before the save takes its locks. ck prints
/// an asset with a `file://` URL into its data directory's asset store; a record copied from
/// that output (`ck export`, `record get`) and saved into another data directory (`ck import`,
/// `record modify`, `record save --stdin`) brings its bytes along from there. Only a URL of the
/// shape ck prints (`…/assets/<2 hex>/<hex of the checksum>`) is opened, without following a
/// link below the data directory, and only a regular file of exactly `size` bytes (at most
/// CloudKit's asset limit) whose SHA-256 is the fileChecksum is taken. Whatever is not taken
/// here is the save's to judge (`RecordWriter`), per record and with the reason: it keeps a
/// server's `https://` asset as remote and refuses one it cannot account for.
enum ExportedAssets {
    static func collect(_ ops: [RecordOperation], store: AssetStore, into assets: inout [String: [UInt8]]) {
        for op in ops {
            for case let f? in op.fields.values where f.type.base == .asset { visit(f.value, store, &assets) }
            for raw in op.untyped.values { visit(raw, store, &assets) }
        }
    }

    private static func visit(_ v: JSONValue, _ store: AssetStore, _ assets: inout [String: [UInt8]]) {
        if let list = v.arrayValue { for e in list { visit(e, store, &assets) }; return }
        guard let sum = v["fileChecksum"]?.stringValue, let size = v["size"]?.int64Value, (0...Limits.assetBytes).contains(size),
              let url = v["downloadURL"]?.stringValue, assets[sum] == nil,
              case .exported(let file)? = try? AssetValue.source(ofURL: url, checksum: sum),
              (try? store.contains(checksum: sum)) == false,
              let bytes = try? AssetStore.readExported(file, checksum: sum, size: size)
        else { return }
        assets[sum] = bytes
    }
}
