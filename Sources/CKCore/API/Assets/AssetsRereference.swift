import CKJSON
import CKModel
import CKStore

/// `assets/rereference`: the asset values of record fields, to save into other records without
/// uploading the bytes again (reference §3.6). One result per asset asked for, in order: the
/// asset dictionary as responses show it (with its downloadURL), or an error — NOT_FOUND for a
/// record the caller may not read, in the words a missing one gets.
public struct AssetsRereferenceRequest: Sendable {
    public struct Asset: Sendable, Equatable {
        public var recordName: String
        public var fieldName: String

        public init(recordName: String, fieldName: String) {
            self.recordName = recordName
            self.fieldName = fieldName
        }
    }

    public var zoneName: String?
    public var assets: [Asset]

    public init(zoneName: String? = nil, assets: [Asset]) {
        self.zoneName = zoneName
        self.assets = assets
    }

    /// The Web Services body: `{zoneID?, assets: [{recordName, fieldName}]}`.
    public init(json body: JSONValue) throws {
        let o = try RequestBody.object(body, "assets/rereference request", keys: ["zoneID", "assets"])
        guard let list = o["assets"]?.arrayValue, !list.isEmpty else { throw CloudKitError.badRequest("assets/rereference request needs a non-empty 'assets' array") }
        if list.count > Limits.resultsPerPage {
            throw CloudKitError(.limitExceeded, "an assets/rereference request holds at most \(Limits.resultsPerPage) assets; this one has \(list.count)")
        }
        zoneName = try RequestBody.zoneName(o["zoneID"])
        assets = try list.enumerated().map { i, item in
            let a = try RequestBody.object(item, "assets[\(i)]", keys: ["recordName", "fieldName"])
            guard let n = a["recordName"]?.stringValue, let f = a["fieldName"]?.stringValue else {
                throw CloudKitError.badRequest("assets[\(i)] needs 'recordName' and 'fieldName' strings")
            }
            return Asset(recordName: n, fieldName: f)
        }
    }
}

extension CloudKitAPI {
    /// `{assets: [asset | error]}`.
    public func rereferenceAssets(_ r: AssetsRereferenceRequest, as caller: Caller) throws -> ItemsResponse {
        for a in r.assets {
            try Names.validateRecordName(a.recordName)
            try Names.validateFieldName(a.fieldName)
        }
        let zone = r.zoneName ?? ZoneID.defaultZoneName
        let ctx = try preflight(.assetsRereference, caller, zones: [zone])
        let z = try ctx.db.zone(zone)
        let snap = try z.snapshot()
        return ItemsResponse("assets", try r.assets.map { a in
            guard let rec = try snap.record(named: a.recordName), try ctx.gate.canRead(rec) else { return .failed(ctx.gate.notFound(a.recordName, zone: z.zoneID)) }
            guard let f = rec.fields[a.fieldName], f.type == FieldType(.asset) else {
                return .failed(CloudKitError(.badRequest, "record '\(Names.describe(a.recordName))' has no asset field '\(a.fieldName)'", recordName: a.recordName))
            }
            var o = AssetValue.response(f.value, style: ctx.style).objectValue ?? [:]
            o["recordName"] = .string(a.recordName)
            o["fieldName"] = .string(a.fieldName)
            // What lets a web client save this asset into another record of the container.
            if let sum = f.value["fileChecksum"]?.stringValue {
                o["receipt"] = .string(SignedEnvelope.seal(["s": .string(sum), "n": f.value["size"] ?? .null, "c": .string(caller.container)],
                                                           prefix: SignedEnvelope.receipt, secret: try ctx.db.tokens.secret.getOrCreate()))
            }
            return .value(.object(o))
        }, for: ctx.audience)
    }
}
