import CKCrypto
import CKJSON
import Foundation

extension Limits {
    /// CloudKit's asset file size limit (50 MB, Web Services reference "Limits"; an upload URL
    /// takes 15 MB, a conflict the reference notes — ck keeps the documented limit). ck stores
    /// and reads no larger asset; a remote asset is as its server sent it.
    public static let assetBytes: Int64 = 50_000_000
    /// A downloadURL longer than this is not one a server sends (Apple's are ~600 bytes); asset
    /// values do not count toward the 1 MB record limit, so their strings are bounded here.
    public static let assetURLBytes = 8192
    /// The other strings of an asset value (checksums, keys: tens of bytes on the service).
    public static let assetStringBytes = 1024
}

/// An ASSETID value (reference §1.3): `{fileChecksum, size}` as stored; in responses also
/// `downloadURL` and, in private and shared databases, `wrappingKey` and `referenceChecksum`.
///
/// An asset whose bytes this data directory holds is *local*: stored as `{fileChecksum,
/// size}`, its `downloadURL` a `file://` URL into the asset store. An asset copied from a real
/// server response whose bytes are elsewhere (`https://…icloud-content.com/…`) is *remote*: it
/// keeps the keys the server sent and its bytes cannot be read here.
///
/// What a value sent to ck may be: `fileChecksum` canonical base64; `size` a non-negative
/// integer, at most `Limits.assetBytes` unless the asset is remote; a `downloadURL` either an
/// `https://` URL (remote) or a `file://` URL naming a file of an asset store as ck prints it,
/// `…/assets/<2 hex>/<64 hex>`, whose name is the checksum (see `source(ofURL:checksum:)`).
public enum AssetValue {
    /// An asset's `fileChecksum`: the base64 SHA-256 of its bytes.
    public static func checksum(of bytes: [UInt8]) -> String { Data(SHA256.digest(bytes)).base64EncodedString() }

    /// Keys kept from a value as given (a request, or a record copied from a response).
    package static let keptKeys = ["fileChecksum", "size", "downloadURL", "wrappingKey", "referenceChecksum"]

    /// Checks an asset dictionary's shape and keeps the keys that describe it. Whether its
    /// bytes can be accounted for (and its downloadURL used) is the save's business
    /// (`RecordWriter`), per record.
    package static func canonical(name: String, value: JSONValue) throws -> JSONValue {
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
        // `receipt` (an upload's, or a rereference's) is carried to the save, which checks it
        // for a web client and never stores it.
        for k in ["downloadURL", "wrappingKey", "referenceChecksum", "receipt"] {
            guard let v = o[k], !v.isNull else { continue }
            guard let s = v.stringValue else { throw CloudKitError.badRequest("field '\(name)': asset '\(k)' must be a string") }
            let most = k == "downloadURL" ? Limits.assetURLBytes : Limits.assetStringBytes
            if s.utf8.count > most {
                throw CloudKitError.badRequest("field '\(name)': asset '\(k)' holds \(s.utf8.count) bytes; at most \(most) are accepted")
            }
            out[k] = .string(s)
        }
        try checkChecksum(sum, field: name)
        if size > Limits.assetBytes, !(o["downloadURL"]?.stringValue.map(isHTTPSURL) ?? false) {
            throw tooLarge(size, what: "field '\(name)'")
        }
        return .object(out)
    }

    /// A fileChecksum is base64 as the service writes it: canonical, so that one checksum has
    /// one spelling (`…gN=` decodes to the bytes of `…gM=`, and would name the same file).
    package static func checkChecksum(_ sum: String, field: String) throws {
        if sum.utf8.count > Limits.assetStringBytes {
            throw CloudKitError.badRequest("field '\(field)': asset 'fileChecksum' holds \(sum.utf8.count) bytes; at most \(Limits.assetStringBytes) are accepted")
        }
        guard let d = Data(base64Encoded: sum), d.base64EncodedString() == sum else {
            throw CloudKitError.badRequest("field '\(field)': asset fileChecksum '\(Names.describe(sum))' is not canonical base64 (the base64 of its bytes, as the service writes it, with '=' padding)")
        }
    }

    /// LIMIT_EXCEEDED for an asset over CloudKit's limit; `what` names the field.
    package static func tooLarge(_ size: Int64, what: String, recordName: String? = nil) -> CloudKitError {
        CloudKitError(.limitExceeded, "\(what): an asset of \(size) bytes is larger than CloudKit's asset limit of \(Limits.assetBytes) bytes (50 MB)",
                      recordName: recordName)
    }

    /// Where a value's bytes are, as its downloadURL says.
    package enum Source: Equatable, Sendable {
        /// An `https://` URL: a server's asset, whose bytes are not here.
        case remote
        /// A file of an asset store, as ck prints it: `<dataDirectory>/assets/<shard>/<name>`.
        case exported(ExportedAssetFile)
        /// A `downloadURL` that `ck serve` handed out (`http://<loopback>/assets/<2 hex>/<64
        /// hex>`): a record fetched over HTTP and saved back as it came. Its bytes are in the
        /// store that served it, or nowhere this store can read.
        case served
    }

