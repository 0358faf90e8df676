import Foundation

/// The web sessions of `ck serve`: a user signed in on this device, for one container
/// environment, named by a web auth token (`ckWebAuthToken`). One file per session,
/// `web-sessions/<sha256 of the token, hex>.json` — `{schemaVersion, userRecordName,
/// containerIdentifier, environment, created, expires, keepSignedIn, rotated?}` — so the store
/// never holds a token anyone could use: only its hash.
///
/// Lifetimes are CloudKit's: 30 minutes, or 14 days with "keep me signed in", renewed by
/// rotation. A token older than a minute is replaced on its next use (a fresh one with a fresh
/// lifetime); the replaced one stays good for two more minutes, for the requests already on
/// their way with it, and is then dead.
struct WebSessionStore {
    let paths: DataPaths
    let clock: Clock

    static let lifetime: Int64 = 30 * 60 * 1000
    static let keepSignedInLifetime: Int64 = 14 * 24 * 3600 * 1000
    /// How old a token is before a request using it gets its replacement.
    static let rotateAfter: Int64 = 60 * 1000
    /// How long a replaced token still works.
    static let grace: Int64 = 2 * 60 * 1000

    struct Session: Equatable {
        var userRecordName: String
        var container: String
        var environment: Environment
        var created: Int64
        var expires: Int64
        var keepSignedIn: Bool
        /// When it was replaced by a newer token; a replaced session is not replaced again.
        var rotated: Int64?

        var json: JSONValue {
            var o: [String: JSONValue] = ["schemaVersion": .int(DataPaths.schemaVersion), "userRecordName": .string(userRecordName),
                                          "containerIdentifier": .string(container), "environment": .string(environment.rawValue),
                                          "created": .int(created), "expires": .int(expires), "keepSignedIn": .bool(keepSignedIn)]
            if let r = rotated { o["rotated"] = .int(r) }
            return .object(o)
        }

        init(userRecordName: String, container: String, environment: Environment, created: Int64, expires: Int64, keepSignedIn: Bool, rotated: Int64? = nil) {
            self.userRecordName = userRecordName
            self.container = container
            self.environment = environment
            self.created = created
            self.expires = expires
            self.keepSignedIn = keepSignedIn
            self.rotated = rotated
        }

        init?(stored j: JSONValue) {
            guard let u = j["userRecordName"]?.stringValue, let c = j["containerIdentifier"]?.stringValue,
                  let e = j["environment"]?.stringValue.flatMap(Environment.init(rawValue:)),
                  let created = j["created"]?.int64Value, let expires = j["expires"]?.int64Value else { return nil }
            self.init(userRecordName: u, container: c, environment: e, created: created, expires: expires,
                      keepSignedIn: j["keepSignedIn"]?.boolValue ?? false, rotated: j["rotated"]?.int64Value)
        }
    }

    /// 32 random bytes in unpadded base64url (43 characters): nothing in it needs escaping in a
    /// URL, and escaping it anyway (`encodeURIComponent`) changes nothing.
    static func newToken() -> String {
        var rng = SystemRandomNumberGenerator()
        return ChangeToken.base64url((0..<32).map { _ in UInt8.random(in: 0...255, using: &rng) })
    }

    /// Whether `s` is shaped as a token: anything else names no session (and no file).
    /// 32 bytes in unpadded base64url: 43 characters of its alphabet, the last carrying 4 bits
    /// of the last byte and 2 zero bits (so one of `AEIMQUYcgkosw048`). Checked byte by byte:
    /// every request asks.
    static func isToken(_ s: String) -> Bool {
        guard s.utf8.count == 43 else { return false }
        var i = 0
        for b in s.utf8 {
            i += 1
            guard let v = base64urlValue(b) else { return false }
            if i == 43 && v & 3 != 0 { return false }
        }
        return true
    }

    private static func base64urlValue(_ b: UInt8) -> UInt8? {
        switch b {
        case 65...90: return b - 65
        case 97...122: return b - 71
        case 48...57: return b + 4
        case 45: return 62
        case 95: return 63
        default: return nil
        }
    }

    /// The file name of a token's session: its SHA-256, so the store holds no usable token.
    /// Remembered for the tokens last seen (two hashes a request otherwise).
    static func hash(_ token: String) -> String {
        hashes.lock.lock()
        if let h = hashes.byToken[token] { hashes.lock.unlock(); return h }
        hashes.lock.unlock()
        let h = SHA256.hex(Array(token.utf8))
        hashes.lock.lock()
        if hashes.byToken.count >= 1024 { hashes.byToken.removeAll(keepingCapacity: true) }
        hashes.byToken[token] = h
        hashes.lock.unlock()
        return h
    }

