import CKJSON
import CKModel
import CKStore

/// A ShortGUID of `records/resolve` and `records/accept` (reference §1.6): `{value,
/// shouldFetchRootRecord?, rootRecordDesiredKeys?}`; the value a short GUID (ck also takes a
/// share URL, `https://www.icloud.com/share/<shortGUID>`).
public struct ShortGUIDRequest: Sendable, Equatable {
    public var value: String
    /// Whether the result carries the root record (when the caller may read it).
    public var shouldFetchRootRecord: Bool
    public var rootRecordDesiredKeys: Set<String>?

    public init(_ value: String, shouldFetchRootRecord: Bool = false, rootRecordDesiredKeys: Set<String>? = nil) {
        self.value = value
        self.shouldFetchRootRecord = shouldFetchRootRecord
        self.rootRecordDesiredKeys = rootRecordDesiredKeys
    }

    /// The short GUID the value names; BAD_REQUEST when it names none.
    func shortGUID() throws -> String {
        guard let g = ShareInfo.shortGUID(fromReference: value) else {
            throw CloudKitError.badRequest("'\(Names.describe(value))' is not a share URL (\(ShareInfo.urlPrefix)…) or a short GUID")
        }
        return g
    }

    /// The body `{shortGUIDs: [ShortGUID]}`.
    static func list(json body: JSONValue, _ what: String = "request") throws -> [ShortGUIDRequest] {
        let o = try RequestBody.object(body, what, keys: ["shortGUIDs"])
        let list = try RequestBody.array(o["shortGUIDs"], "shortGUIDs")
        if list.isEmpty { throw CloudKitError.badRequest("shortGUIDs is empty: name at least one share") }
        return try list.enumerated().map { i, item in
            let g = try RequestBody.object(item, "shortGUIDs[\(i)]", keys: ["value", "shouldFetchRootRecord", "rootRecordDesiredKeys"])
            guard let v = try RequestBody.string(g["value"], "shortGUIDs[\(i)].value") else {
                throw CloudKitError.badRequest("shortGUIDs[\(i)] needs a 'value' string (the short GUID)")
            }
            let r = ShortGUIDRequest(v, shouldFetchRootRecord: try RequestBody.bool(g["shouldFetchRootRecord"], "shortGUIDs[\(i)].shouldFetchRootRecord") ?? false,
                                     rootRecordDesiredKeys: try RequestBody.desiredKeys(g["rootRecordDesiredKeys"]))
            _ = try r.shortGUID()
            return r
        }
    }
}

extension CloudKitAPI {
    /// The ShortGUID Result dictionary (reference §1.6) of a share, as the caller may see it:
    /// where it lives, its owner, its root's name, the share (ShareView), the caller's place in
    /// it, and the root record when asked for and the caller may read it (the permission gate).
    func shortGUIDResult(_ loc: ShareLocation, _ req: ShortGUIDRequest, ctx: RequestContext) throws -> JSONValue {
        let db = ctx.db
        let me = db.me
        // Shares live in private databases, and show as they do there and in shared ones.
        var style = ctx.style
        style.encryptedAssets = true
        let guid = loc.share.shortGUID ?? ""
        var o: [String: JSONValue] = [
            "containerIdentifier": .string(db.address.container), "environment": .string(db.address.environment.rawValue),
            "databaseScope": .string(me == loc.owner ? "PRIVATE" : "SHARED"), "zoneID": loc.zoneID.json, "shortGUID": .string(guid),
            "webpageURL": .string(ShareInfo.url(shortGUID: guid)),
        ]
        if let shown = loc.json(shownTo: me, style: style) { o["share"] = shown }
        if let owner = loc.state.owner {
            o["ownerIdentity"] = ["userRecordName": .string(owner.userRecordName), "lookupInfo": ["emailAddress": .string(owner.emailAddress)]]
        }
        if let root = loc.state.rootRecordName {
            o["rootRecordName"] = .string(root)
            if req.shouldFetchRootRecord, let r = try Shares(db).record(root, in: loc), try Shares(db).mayRead(r, in: loc) {
                o["rootRecord"] = r.response(style, desiredKeys: req.rootRecordDesiredKeys)
            }
        }
        if let me = me, let view = loc.state.view(for: me), let p = loc.state.participants(shownTo: me, view).first(where: { $0.userRecordName == me }) {
            o["participantPermission"] = .string(p.permission.rawValue)
            o["participantStatus"] = .string(p.acceptanceStatus.rawValue)
            o["participantType"] = .string(p.type.rawValue)
        }
        return .object(o)
    }
}

/// The body `records/resolve` and `records/accept` share: `{shortGUIDs: [{value,
/// shouldFetchRootRecord?, rootRecordDesiredKeys?}]}`.
public struct ShortGUIDsRequest: Sendable {
    public var shortGUIDs: [ShortGUIDRequest]

    public init(shortGUIDs: [ShortGUIDRequest]) {
        self.shortGUIDs = shortGUIDs
    }

    public init(json body: JSONValue) throws {
        shortGUIDs = try ShortGUIDRequest.list(json: body, "shortGUIDs request")
    }
}