    /// Classifies a downloadURL sent in a value: an `https://` URL, or a `file://` URL of the
    /// exact shape ck prints (`file:///…/assets/<2 hex>/<64 hex>`, the hex that of the
    /// 32-byte SHA-256 the value's checksum names). Anything else is refused, with a reason
    /// that fits after "its downloadURL '…' ".
    /// Whether `url` is a loopback `http://` URL of `/assets/<shard>/<hex>` of this hex (with
    /// the query that signs it, which a save does not check: the record must hold the asset).
    package static func isServedURL(_ url: String, hex: String) -> Bool {
        let rest = url.dropFirst("http://".count)
        guard let slash = rest.firstIndex(of: "/") else { return false }
        let host = rest[..<slash]
        let name = host.hasPrefix("[") ? String(host.prefix { $0 != "]" }) + "]" : String(host.split(separator: ":").first ?? "")
        guard name == "localhost" || name.hasPrefix("127.") || name == "[::1]" else { return false }
        return rest[slash...].prefix { $0 != "?" } == "/assets/" + hex.prefix(2) + "/" + hex
    }

    package static func source(ofURL url: String, checksum sum: String) throws -> Source {
        if isHTTPSURL(url) { return .remote }
        if url.hasPrefix("http://") {
            guard let d = Data(base64Encoded: sum), d.count == 32, isServedURL(url, hex: Hex.string(Array(d))) else {
                throw CloudKitError.badRequest("is an http:// URL, which only ck serve's own asset URLs may be (http://127.0.0.1:PORT/assets/<2 hex>/<64 hex of the checksum>)")
            }
            return .served
        }
        if url.hasPrefix("https://") { throw CloudKitError.badRequest("is not a valid https:// URL") }
        guard url.hasPrefix("file://") else {
            throw CloudKitError.badRequest("is neither an https:// URL (a server's asset) nor a file:// URL into an asset store")
        }
        let shape = "ck reads a file:// downloadURL only from an asset store, as ck prints it: file:///…/assets/<2 hex>/<64 hex of the checksum>"
        guard let path = localPath(ofURL: url), String(url.dropFirst(7)).removingPercentEncoding != nil, !path.contains("\0") else {
            throw CloudKitError.badRequest("could not be read: it is not a file:// URL of a file on this machine (\(shape))")
        }
        var parts = path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard parts.count >= 4, let name = parts.popLast(), let shard = parts.popLast(), parts.popLast() == "assets",
              !parts.dropFirst().contains(where: { $0.isEmpty || $0 == "." || $0 == ".." }) else {
            throw CloudKitError.badRequest("could not be read: \(shape)")
        }
        guard let d = Data(base64Encoded: sum), d.count == 32 else {
            throw CloudKitError.badRequest("could not be read: its checksum is not a SHA-256 (32 bytes), so no asset store holds it")
        }
        let hex = Hex.string(Array(d))
        guard name == hex, shard == String(hex.prefix(2)) else {
            throw CloudKitError.badRequest("could not be read: \(shape); the file is not named after the checksum")
        }
        let dir = parts.count == 1 ? "/" : parts.joined(separator: "/")
        return .exported(ExportedAssetFile(dataDirectory: dir, shard: shard, name: name))
    }

