import CKCrypto
import Foundation

/// The `downloadURL`s `ck serve` puts in the records it answers are capabilities, as
/// CloudKit's are: `<server>/assets/<2 hex>/<64 hex>?e=<expiry, s since 1970>&r=<reader>&s=<mac>`,
/// the MAC (HMAC-SHA256 with the data directory's secret) binding the asset's hash, the user
/// the answer was made for, and the expiry. The server keeps nothing for them; without a valid
/// one an asset is NOT_FOUND, the same answer whether its bytes are stored or not.
///
/// Lifetime: Apple documents none. Its download URLs (`cvws.icloud-content.com/B/…?…&e=<s>&…`)
/// carry their expiry, and clients that download from a long listing report them refused
/// (410) after about 30 to 40 minutes; ck takes the low end, 30 minutes, so a client that
/// works against ck refreshes its URLs in time against CloudKit too. The expiry is rounded up
/// to a whole minute: answers within that minute give the same URL, so a browser's cache
/// serves it again.
public struct AssetURLSigner: Sendable {
    /// The user record name the URLs are made for ("" for nobody: the public database read
    /// with an API token alone).
    let reader: String
    /// Seconds since 1970.
    let expires: Int64
    let secret: SecretCache

    /// The query of an asset's URL, or nil when the secret cannot be had (the URL then names
    /// the asset unsigned, and is refused like a forged one).
    func query(hex: String) -> String? {
        guard let key = secret.bytes() else { return nil }
        var q = "e=\(expires)"
        if !reader.isEmpty { q += "&r=" + reader }
        return q + "&s=" + AssetURLSigner.mac(hex: hex, reader: reader, expires: expires, key: key)
    }

    static func mac(hex: String, reader: String, expires: Int64, key: [UInt8]) -> String {
        ChangeToken.base64url(Array(HMAC.sha256(key: key, message: Array("ck1d\u{0}\(hex)\u{0}\(reader)\u{0}\(expires)".utf8)).prefix(16)))
    }
}

/// The data directory's secret, read once (it never changes once made) and made only when a
/// URL is first signed: a read that answers no asset writes nothing.
final class SecretCache: @unchecked Sendable {
    private let paths: DataPaths
    private let lock = NSLock()
    private var cached: [UInt8]?

    init(paths: DataPaths) { self.paths = paths }

    /// The secret, made if there is none yet.
    func bytes() -> [UInt8]? {
        lock.lock()
        defer { lock.unlock() }
        if cached == nil { cached = try? TokenSecret(paths: paths).getOrCreate() }
        return cached
    }

    /// The secret if one exists (checking a URL never makes one).
    func existing() -> [UInt8]? {
        lock.lock()
        defer { lock.unlock() }
        if cached == nil { cached = try? TokenSecret(paths: paths).existing() }
        return cached
    }
}

extension CloudKitAPI {
    /// How long a `downloadURL` of `ck serve` is good for (see `AssetURLSigner`).
    public static let downloadURLLifetime: Int64 = 30 * 60 * 1000

    /// The signer of the asset URLs an answer made now for `reader` carries; nil for the CLI,
    /// whose `file://` URLs name the data directory's own files.
    func assetURLSigner(reader: String?) -> AssetURLSigner? {
        guard serverURL != nil else { return nil }
        let until = (clock.now() + Self.downloadURLLifetime + 59_999) / 60_000 * 60
        return AssetURLSigner(reader: reader ?? "", expires: until, secret: assetURLSecret)
    }
}
