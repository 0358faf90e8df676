import CKCrypto
import CKModel
import CKStore
import Foundation

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
        let secret = assetURLSecret
        return AssetURLSigner(reader: reader ?? "", expires: until, secret: { secret.bytes() })
    }
}
