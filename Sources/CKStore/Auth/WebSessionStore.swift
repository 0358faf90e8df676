import CKCrypto
import CKJSON
import CKModel
import Foundation

/// The web sessions of `ck serve`: a user signed in on this device, for one container
/// environment, named by a web auth token (`ckWebAuthToken`). One file per token,
/// `web-sessions/<sha256 of the token, hex>.json` — `{schemaVersion, userRecordName,
/// containerIdentifier, environment, created, expires, keepSignedIn, login?, rotated?}` — so
/// the store never holds a token anyone could use: only its hash.
///
/// Lifetimes are CloudKit's: 30 minutes, or 14 days with "keep me signed in", renewed by
/// rotation. A token older than a minute is replaced on its next successful use (a fresh one
/// with a fresh lifetime, of the same sign-in: `login`). What becomes of the replaced one is
/// the API's `WebTokenRotation`: it lasts until its own expiry (what live CloudKit does), or,
/// strictly (Apple's documented single use), for two minutes more — the requests already on
/// their way with it — and is then refused. The rule is applied when a token is read, so one
/// store serves either.
package struct WebSessionStore {
    package let paths: DataPaths
    package let clock: Clock
    package var rotation: WebTokenRotation = .live

    package static let lifetime: Int64 = 30 * 60 * 1000
    static let keepSignedInLifetime: Int64 = 14 * 24 * 3600 * 1000
    /// How old a token is before a request using it gets its replacement.
    static let rotateAfter: Int64 = 60 * 1000
    /// How long a replaced token still works under `WebTokenRotation.strict`.
    package static let grace: Int64 = 2 * 60 * 1000
    /// How long an expired session's file is kept, to say "expired" rather than "unknown".
    static let expiredKept: Int64 = 24 * 3600 * 1000
    /// How many hex digits of a sign-in's first token hash name it (`ck account sessions`):
    /// enough to tell sessions apart, and no use as a token (the hash is not one).
    package static let idDigits = 16

    package struct Session: Equatable {
        package var userRecordName: String
        package var container: String
        package var environment: Environment
        package var created: Int64
        package var expires: Int64
        package var keepSignedIn: Bool
        /// When it was replaced by a newer token; a replaced session is not replaced again.
        package var rotated: Int64?
        /// The sign-in the token belongs to (its tokens, replaced and replacing, share it): the
        /// id of the sign-in's first token. Files of older ck have none: their own id stands.
        package var login: String?

        package var json: JSONValue {
            var o: [String: JSONValue] = ["schemaVersion": .int(FileFormat.schemaVersion), "userRecordName": .string(userRecordName),
                                          "containerIdentifier": .string(container), "environment": .string(environment.rawValue),
                                          "created": .int(created), "expires": .int(expires), "keepSignedIn": .bool(keepSignedIn)]
            if let r = rotated { o["rotated"] = .int(r) }
            if let l = login { o["login"] = .string(l) }
            return .object(o)
        }

        package init(userRecordName: String, container: String, environment: Environment, created: Int64, expires: Int64, keepSignedIn: Bool,
             rotated: Int64? = nil, login: String? = nil) {
            self.userRecordName = userRecordName
            self.container = container
            self.environment = environment
            self.created = created
            self.expires = expires
            self.keepSignedIn = keepSignedIn
            self.rotated = rotated
            self.login = login
        }

        package init?(stored j: JSONValue) {
            guard let u = j["userRecordName"]?.stringValue, let c = j["containerIdentifier"]?.stringValue,
                  let e = j["environment"]?.stringValue.flatMap(Environment.init(rawValue:)),
                  let created = j["created"]?.int64Value, let expires = j["expires"]?.int64Value else { return nil }
            self.init(userRecordName: u, container: c, environment: e, created: created, expires: expires,
                      keepSignedIn: j["keepSignedIn"]?.boolValue ?? false, rotated: j["rotated"]?.int64Value, login: j["login"]?.stringValue)
        }
    }

    /// 32 random bytes in unpadded base64url (43 characters): nothing in it needs escaping in a
    /// URL, and escaping it anyway (`encodeURIComponent`) changes nothing.
    static func newToken() -> String {
        var rng = SystemRandomNumberGenerator()
        return Base64URL.encode((0..<32).map { _ in UInt8.random(in: 0...255, using: &rng) })
    }

    /// Whether `s` is shaped as a token: anything else names no session (and no file).
    /// 32 bytes in unpadded base64url: 43 characters of its alphabet, the last carrying 4 bits
    /// of the last byte and 2 zero bits (so one of `AEIMQUYcgkosw048`). Checked byte by byte:
    /// every request asks.
    package static func isToken(_ s: String) -> Bool {
        guard s.utf8.count == 43 else { return false }
        var i = 0
        for b in s.utf8 {
            i += 1
            guard let v = base64urlValue(b) else { return false }
            if i == 43 && v & 3 != 0 { return false }
        }
        return true
    }

    static func base64urlValue(_ b: UInt8) -> UInt8? {
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
    package static func hash(_ token: String) -> String {
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

    package var directory: String { paths.webSessionsDirectory }
    package func file(_ token: String) -> String { directory + "/" + WebSessionStore.hash(token) + ".json" }

    /// What a token names: a session good now, or why it is none.
    package enum Lookup: Equatable {
        case live(Session)
        /// Not shaped as a token (`shapeProblem` says how).
        case malformed
        /// No session has this token: never made here, signed out, or ended.
        case unknown
        case expired(Session)
        /// Replaced by a newer token, and refused under `WebTokenRotation.strict` (after the grace).
        case replaced(Session)
    }

    /// The session a token names, with why it is not good now when it is not. An unreadable
    /// file names no session anyone can use: unknown.
    package func lookup(_ token: String) -> Lookup {
        guard WebSessionStore.isToken(token) else { return .malformed }
        let path = file(token)
        // Every request asks (twice: to authenticate, and to rotate): kept parsed (StampedFiles).
        let stored: Session?? = try? StampedFiles.shared.value(path) { try FileSystem.readJSON(path).flatMap(Session.init(stored:)) }
        guard let s = stored ?? nil else { return .unknown }
        let now = clock.now()
        if now >= s.expires { return .expired(s) }
        if rotation == .strict, let r = s.rotated, now >= r + WebSessionStore.grace { return .replaced(s) }
        return .live(s)
    }

    /// The session a token names, if it is good now; nil for anything else.
    package func session(_ token: String) -> Session? {
        if case .live(let s) = lookup(token) { return s }
        return nil
    }

    /// What is wrong with the shape of something sent as a web auth token, never showing it:
    /// nil when it is shaped as one. Whitespace at either end (a token pasted from a terminal
    /// with its newline) is the commonest slip, so it is named first.
    package static func shapeProblem(_ s: String) -> String? {
        if isToken(s) { return nil }
        let count = s.unicodeScalars.count
        if count == 0 { return "ckWebAuthToken is empty" }
        let trimmed = s.trimmingCharacters(in: .whitespacesAndNewlines)
        let shape = "a ckWebAuthToken is 43 characters of base64url (A-Z, a-z, 0-9, '-', '_')"
        if trimmed != s, isToken(trimmed) {
            return "ckWebAuthToken \(Names.whitespaceAtEnds(s)): the token with it is \(count) characters, not 43; send the token without it"
        }
        if let odd = s.unicodeScalars.first(where: { $0.value > 0x7F || base64urlValue(UInt8($0.value)) == nil }) {
            let shown = Names.whitespace(odd) ?? (Names.isControl(odd) || odd.value > 0x7F ? "U+\(String(odd.value, radix: 16, uppercase: true))" : "'\(odd)'")
            let hint = odd == "+" || odd == "/" || odd == "=" ? " (standard base64, or a token of another service?)" : odd == "%" ? " (encoded twice?)" : ""
            return "ckWebAuthToken holds \(shown)\(hint), which no token holds: \(shape)"
        }
        if count != 43 { return "ckWebAuthToken is \(count) characters; \(shape)" }
        return "ckWebAuthToken is not a token ck made: its last character is not one 32 bytes of base64url end in"
    }

    /// A new session for a user; expired sessions are removed on the way.
    package func create(userRecordName: String, container: String, environment: Environment, keepSignedIn: Bool) throws -> (token: String, session: Session) {
        let lock = try FileLock(path: paths.webSessionsLock)
        defer { lock.unlock() }
        try removeExpired()
        return try add(userRecordName: userRecordName, container: container, environment: environment, keepSignedIn: keepSignedIn)
    }

    /// A new token of a sign-in (`login`), or of a new sign-in (nil: the token's own id names it).
    private func add(userRecordName: String, container: String, environment: Environment, keepSignedIn: Bool, login: String? = nil) throws -> (token: String, session: Session) {
        let now = clock.now()
        var token = WebSessionStore.newToken()
        while try FileSystem.exists(file(token)) { token = WebSessionStore.newToken() }
        let s = Session(userRecordName: userRecordName, container: container, environment: environment, created: now,
                        expires: now + (keepSignedIn ? WebSessionStore.keepSignedInLifetime : WebSessionStore.lifetime), keepSignedIn: keepSignedIn,
                        login: login ?? WebSessionStore.id(hash: WebSessionStore.hash(token)))
        try FileSystem.writeJSON(file(token), s.json)
        return (token, s)
    }

    /// A sign-in's id, from the hash of its first token.
    package static func id(hash: String) -> String { String(hash.prefix(idDigits)) }

    /// The token that replaces `token`, when it is due (older than `rotateAfter`, not replaced
    /// yet); nil otherwise. Concurrent requests with one token get one replacement between them:
    /// the first takes it, the others find the session already replaced. The new session is
    /// written before the old one is marked, so a crash between the two loses nothing. The old
    /// one keeps its expiry: whether it is still taken is `rotation`'s, when it is read.
    package func rotate(_ token: String) throws -> String? {
        guard let seen = session(token), WebSessionStore.rotationDue(created: seen.created, rotated: seen.rotated != nil, now: clock.now()) else { return nil }
        let lock = try FileLock(path: paths.webSessionsLock)
        defer { lock.unlock() }
        guard var old = session(token), old.rotated == nil else { return nil }
        // Replaced tokens stay until they expire, and a client that keeps rotating never signs
        // in again: its old ones are swept here too — at most once an hour, as a sweep reads
        // every session's file and a rotation is on a request's way.
        if WebSessionStore.rotationSweep.due(clock.now()) { try removeExpired() }
        let login = old.login ?? WebSessionStore.id(hash: WebSessionStore.hash(token))
        let fresh = try add(userRecordName: old.userRecordName, container: old.container, environment: old.environment, keepSignedIn: old.keepSignedIn, login: login)
        old.rotated = clock.now()
        try FileSystem.writeJSON(file(token), old.json)
        return fresh.token
    }

    /// Whether a session made at `created` is replaced at its next successful use: over
    /// `rotateAfter` old and not replaced yet.
    package static func rotationDue(created: Int64, rotated: Bool, now: Int64) -> Bool {
        !rotated && now - created > rotateAfter
    }

    /// Ends every session of a user (signing out): how many sign-ins were ended.
    @discardableResult
    package func revoke(userRecordName: String) throws -> Int {
        try end(userRecordName: userRecordName, login: nil).count
    }

    /// One sign-in of a user as `ck account sessions` lists it: its tokens taken together.
    package struct Login: Equatable {
        package var id: String
        package var container: String
        package var environment: Environment
        /// When the user signed in.
        package var created: Int64
        /// When its last token expires.
        package var expires: Int64
        package var keepSignedIn: Bool
        /// When its newest token was made by a rotation (a request used it then), if one was.
        package var renewed: Int64?
    }

    /// The user's sign-ins with a token not yet expired, oldest first.
    package func logins(userRecordName: String) throws -> [Login] {
        let now = clock.now()
        var byID: [String: Login] = [:]
        try eachSession { name, s in
            guard let s, s.userRecordName == userRecordName, now < s.expires else { return }
            let id = s.login ?? WebSessionStore.id(hash: String(name.dropLast(".json".count)))
            guard var l = byID[id] else {
                byID[id] = Login(id: id, container: s.container, environment: s.environment, created: s.created, expires: s.expires,
                                 keepSignedIn: s.keepSignedIn, renewed: nil)
                return
            }
            let first = min(l.created, s.created)
            let newest = max(l.renewed ?? l.created, s.created)
            l.created = first
            l.renewed = newest > first ? newest : nil
            l.expires = max(l.expires, s.expires)
            byID[id] = l
        }
        return byID.values.sorted { ($0.created, $0.id) < ($1.created, $1.id) }
    }

    /// Ends a user's sign-in `login` (every token of it), or all of the user's (nil): the ids
    /// of the sign-ins ended, sorted. Unreadable files go too (no one can use them).
    package func end(userRecordName: String, login: String?) throws -> [String] {
        let lock = try FileLock(path: paths.webSessionsLock)
        defer { lock.unlock() }
        var ended = Set<String>()
        try eachSession { name, s in
            guard let s else {
                try FileSystem.remove(directory + "/" + name)
                return
            }
            let id = s.login ?? WebSessionStore.id(hash: String(name.dropLast(".json".count)))
            guard s.userRecordName == userRecordName, login == nil || login == id else { return }
            try FileSystem.remove(directory + "/" + name)
            if s.expires > clock.now() { ended.insert(id) }
        }
        return ended.sorted()
    }

    /// When this process's rotations last swept (`rotate`).
    private static let rotationSweep = SweepSchedule(every: 3600 * 1000)

    /// Sweeps sessions expired a day ago or more (until then, a request with one is told it
    /// expired, not that it is unknown).
    private func removeExpired() throws {
        let now = clock.now()
        try eachSession { name, s in
            if s == nil || s!.expires + WebSessionStore.expiredKept <= now { try FileSystem.remove(directory + "/" + name) }
        }
    }

    /// Every session file with what it holds (nil: unreadable, a session no one can use).
    private func eachSession(_ body: (String, Session?) throws -> Void) throws {
        for name in try FileSystem.list(directory) where name.hasSuffix(".json") && !name.hasPrefix(".") {
            try body(name, (try? FileSystem.readJSON(directory + "/" + name)).flatMap { $0.flatMap(Session.init(stored:)) })
        }
    }

    package init(paths: DataPaths, clock: Clock, rotation: WebTokenRotation = .live) {
        self.paths = paths
        self.clock = clock
        self.rotation = rotation
    }
}

/// Work done at most once an interval by whichever caller comes when it is due.
final class SweepSchedule: @unchecked Sendable {
    private let lock = NSLock()
    private let every: Int64
    private var last: Int64?

    package init(every: Int64) { self.every = every }

    /// Whether it is due at `now`; if so, it counts as done now.
    package func due(_ now: Int64) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        if let l = last, now - l < every, now >= l { return false }
        last = now
        return true
    }
}
