import CKCrypto

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
    package let reader: String
    /// Seconds since 1970.
    package let expires: Int64
    /// The data directory's secret (made when first asked for); nil when it cannot be had.
    package let secret: @Sendable () -> [UInt8]?

    package init(reader: String, expires: Int64, secret: @escaping @Sendable () -> [UInt8]?) {
        self.reader = reader
        self.expires = expires
        self.secret = secret
    }

    /// The query of an asset's URL, or nil when the secret cannot be had (the URL then names
    /// the asset unsigned, and is refused like a forged one).
    package func query(hex: String) -> String? {
        guard let key = secret() else { return nil }
        var q = "e=\(expires)"
        if !reader.isEmpty { q += "&r=" + reader }
        return q + "&s=" + AssetURLSigner.mac(hex: hex, reader: reader, expires: expires, key: key)
    }

    package static func mac(hex: String, reader: String, expires: Int64, key: [UInt8]) -> String {
        Base64URL.encode(Array(HMAC.sha256(key: key, message: Array("ck1d\u{0}\(hex)\u{0}\(reader)\u{0}\(expires)".utf8)).prefix(16)))
    }
}
