import CKJSON
import CKModel
import CKStore

/// An answer as its endpoint returns it: one JSON document made of `members` and, under
/// `listKey`, a list of `items` that encode themselves (records write their own bytes). The
/// CLI prints the document (or, as NDJSON and tables, the items one a line); `ck serve` sends
/// it. Both get the same bytes from `encodeJSON`.
public protocol ResponseBody {
    /// The key of the list of items (`records`, `zones`, …); nil when the body is one document.
    var listKey: String? { get }
    /// The items under `listKey`, in order.
    var items: [any JSONEncodable] { get }
    /// The body's other members (`continuationMarker`, `syncToken`, …; the whole body when
    /// there is no list).
    var members: [String: JSONValue] { get }
}

extension ResponseBody {
    public var listKey: String? { nil }
    public var items: [any JSONEncodable] { [] }

    /// The whole body as a tree.
    public var jsonValue: JSONValue {
        var o = members
        if let k = listKey { o[k] = .array(items.map(\.jsonValue)) }
        return .object(o)
    }

    /// The body's bytes, as JSONWriter lays out the tree: keys sorted, pretty or compact.
    public func encodeJSON(into out: inout [UInt8], indent: Int = 0, pretty: Bool) {
        var o = JSONObjectEmitter(indent: indent, pretty: pretty)
        let keys = (Array(members.keys) + (listKey.map { [$0] } ?? [])).sorted { $0.byteOrder($1) < 0 }
        for k in keys {
            o.key(k, into: &out)
            guard k == listKey else { JSONWriter.emit(members[k]!, into: &out, indent: o.valueIndent, pretty: pretty); continue }
            let list = items
            if list.isEmpty { out.append(contentsOf: "[]".utf8); continue }
            out.append(0x5B)
            for (n, item) in list.enumerated() {
                if n > 0 { out.append(0x2C) }
                if pretty { JSONWriter.newline(o.valueIndent + 2, into: &out) }
                item.encodeJSON(into: &out, indent: o.valueIndent + 2, pretty: pretty)
            }
            if pretty { JSONWriter.newline(o.valueIndent, into: &out) }
            out.append(0x5D)
        }
        o.close(into: &out)
    }
}

/// A body that is one JSON document, built as a tree (small answers: a zone's token, a tag,
/// a gc summary). `listKey` names its list, when it has one NDJSON should print an item a line.
public struct DocumentBody: ResponseBody {
    public var document: [String: JSONValue]
    public var listKey: String?

    public init(_ document: [String: JSONValue], listKey: String? = nil) {
        self.document = document
        self.listKey = listKey
    }

    public var items: [any JSONEncodable] { listKey.flatMap { document[$0]?.arrayValue } ?? [] }
    public var members: [String: JSONValue] {
        var o = document
        if let k = listKey { o[k] = nil }
        return o
    }
}