    /// A syntactically valid `https://` URL: a host name (letters, digits, `-`, dots) or a
    /// bracketed IPv6 address, an optional port, no user information, and then only visible
    /// ASCII with well-formed `%` escapes (Apple's URLs hold a literal `${f}`, so braces pass).
    package static func isHTTPSURL(_ url: String) -> Bool {
        let u = Array(url.utf8)
        guard u.count <= Limits.assetURLBytes, url.hasPrefix("https://") else { return false }
        var i = 8
        func isHex(_ c: UInt8) -> Bool { (48...57).contains(c) || (65...70).contains(c) || (97...102).contains(c) }
        func isAlnum(_ c: UInt8) -> Bool { (48...57).contains(c) || (65...90).contains(c) || (97...122).contains(c) }
        if i < u.count, u[i] == UInt8(ascii: "[") {
            guard let close = u[i...].firstIndex(of: UInt8(ascii: "]")), close > i + 2,
                  u[(i + 1)..<close].allSatisfy({ isHex($0) || $0 == UInt8(ascii: ":") || $0 == UInt8(ascii: ".") }) else { return false }
            i = close + 1
        } else {
            // Labels of letters, digits and inner hyphens, separated by single dots (a final
            // dot, as in "example.com.", is allowed).
            var label = 0, labels = 0
            var previous: UInt8 = 0
            while i < u.count, isAlnum(u[i]) || u[i] == UInt8(ascii: "-") || u[i] == UInt8(ascii: ".") {
                if u[i] == UInt8(ascii: ".") {
                    guard label > 0, previous != UInt8(ascii: "-") else { return false }
                    label = 0
                } else {
                    if label == 0 { guard u[i] != UInt8(ascii: "-") else { return false }; labels += 1 }
                    label += 1
                    guard label <= 63 else { return false }
                }
                previous = u[i]
                i += 1
            }
            guard labels > 0, previous != UInt8(ascii: "-") else { return false }
        }
        if i < u.count, u[i] == UInt8(ascii: ":") {
            let start = i + 1
            i = start
            while i < u.count, (48...57).contains(u[i]) { i += 1 }
            guard i > start, i - start <= 5, let port = Int(String(decoding: u[start..<i], as: UTF8.self)), port <= 65535 else { return false }
        }
        guard i == u.count || [UInt8(ascii: "/"), UInt8(ascii: "?"), UInt8(ascii: "#")].contains(u[i]) else { return false }
        let refused: Set<UInt8> = [UInt8(ascii: "\""), UInt8(ascii: "<"), UInt8(ascii: ">"), UInt8(ascii: "\\")]
        while i < u.count {
            let c = u[i]
            guard c > 0x20, c < 0x7F, !refused.contains(c) else { return false }
            if c == UInt8(ascii: "%") {
                guard i + 2 < u.count, isHex(u[i + 1]), isHex(u[i + 2]) else { return false }
                i += 3
                continue
            }
            i += 1
        }
        return true
    }

    /// A downloadURL as a message shows it: control characters escaped, a long one cut in the
    /// middle (its scheme and its file name are what tell).
    package static func describeURL(_ url: String) -> String {
        let scalars = Array(url.unicodeScalars)
        func show(_ s: ArraySlice<Unicode.Scalar>) -> String {
            s.map { $0.value < 0x20 || ($0.value >= 0x7F && $0.value <= 0x9F) ? "\\u{\(String($0.value, radix: 16))}" : String($0) }.joined()
        }
        guard scalars.count > 120 else { return show(scalars[...]) }
        return show(scalars.prefix(50)) + "…" + show(scalars.suffix(70))
    }

    /// The `file://` path a downloadURL names, if it names a file on this machine.
    public static func localPath(ofURL url: String) -> String? {
        guard url.hasPrefix("file://") else { return nil }
        var rest = String(url.dropFirst("file://".count))
        if rest.hasPrefix("localhost/") { rest = String(rest.dropFirst("localhost".count)) }
        guard rest.hasPrefix("/") else { return nil }
        return rest.removingPercentEncoding ?? rest
    }

    /// A stored value whose bytes live elsewhere: only a remote asset keeps its downloadURL in
    /// the store (an `https://` one; a save refuses any other kind).
    public static func isRemote(_ v: JSONValue) -> Bool {
        guard let url = v["downloadURL"]?.stringValue else { return false }
        return localPath(ofURL: url) == nil
    }

    /// The stored form of a value whose bytes this data directory holds.
    package static func local(_ v: JSONValue) -> JSONValue {
        guard let sum = v["fileChecksum"], let size = v["size"] else { return v }
        return ["fileChecksum": sum, "size": size]
    }

    /// A stored value (or list of values) as a response shows it.
    package static func response(_ v: JSONValue, style: ResponseStyle) -> JSONValue {
        switch v {
        case .array(let a): return .array(a.map { response($0, style: style) })
        case .object(var o):
            guard let sum = o["fileChecksum"]?.stringValue, !isRemote(v) else { return v }
            let relative = AssetValue.relativePath(checksum: sum)
            let path = style.assetBase + relative
            var url = path.addingPercentEncoding(withAllowedCharacters: urlAllowed) ?? path
            if let signer = style.assetURLs, let q = signer.query(hex: String(relative.split(separator: "/").last ?? "")) { url += "?" + q }
            o["downloadURL"] = .string(url)
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
    package static func wrappingKey(checksum: String) -> String {
        Data(SHA256.digest(Array(("ck.wrappingKey\u{0}" + checksum).utf8)).prefix(16)).base64EncodedString()
    }

    /// A reference checksum shaped like the service's (a version byte, then 20 bytes).
    package static func referenceChecksum(checksum: String) -> String {
        Data([1] + SHA256.digest(Array(("ck.referenceChecksum\u{0}" + checksum).utf8)).prefix(20)).base64EncodedString()
    }
}

extension AssetValue {
    /// `xx/<hex>` for a checksum, or a path that cannot exist for a malformed one.
    public static func relativePath(checksum: String) -> String {
        guard let d = Data(base64Encoded: checksum), d.count == 32 else { return "invalid/" + PathEncoding.component(checksum) }
        let hex = Hex.string(Array(d))
        return String(hex.prefix(2)) + "/" + hex
    }
}
