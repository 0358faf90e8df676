import CKJSON
import CKModel

/// What an asset value saved by a web client (`ck serve`) must show, as CloudKit asks of
/// Web Services clients: the `receipt` of its upload (`assets/upload`, then the POST of the
/// bytes) or of an `assets/rereference`, sealed by this data directory for this container and
/// checksum — or it is the asset the record already holds (a record fetched and saved back).
/// A checksum alone does not attach bytes someone else stored, and the answer says nothing of
/// what is stored. `file://` downloadURLs (the CLI's `ck import`) are the CLI's only: over HTTP
/// they would make the server read files outside its data directory.
package struct WebAssetRule {
    package let container: String
    /// Where the data directory's secret is (read only when a receipt is to be opened).
    package let paths: DataPaths

    package func check(_ value: JSONValue, checksum sum: String, field: String, recordName: String, before: Record?) throws {
        if let url = value["downloadURL"]?.stringValue, url.hasPrefix("file:") {
            throw CloudKitError(.badRequest, "field '\(field)': a file:// downloadURL is read from this machine's files, which a web client may not name; upload the bytes with assets/upload",
                                recordName: recordName)
        }
        if let receipt = value["receipt"]?.stringValue,
           let r = SignedEnvelope.open(receipt, prefix: SignedEnvelope.receipt, secret: try TokenSecret(paths: paths).existing()),
           r["s"]?.stringValue == sum, r["c"]?.stringValue == container {
            return
        }
        if let before, before.fields.values.contains(where: { f in
            f.type.base == .asset && (f.type.isList ? (f.value.arrayValue ?? []) : [f.value]).contains { $0["fileChecksum"]?.stringValue == sum }
        }) {
            return
        }
        throw CloudKitError(.badRequest, "field '\(field)': an asset saved over Web Services needs the receipt of its upload (assets/upload) or of assets/rereference, for this container",
                            recordName: recordName)
    }

    package init(container: String, paths: DataPaths) {
        self.container = container
        self.paths = paths
    }
}
