import CKJSON

/// CloudKit sharing (CKShare), as Web Services shows it (reference §1.1 sharing keys, §1.6):
/// a share is a record of type `cloudkit.share` in a custom zone of its owner's private
/// database, carrying `shortGUID`, `publicPermission`, `participants` and `owner`. A hierarchy
/// share names its root record, whose `share` points back at it; the records whose `parent`
/// chain reaches the root are shared with it. A zone-wide share is the record
/// `cloudkit.zoneshare` and shares every record of its zone. See Docs/sharing.md.
public enum ShareInfo {
    public static let recordType = "cloudkit.share"
    /// The record name of a zone-wide share (`CKRecordNameZoneWideShare`).
    public static let zoneWideName = "cloudkit.zoneshare"
    /// CKShare's title (`CKShare.SystemFieldKey.title`), a STRING field of the share record.
    public static let titleField = "cloudkit.title"
    /// The top-level keys a share record stores besides a record's own.
    package static let keys: Set<String> = ["publicPermission", "participants", "owner", "rootRecordName"]
    /// Stored, never shown: the root a hierarchy share belongs to (the root's `share` says it).
    package static let storedOnlyKeys: [String] = ["rootRecordName"]
    /// Where a share can be opened: `https://www.icloud.com/share/<shortGUID>`.
    public static let urlPrefix = "https://www.icloud.com/share/"

    public static func url(shortGUID: String) -> String { urlPrefix + shortGUID }

    /// The short GUID a share URL (or a bare short GUID) names; nil when it names none.
    public static func shortGUID(fromReference s: String) -> String? {
        var t = Substring(s)
        for p in [urlPrefix, "http://www.icloud.com/share/", "www.icloud.com/share/"] where t.hasPrefix(p) {
            t = t.dropFirst(p.count)
            if let cut = t.firstIndex(where: { $0 == "#" || $0 == "?" || $0 == "/" }) { t = t[..<cut] }
            break
        }
        guard t.count >= 6, t.count <= 64,
              t.unicodeScalars.allSatisfy({ ($0.value >= 0x30 && $0.value <= 0x39) || ($0.value >= 0x41 && $0.value <= 0x5A) || ($0.value >= 0x61 && $0.value <= 0x7A) || $0 == "_" || $0 == "-" })
        else { return nil }
        return String(t)
    }
}

/// `CKShare.ParticipantPermission` as Web Services spells it.
public enum SharePermission: String, Sendable, CaseIterable {
    case none = "NONE", readOnly = "READ_ONLY", readWrite = "READ_WRITE"

    /// The CLI's spelling (`readOnly`, `readWrite`, `none`) or the wire's.
    public init?(argument s: String) {
        switch s {
        case "none", "NONE": self = .none
        case "readOnly", "READ_ONLY": self = .readOnly
        case "readWrite", "READ_WRITE": self = .readWrite
        default: return nil
        }
    }
}

/// `CKShare.ParticipantAcceptanceStatus` (pending is INVITED on the wire).
public enum ShareAcceptance: String, Sendable {
    case invited = "INVITED", accepted = "ACCEPTED", removed = "REMOVED"
}

/// `CKShare.ParticipantRole`/`type`: the owner, an invited user, or one who came by a public URL.
public enum ShareParticipantType: String, Sendable {
    case owner = "OWNER", user = "USER", publicUser = "PUBLIC_USER"
}

/// One Share Participant dictionary (reference §1.6).
public struct ShareParticipant: Equatable, Sendable {
    public var participantId: String
    public var userRecordName: String
    public var emailAddress: String
    public var type: ShareParticipantType
    public var permission: SharePermission
    public var acceptanceStatus: ShareAcceptance

    public init(participantId: String = Identifiers.newRecordName(), userRecordName: String, emailAddress: String,
                type: ShareParticipantType, permission: SharePermission, acceptanceStatus: ShareAcceptance) {
        self.participantId = participantId
        self.userRecordName = userRecordName
        self.emailAddress = emailAddress
        self.type = type
        self.permission = permission
        self.acceptanceStatus = acceptanceStatus
    }

    public var json: JSONValue {
        ["participantId": .string(participantId), "type": .string(type.rawValue), "permission": .string(permission.rawValue),
         "acceptanceStatus": .string(acceptanceStatus.rawValue),
         "userIdentity": ["userRecordName": .string(userRecordName), "lookupInfo": ["emailAddress": .string(emailAddress)]]]
    }

    package init(stored j: JSONValue) throws {
        guard let u = j["userIdentity"]?["userRecordName"]?.stringValue, let t = j["type"]?.stringValue.flatMap(ShareParticipantType.init(rawValue:)),
              let p = j["permission"]?.stringValue.flatMap(SharePermission.init(rawValue:)),
              let a = j["acceptanceStatus"]?.stringValue.flatMap(ShareAcceptance.init(rawValue:)) else {
            throw CloudKitError.internalError("stored share participant is malformed")
        }
        self.init(participantId: j["participantId"]?.stringValue ?? "", userRecordName: u,
                  emailAddress: j["userIdentity"]?["lookupInfo"]?["emailAddress"]?.stringValue ?? "", type: t, permission: p, acceptanceStatus: a)
    }
}

/// A share record's state: read from, and written back into, its record.
public struct ShareState: Equatable, Sendable {
    public var recordName: String
    public var publicPermission: SharePermission
    /// The owner first, then the other participants in the order they were added.
    public var participants: [ShareParticipant]
    /// The hierarchy's root; nil for a zone-wide share.
    public var rootRecordName: String?

