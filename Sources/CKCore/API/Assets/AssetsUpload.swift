import CKJSON
import CKModel
import CKStore
import Foundation

/// `assets/upload`: a URL per asset field to POST its bytes to (reference §3.6; CloudKit JS
/// asks before it saves a record with an asset). The URL carries a sealed token — whose zone,
/// record and field, valid 15 minutes — so nothing is kept for it; POSTing the bytes there
/// (`beginAssetUpload`, `receiveAsset`) keeps them until a record takes them and answers
/// `{singleFile: {fileChecksum, receipt, size, …}}`, which records/modify then takes as the
/// field's value. A URL takes one upload.
public struct AssetsUploadRequest: Sendable {
    public struct Token: Sendable, Equatable {
        public var recordName: String?
        public var recordType: String?
        public var fieldName: String

        public init(recordName: String?, recordType: String?, fieldName: String) {
            self.recordName = recordName
            self.recordType = recordType
            self.fieldName = fieldName
        }
    }

    public var zoneName: String?
    public var tokens: [Token]

    public init(zoneName: String? = nil, tokens: [Token]) {
        self.zoneName = zoneName
        self.tokens = tokens
    }

    /// The Web Services body: `{zoneID?, tokens: [{recordName?, recordType?, fieldName}]}`.
    public init(json body: JSONValue) throws {
        let o = try RequestBody.object(body, "assets/upload request", keys: ["zoneID", "tokens"])
        guard let list = o["tokens"]?.arrayValue, !list.isEmpty else { throw CloudKitError.badRequest("assets/upload request needs a non-empty 'tokens' array") }
        if list.count > Limits.resultsPerPage {
            throw CloudKitError(.limitExceeded, "an assets/upload request holds at most \(Limits.resultsPerPage) tokens; this one has \(list.count)")
        }
        zoneName = try RequestBody.zoneName(o["zoneID"])
        tokens = try list.enumerated().map { i, item in
            let t = try RequestBody.object(item, "tokens[\(i)]", keys: ["recordName", "recordType", "fieldName"])
            guard let field = t["fieldName"]?.stringValue else { throw CloudKitError.badRequest("tokens[\(i)] needs a 'fieldName' string") }
            let name = try RequestBody.string(t["recordName"], "tokens[\(i)].recordName")
            let type = try RequestBody.string(t["recordType"], "tokens[\(i)].recordType")
            return Token(recordName: name, recordType: type, fieldName: field)
        }
    }
}

extension CloudKitAPI {
    /// How long an upload URL is good for (WS-Assets: 15 minutes).
    static let uploadValidity = UploadArea.lifetime

    /// `{tokens: [{recordName, fieldName, url}]}`, in the order asked.
    public func assetUploadURLs(_ r: AssetsUploadRequest, as caller: Caller) throws -> ItemsResponse {
        for t in r.tokens {
            try Names.validateFieldName(t.fieldName)
            if let n = t.recordName { try Names.validateRecordName(n) }
            if let ty = t.recordType { try Names.validateRecordType(ty) }
        }
        let server = try requireServer(.assetsUpload)
        let zone = r.zoneName ?? ZoneID.defaultZoneName
        try Names.validateZoneName(zone)
        let ctx = try preflight(.assetsUpload, caller, zones: [zone], need: .write)
        let secret = try ctx.db.tokens.secret.getOrCreate()
        let until = clock.now() + Self.uploadValidity
        return ItemsResponse("tokens", r.tokens.map { t in
            var payload: [String: JSONValue] = ["c": .string(caller.container), "e": .string(caller.environment.rawValue),
                                                "d": .string(caller.scope.rawValue), "z": .string(zone), "f": .string(t.fieldName), "x": .int(until)]
            if let n = t.recordName { payload["r"] = .string(n) }
            let token = SignedEnvelope.seal(.object(payload), prefix: SignedEnvelope.uploadToken, secret: secret)
            var item: [String: JSONValue] = ["fieldName": .string(t.fieldName), "url": .string(server + "/upload/" + token)]
            if let n = t.recordName { item["recordName"] = .string(n) }
            return .value(.object(item))
        }, for: ctx.audience)
    }

