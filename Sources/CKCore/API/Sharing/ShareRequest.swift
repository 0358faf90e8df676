import CKJSON
import CKModel
import CKStore

/// A share create as Web Services sends it in records/modify (reference §3.1, Sharing): a
/// record of type `cloudkit.share` with `forRecord {recordName, recordChangeTag}` (none: the
/// zone-wide share), `publicPermission` and `participants`, each
/// `{type: USER, permission, acceptanceStatus: INVITED, userIdentity: {lookupInfo: {emailAddress}}}`.
extension ModifyRequest {
    static func parseShare(_ r: [String: JSONValue], type: RecordOperationType, context: String) throws -> ShareChange {
        guard type == .create else {
            throw CloudKitError.badRequest("\(context): records/modify takes share creates; a share changes through share operations (inviting and removing participants, deleting the share), or its record is deleted")
        }
        var forRecord: String?, tag: String?
        if let f = r["forRecord"], !f.isNull {
            guard let n = f["recordName"]?.stringValue else { throw CloudKitError.badRequest("\(context): forRecord must be {\"recordName\": …, \"recordChangeTag\": …}") }
            try Names.validateRecordName(n)
            forRecord = n
            tag = f["recordChangeTag"]?.stringValue
        } else if let n = r["recordName"]?.stringValue, n != ShareInfo.zoneWideName {
            throw CloudKitError(.badRequest, "\(context): a share needs forRecord (a hierarchy share), or the record name \(ShareInfo.zoneWideName) (a zone-wide share)", recordName: n)
        }
        var perm = SharePermission.none
        if let p = r["publicPermission"], !p.isNull {
            guard let s = p.stringValue, let v = SharePermission(rawValue: s) else {
                throw CloudKitError.badRequest("\(context): publicPermission must be NONE, READ_ONLY or READ_WRITE")
            }
            perm = v
        }
        var participants: [ShareParticipantRequest] = []
        if let list = r["participants"], !list.isNull {
            guard let a = list.arrayValue else { throw CloudKitError.badRequest("\(context): participants must be an array") }
            for (i, p) in a.enumerated() where p["type"]?.stringValue != ShareParticipantType.owner.rawValue {
                participants.append(try ShareParticipantRequest.parse(json: p, context: "\(context).participants[\(i)]"))
            }
        }
        var title: String?
        if let t = r["fields"]?[ShareInfo.titleField], !t.isNull {
            guard let s = t["value"]?.stringValue else { throw CloudKitError.badRequest("\(context): field \(ShareInfo.titleField) must be a STRING") }
            title = s
        }
        return .create(forRecord: forRecord, forRecordTag: tag, publicPermission: perm, participants: participants, title: title)
    }
}
