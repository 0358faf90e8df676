import CKModel
import CKStore

/// ck's `tag create|list|delete`: named points across every zone of the caller's database
/// (the public database, or their own private one), kept beside it (TagStore). A tag is a
/// reference only in its database. The shared database has none: its zones' histories are
/// their owners', so tags there are ACCESS_DENIED and nothing changes.
public struct CreateTagRequest: Sendable {
    public var name: String
    public var message: String?

    public init(name: String, message: String? = nil) {
        self.name = name
        self.message = message
    }
}

public struct DeleteTagsRequest: Sendable {
    public var names: [String]

    public init(names: [String]) { self.names = names }
}

extension CloudKitAPI {
    /// The tag: `{name, message, created, zones: [{zone, incarnation, seq}]}`; EXISTS when the
    /// name is taken in this database.
    public func createTag(_ r: CreateTagRequest, as caller: Caller) throws -> DocumentBody {
        try TagStore.validate(r.name)
        let ctx = try preflight(nil, caller, need: .write)
        let tag = try TagStore(of: ctx.db).create(r.name, message: r.message, now: clock.now())
        return DocumentBody(tag.json.objectValue ?? [:])
    }

    /// `{tags: [...]}`, by name.
    public func listTags(as caller: Caller) throws -> DocumentBody {
        let ctx = try preflight(nil, caller)
        return DocumentBody(["tags": .array(try TagStore(of: ctx.db).list().map(\.json))], listKey: "tags")
    }

    /// `{tags: [...]}` of the tags deleted. Every name is checked first: an unknown one
    /// (NOT_FOUND) deletes nothing.
    public func deleteTags(_ r: DeleteTagsRequest, as caller: Caller) throws -> DocumentBody {
        for n in r.names { try Names.validateName(n, noun: "tag name") }
        let ctx = try preflight(nil, caller, need: .write)
        let store = try TagStore(of: ctx.db)
        let tags = try r.names.map { try store.load($0) }
        for t in tags { _ = try store.delete(t.name) }
        return DocumentBody(["tags": .array(tags.map(\.json))], listKey: "tags")
    }
}
