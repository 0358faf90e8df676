import Foundation

/// An ASSETID value (reference §1.3): `{fileChecksum, size}` as stored; in responses also
/// `downloadURL` and, in private and shared databases, `wrappingKey` and `referenceChecksum`.
///
/// An asset whose bytes this data directory holds is *local*: stored as `{fileChecksum,
/// size}`, its `downloadURL` a `file://` URL into the asset store. An asset copied from a real
/// server response whose bytes are elsewhere (`https://…icloud-content.com/…`) is *remote*: it
/// keeps the keys the server sent and its bytes cannot be read here.
public enum AssetValue {
    /// Keys kept from a value as given (a request, or a record copied from a response).
    static let keptKeys = ["fileChecksum", "size", "downloadURL", "wrappingKey", "referenceChecksum"]

    /// Checks an asset dictionary and keeps the keys that describe it.
    static func canonical(name: String, value: JSONValue) throws -> JSONValue {
        guard let o = value.objectValue else {
            throw CloudKitError.badRequest("field '\(name)' is ASSETID but the value is \(value.kindName) (an asset dictionary expected)")
        }
        guard let sum = o["fileChecksum"]?.stringValue, !sum.isEmpty else {
            throw CloudKitError.badRequest("field '\(name)': an asset needs a 'fileChecksum'")
        }
        guard let size = o["size"]?.int64Value, size >= 0 else {
            throw CloudKitError.badRequest("field '\(name)': an asset needs a non-negative integer 'size'")
        }
        var out: [String: JSONValue] = ["fileChecksum": .string(sum), "size": .int(size)]
        for k in ["downloadURL", "wrappingKey", "referenceChecksum"] {
            guard let v = o[k], !v.isNull else { continue }
            guard let s = v.stringValue else { throw CloudKitError.badRequest("field '\(name)': asset '\(k)' must be a string") }
            out[k] = .string(s)
        }
        return .object(out)
    }

    /// The `file://` path a downloadURL names, if it names a file on this machine.
    public static func localPath(ofURL url: String) -> String? {
        guard url.hasPrefix("file://") else { return nil }
        var rest = String(url.dropFirst("file://".count))
        if rest.hasPrefix("localhost/") { rest = String(rest.dropFirst("localhost".count)) }
        guard rest.hasPrefix("/") else { return nil }
        return rest.removingPercentEncoding ?? rest
    }

    /// A value whose bytes live elsewhere: it names a downloadURL that is not a local file.
    public static func isRemote(_ v: JSONValue) -> Bool {
        guard let url = v["downloadURL"]?.stringValue else { return false }
        return localPath(ofURL: url) == nil
    }

    /// The stored form of a value whose bytes this data directory holds.
    static func local(_ v: JSONValue) -> JSONValue {
        guard let sum = v["fileChecksum"], let size = v["size"] else { return v }
        return ["fileChecksum": sum, "size": size]
    }

    /// A stored value (or list of values) as a response shows it.
    static func response(_ v: JSONValue, style: ResponseStyle) -> JSONValue {
        switch v {
        case .array(let a): return .array(a.map { response($0, style: style) })
        case .object(var o):
            guard let sum = o["fileChecksum"]?.stringValue, !isRemote(v) else { return v }
            let path = style.assetBase + AssetStore.relativePath(checksum: sum)
            o["downloadURL"] = .string(path.addingPercentEncoding(withAllowedCharacters: urlAllowed) ?? path)
            if style.encryptedAssets {
                o["wrappingKey"] = .string(wrappingKey(checksum: sum))
                o["referenceChecksum"] = .string(referenceChecksum(checksum: sum))
            }
            return .object(o)
        default: return v
        }
    }

    /// Characters a `file://` URL keeps as they are (RFC 3986 path characters, and the scheme's `:`).
    private static let urlAllowed: CharacterSet = {
        var c = CharacterSet.urlPathAllowed
        c.insert(charactersIn: ":")
        c.remove(charactersIn: "%")
        return c
    }()

    /// The 16-byte key that would protect the asset's bytes, as the private database reports
    /// one. ck encrypts nothing; the key is derived from the checksum so that the same state
    /// prints the same bytes.
    static func wrappingKey(checksum: String) -> String {
        Data(SHA256.digest(Array(("ck.wrappingKey\u{0}" + checksum).utf8)).prefix(16)).base64EncodedString()
    }

    /// A reference checksum shaped like the service's (a version byte, then 20 bytes).
    static func referenceChecksum(checksum: String) -> String {
        Data([1] + SHA256.digest(Array(("ck.referenceChecksum\u{0}" + checksum).utf8)).prefix(20)).base64EncodedString()
    }
}