    /// Whether an upload URL's token is one this data directory sealed and still good: its
    /// container, database and expiry.
    private func checkUploadURL(_ uploadToken: String) throws -> (container: String, scope: DatabaseScope, expires: Int64) {
        guard let p = SignedEnvelope.open(uploadToken, prefix: SignedEnvelope.uploadToken, secret: try TokenSecret(paths: store.paths).existing()),
              let container = p["c"]?.stringValue, p["e"]?.stringValue.flatMap(Environment.init(rawValue:)) != nil,
              let scope = p["d"]?.stringValue.flatMap(DatabaseScope.init(rawValue:)), let until = p["x"]?.int64Value else {
            throw CloudKitError(.authenticationFailed, "this upload URL was not issued by this data directory")
        }
        if clock.now() > until { throw CloudKitError(.authenticationFailed, "this upload URL has expired (upload URLs are good for 15 minutes); ask assets/upload for another") }
        return (container, scope, until)
    }

    /// Starts an upload to an upload URL, before its body is read (a forged URL must not cost
    /// the server 50 MB): the token checked, and the URL marked used — one URL takes one
    /// upload; a second is refused (AUTHENTICATION_FAILED), as is one while the first is
    /// arriving. The bytes then go to the returned `AssetUpload` as they come.
    public func beginAssetUpload(uploadToken: String) throws -> AssetUpload {
        let (container, scope, expires) = try checkUploadURL(uploadToken)
        let area = UploadArea(paths: store.paths, clock: clock)
        guard try area.claim(uploadToken, expires: expires) else {
            throw CloudKitError(.authenticationFailed, "this upload URL has been used already (an upload URL takes one upload); ask assets/upload for another")
        }
        do {
            return try AssetUpload(api: self, area: area, uploadToken: uploadToken, container: container, scope: scope)
        } catch {
            area.release(uploadToken)
            throw error
        }
    }

    /// The bytes POSTed to an upload URL, all at once (`beginAssetUpload` streams them): kept
    /// until a record takes them, answered with the value records/modify takes for the field:
    /// `{singleFile: {fileChecksum, receipt, size, wrappingKey, referenceChecksum}}`. The token
    /// is the authority (a client sends no credentials here): one that is not sealed by this
    /// data directory, has expired or was used is refused.
    public func receiveAsset(uploadToken: String, bytes: [UInt8]) throws -> DocumentBody {
        let upload = try beginAssetUpload(uploadToken: uploadToken)
        do { try bytes.withUnsafeBytes { try upload.append($0) } } catch {
            upload.abandon()
            throw error
        }
        return try upload.finish()
    }

    /// The answer to a whole upload: its receipt, sealed for the container and checksum.
    func uploadAnswer(checksum sum: String, size: Int64, container: String, scope: DatabaseScope) throws -> DocumentBody {
        let receipt = SignedEnvelope.seal(["s": .string(sum), "n": .int(size), "c": .string(container)], prefix: SignedEnvelope.receipt,
                                          secret: try TokenSecret(paths: store.paths).getOrCreate())
        var file: [String: JSONValue] = ["fileChecksum": .string(sum), "size": .int(size), "receipt": .string(receipt)]
        // The keys an encrypted (private or shared) asset carries, as every response shows them.
        let shown = AssetValue.response(.object(file), style: ResponseStyle(assetBase: assetBaseURL, encryptedAssets: scope != .public))
        for k in ["wrappingKey", "referenceChecksum"] { file[k] = shown[k] }
        return DocumentBody(["singleFile": .object(file)])
    }

    /// Removes uploaded bytes no record took within an upload URL's lifetime (15 minutes from
    /// their upload), and the marks of used upload URLs past their expiry. `ck serve` calls it
    /// every minute; `ck fsck` does the same. The paths removed.
    @discardableResult
    public func sweepExpiredUploads() throws -> [String] {
        try UploadArea(paths: store.paths, clock: clock).sweep().map(\.path)
    }
}