    private final class Hashes: @unchecked Sendable {
        let lock = NSLock()
        var byToken: [String: String] = [:]
    }
    private static let hashes = Hashes()

    var directory: String { paths.webSessionsDirectory }
    func file(_ token: String) -> String { directory + "/" + WebSessionStore.hash(token) + ".json" }

    /// The session a token names, if it is one and has not expired; nil for anything else (an
    /// unreadable file included: it names no session anyone can use).
    func session(_ token: String) -> Session? {
        guard WebSessionStore.isToken(token) else { return nil }
        let path = file(token)
        // Every request asks (twice: to authenticate, and to rotate): kept parsed (StampedFiles).
        let stored: Session?? = try? StampedFiles.shared.value(path) { try FileSystem.readJSON(path).flatMap(Session.init(stored:)) }
        guard let s = stored ?? nil, clock.now() < s.expires else { return nil }
        return s
    }

    /// A new session for a user; expired sessions are removed on the way.
    func create(userRecordName: String, container: String, environment: Environment, keepSignedIn: Bool) throws -> (token: String, session: Session) {
        let lock = try FileLock(path: paths.webSessionsLock)
        defer { lock.unlock() }
        try removeExpired()
        return try add(userRecordName: userRecordName, container: container, environment: environment, keepSignedIn: keepSignedIn)
    }

    private func add(userRecordName: String, container: String, environment: Environment, keepSignedIn: Bool) throws -> (token: String, session: Session) {
        let now = clock.now()
        let s = Session(userRecordName: userRecordName, container: container, environment: environment, created: now,
                        expires: now + (keepSignedIn ? WebSessionStore.keepSignedInLifetime : WebSessionStore.lifetime), keepSignedIn: keepSignedIn)
        var token = WebSessionStore.newToken()
        while try FileSystem.exists(file(token)) { token = WebSessionStore.newToken() }
        try FileSystem.writeJSON(file(token), s.json)
        return (token, s)
    }

    /// The token that replaces `token`, when it is due (older than `rotateAfter`, not replaced
    /// yet); nil otherwise. Concurrent requests with one token get one replacement between them:
    /// the first takes it, the others find the session already replaced. The new session is
    /// written before the old one is marked, so a crash between the two loses nothing.
    func rotate(_ token: String) throws -> String? {
        guard let seen = session(token), WebSessionStore.rotationDue(created: seen.created, rotated: seen.rotated != nil, now: clock.now()) else { return nil }
        let lock = try FileLock(path: paths.webSessionsLock)
        defer { lock.unlock() }
        guard var old = session(token), old.rotated == nil else { return nil }
        let fresh = try add(userRecordName: old.userRecordName, container: old.container, environment: old.environment, keepSignedIn: old.keepSignedIn)
        let now = clock.now()
        old.rotated = now
        old.expires = min(old.expires, now + WebSessionStore.grace)
        try FileSystem.writeJSON(file(token), old.json)
        return fresh.token
    }

    /// Whether a session made at `created` is replaced at its next successful use: over
    /// `rotateAfter` old and not replaced yet.
    static func rotationDue(created: Int64, rotated: Bool, now: Int64) -> Bool {
        !rotated && now - created > rotateAfter
    }

    /// Ends every session of a user (signing out).
    func revoke(userRecordName: String) throws {
        let lock = try FileLock(path: paths.webSessionsLock)
        defer { lock.unlock() }
        try eachSession { name, s in
            if s == nil || s?.userRecordName == userRecordName { try FileSystem.remove(directory + "/" + name) }
        }
    }

    private func removeExpired() throws {
        let now = clock.now()
        try eachSession { name, s in
            if s == nil || s!.expires <= now { try FileSystem.remove(directory + "/" + name) }
        }
    }

    /// Every session file with what it holds (nil: unreadable, a session no one can use).
    private func eachSession(_ body: (String, Session?) throws -> Void) throws {
        for name in try FileSystem.list(directory) where name.hasSuffix(".json") && !name.hasPrefix(".") {
            try body(name, (try? FileSystem.readJSON(directory + "/" + name)).flatMap { $0.flatMap(Session.init(stored:)) })
        }
    }
}
