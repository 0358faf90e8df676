/// HMAC-SHA256 (RFC 2104), used to make change tokens unforgeable.
public enum HMAC {
    public static func sha256(key: [UInt8], message: [UInt8]) -> [UInt8] {
        var k = key.count > 64 ? SHA256.digest(key) : key
        k += [UInt8](repeating: 0, count: 64 - k.count)
        let inner = SHA256.digest(k.map { $0 ^ 0x36 } + message)
        return SHA256.digest(k.map { $0 ^ 0x5c } + inner)
    }
}
