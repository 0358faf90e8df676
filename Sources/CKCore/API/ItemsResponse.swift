import CKJSON
import CKModel
import CKStore

/// A body whose list holds one item per item of the request, in order: the item, or the error
/// dictionary of the item that failed (a Zone, Subscription or ShortGUID Fetch Error: the
/// envelope, naming the zone or subscription it concerns) — `{zones: […]}`, `{subscriptions:
/// […]}`, `{users: […]}`, `{results: […]}`. CloudKit JS takes the items with a
/// `serverErrorCode` as the request's per-item errors.
public struct ItemsResponse: ResponseBody {
    public enum Item: Sendable {
        case value(JSONValue)
        case failed(CloudKitError)

        public var error: CloudKitError? { if case .failed(let e) = self { return e }; return nil }
        public var value: JSONValue? { if case .value(let v) = self { return v }; return nil }
    }

    public let key: String
    public var results: [Item]
    /// Who reads it: a failed item's dictionary carries `ckErrorCode` for the command line only.
    public let audience: ResponseStyle.Audience

    public init(_ key: String, _ results: [Item], for audience: ResponseStyle.Audience) {
        self.key = key
        self.results = results
        self.audience = audience
    }

    /// The items that failed, in order.
    public var failures: [CloudKitError] { results.compactMap(\.error) }

    public var listKey: String? { key }
    public var members: [String: JSONValue] { [:] }
    public var items: [any JSONEncodable] {
        results.map { r -> JSONValue in
            switch r {
            case .value(let v): return v
            case .failed(let e): return e.envelope(for: audience)
            }
        }
    }
}