    public var isZoneWide: Bool { rootRecordName == nil }

    public init(recordName: String, publicPermission: SharePermission, participants: [ShareParticipant], rootRecordName: String?) {
        self.recordName = recordName
        self.publicPermission = publicPermission
        self.participants = participants
        self.rootRecordName = rootRecordName
    }

    /// Nil when the record is no share record.
    public init?(_ r: Record) throws {
        guard r.recordType == ShareInfo.recordType, let info = r.shareInfo else { return nil }
        recordName = r.recordName
        publicPermission = info["publicPermission"]?.stringValue.flatMap(SharePermission.init(rawValue:)) ?? .none
        participants = try (info["participants"]?.arrayValue ?? []).map(ShareParticipant.init(stored:))
        rootRecordName = info["rootRecordName"]?.stringValue
    }

    public var owner: ShareParticipant? { participants.first { $0.type == .owner } }

    public func participant(_ userRecordName: String) -> ShareParticipant? {
        participants.first { $0.userRecordName == userRecordName }
    }

    /// What a user may do with the shared records: the owner everything; a participant who
    /// accepted, their permission; anyone else nothing (nil).
    public func permission(of userRecordName: String) -> SharePermission? {
        guard let p = participant(userRecordName) else { return nil }
        if p.type == .owner { return .readWrite }
        guard p.acceptanceStatus == .accepted, p.permission != .none else { return nil }
        return p.permission
    }

    package var info: [String: JSONValue] {
        var o: [String: JSONValue] = ["publicPermission": .string(publicPermission.rawValue), "participants": .array(participants.map(\.json))]
        if let owner = owner { o["owner"] = owner.json }
        if let r = rootRecordName { o["rootRecordName"] = .string(r) }
        return o
    }

    package mutating func set(_ p: ShareParticipant) {
        if let i = participants.firstIndex(where: { $0.userRecordName == p.userRecordName }) { participants[i] = p } else { participants.append(p) }
    }
}

/// Who a participant request names: an Apple ID or a user record name (a Web Services
/// participant's `userIdentity.lookupInfo`).
public enum ShareUserLookup: Equatable, Sendable {
    case email(String), userRecordName(String)

    public var description: String {
        switch self {
        case .email(let e): return e
        case .userRecordName(let u): return u
        }
    }
}

/// A participant to invite: who, and with what permission.
public struct ShareParticipantRequest: Equatable, Sendable {
    public var user: ShareUserLookup
    public var permission: SharePermission

    public init(user: ShareUserLookup, permission: SharePermission) {
        self.user = user
        self.permission = permission
    }

    /// `APPLE-ID[:readOnly|readWrite]` (default readOnly, as CKShare's).
    public static func parse(argument s: String) throws -> ShareParticipantRequest {
        var id = s
        var perm = SharePermission.readOnly
        if let c = s.lastIndex(of: ":") {
            let p = String(s[s.index(after: c)...])
            guard let parsed = SharePermission(argument: p), parsed != .none else {
                throw CloudKitError.badRequest("participant '\(s)': permission '\(p)' must be readOnly or readWrite")
            }
            perm = parsed
            id = String(s[..<c])
        }
        try Validation.appleID(id)
        return ShareParticipantRequest(user: .email(id), permission: perm)
    }

    /// A Web Services participant dictionary of a share create.
    package static func parse(json j: JSONValue, context: String) throws -> ShareParticipantRequest {
        guard j.objectValue != nil else { throw CloudKitError.badRequest("\(context): a participant must be an object") }
        let perm = try j["permission"].map { v -> SharePermission in
            guard let s = v.stringValue, let p = SharePermission(rawValue: s), p != .none else {
                throw CloudKitError.badRequest("\(context): permission must be READ_ONLY or READ_WRITE")
            }
            return p
        } ?? .readOnly
        if let t = j["type"]?.stringValue, t != ShareParticipantType.user.rawValue {
            throw CloudKitError.badRequest("\(context): only participants of type USER can be invited, not \(t)")
        }
        let identity = j["userIdentity"]
        if let e = identity?["lookupInfo"]?["emailAddress"]?.stringValue {
            try Validation.appleID(e)
            return ShareParticipantRequest(user: .email(e), permission: perm)
        }
        if let u = identity?["userRecordName"]?.stringValue ?? identity?["lookupInfo"]?["userRecordName"]?.stringValue {
            return ShareParticipantRequest(user: .userRecordName(u), permission: perm)
        }
        throw CloudKitError.badRequest("\(context): a participant needs userIdentity.lookupInfo.emailAddress or userIdentity.userRecordName")
    }
}

/// What a share operation does (`RecordOperation.share`). Share records are changed only
/// through these, never by a plain save.
public enum ShareChange: Equatable, Sendable {
    /// Creates a hierarchy share of `forRecord` (optionally checking its tag), or with no
    /// record the zone-wide share.
    case create(forRecord: String?, forRecordTag: String?, publicPermission: SharePermission, participants: [ShareParticipantRequest], title: String?)
    /// The owner invites users (a removed one is invited again).
    case addParticipants([ShareParticipantRequest])
    /// The owner removes a participant (REMOVED).
    case removeParticipant(ShareUserLookup)
    /// The owner changes the public permission.
    case setPublicPermission(SharePermission)
    /// The caller accepts: an invited participant, or anyone when the share is public.
    case accept
    /// A participant leaves (REMOVED).
    case leave
    /// The owner deletes the share; the shared records stay, the root's `share` goes.
    case delete
}
