/// The console's key: 32 random bytes made when the server starts, as 64 hex digits. The
/// console URL ck prints carries it in its fragment (`/console/#key=…`), which the browser
/// never sends; the page keeps it and sends it with each call (ConsoleGate). Knowing it is what
/// lets a page act on the store, so it is compared in constant time and never logged.
public struct ConsoleSecret: Sendable {
    let value: String

    public init() {
        var rng = SystemRandomNumberGenerator()
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(64)
        for _ in 0..<32 {
            let b = UInt8.random(in: 0...255, using: &rng)
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 15)])
        }
        value = String(decoding: out, as: UTF8.self)
    }

    /// Whether `candidate` is the secret, in time that does not depend on where they differ.
    func matches(_ candidate: String?) -> Bool {
        guard let candidate else { return false }
        let a = Array(value.utf8), b = Array(candidate.utf8)
        guard a.count == b.count else { return false }
        var diff: UInt8 = 0
        for i in 0..<a.count { diff |= a[i] ^ b[i] }
        return diff == 0
    }
}
