import CKCrypto
import CKJSON
import CKModel
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What reaches a remote (Docs/remote.md "Credentials"): an API token with a user's web auth
/// token (private, shared and public, as that user), and a server-to-server key (the public
/// database, as the developer who registered it).
public struct Credentials: Equatable, Sendable {
    public var apiToken: String?
    public var webAuthToken: String?
    public var keyID: String?
    public var privateKeyPath: String?
    /// Who the web auth token signed in as, when ck last asked (`users/caller`).
    public var userRecordName: String?

    public init(apiToken: String? = nil, webAuthToken: String? = nil, keyID: String? = nil, privateKeyPath: String? = nil, userRecordName: String? = nil) {
        self.apiToken = apiToken
        self.webAuthToken = webAuthToken
        self.keyID = keyID
        self.privateKeyPath = privateKeyPath
        self.userRecordName = userRecordName
    }

    var json: JSONValue {
        var o: [String: JSONValue] = [:]
        if let v = apiToken { o["apiToken"] = .string(v) }
        if let v = webAuthToken { o["webAuthToken"] = .string(v) }
        if let v = keyID { o["keyID"] = .string(v) }
        if let v = privateKeyPath { o["privateKeyPath"] = .string(v) }
        if let v = userRecordName { o["userRecordName"] = .string(v) }
        return .object(o)
    }

    init(json j: JSONValue) {
        self.init(apiToken: j["apiToken"]?.stringValue, webAuthToken: j["webAuthToken"]?.stringValue, keyID: j["keyID"]?.stringValue,
                  privateKeyPath: j["privateKeyPath"]?.stringValue, userRecordName: j["userRecordName"]?.stringValue)
    }

    /// The environment's variables over the stored values, by the names other CloudKit tools
    /// use: CLOUDKIT_API_TOKEN, CLOUDKIT_WEB_AUTH_TOKEN, CLOUDKIT_KEY_ID, CLOUDKIT_PRIVATE_KEY_PATH.
    public func overridden(by env: [String: String]) -> Credentials {
        var c = self
        func pick(_ k: String) -> String? { env[k].flatMap { $0.isEmpty ? nil : $0 } }
        if let v = pick("CLOUDKIT_API_TOKEN") { c.apiToken = v }
        if let v = pick("CLOUDKIT_WEB_AUTH_TOKEN") { c.webAuthToken = v }
        if let v = pick("CLOUDKIT_KEY_ID") { c.keyID = v }
        if let v = pick("CLOUDKIT_PRIVATE_KEY_PATH") { c.privateKeyPath = v }
        return c
    }

    /// A secret as `ck remote show` prints it: enough to tell two apart, never enough to use.
    public static func masked(_ secret: String?) -> JSONValue {
        guard let s = secret, !s.isEmpty else { return .null }
        let u = Array(s.utf8)
        if u.count <= 8 { return .string("…(\(u.count) characters)") }
        return .string(String(decoding: u.prefix(4), as: UTF8.self) + "…" + String(decoding: u.suffix(2), as: UTF8.self) + " (\(u.count) characters)")
    }

    /// What `ck remote show` prints of them.
    public var shown: JSONValue {
        var o: [String: JSONValue] = [:]
        if apiToken != nil { o["apiToken"] = Credentials.masked(apiToken) }
        if webAuthToken != nil { o["webAuthToken"] = Credentials.masked(webAuthToken) }
        if let k = keyID { o["keyID"] = .string(k) }
        if let p = privateKeyPath { o["privateKeyPath"] = .string(p) }
        if let u = userRecordName { o["userRecordName"] = .string(u) }
        return .object(o)
    }
}

/// The credentials file, outside every data directory: `$XDG_CONFIG_HOME/ck/credentials.json`
/// (else `~/.config/ck/`), mode 0600 in a 0700 directory, filed by remote URL (a container and
/// environment), so that two data directories with a remote of the same URL share a sign-in.
/// Written whole, atomically, under a lock: a rotated web auth token is never half-written.
/// With a Keychain (macOS), the API and web auth tokens go there instead and the file keeps the
/// rest; a file that still holds a secret is read as before, and its next update moves it.
public struct CredentialStore: Sendable {
    public let directory: String
    /// Where the secrets go; nil keeps them in the file.
    let keychain: SecurityToolKeychain?

    /// A store that keeps everything in the file under `directory`.
    public init(directory: String) { self.init(directory: directory, keychain: nil) }

    init(directory: String, keychain: SecurityToolKeychain?) {
        self.directory = directory
        self.keychain = keychain
    }

    /// Whether the API and web auth tokens go to the Keychain rather than the file.
    public var keepsSecretsInKeychain: Bool { keychain != nil }

    /// The variable that chooses where secrets go: `file`, or `keychain` (the default where
    /// there is one).
    public static let backendVariable = "CK_CREDENTIALS"
    /// The variable that names a `security` tool to use as the Keychain, on any system.
    public static let securityToolVariable = "CK_SECURITY_TOOL"

    /// The store the environment says: the directory XDG_CONFIG_HOME/ck, or HOME/.config/ck;
    /// the secrets in the Keychain on macOS (when /usr/bin/security is there) or wherever
    /// CK_SECURITY_TOOL names a `security` tool, unless CK_CREDENTIALS is `file`.
    public static func standard(env: [String: String]) throws -> CredentialStore {
        let directory: String
        if let x = env["XDG_CONFIG_HOME"], x.hasPrefix("/") { directory = x + "/ck" } else {
            guard let h = env["HOME"], h.hasPrefix("/") else {
                throw CloudKitError.badRequest("cannot tell where credentials go: set HOME or XDG_CONFIG_HOME")
            }
            directory = h + "/.config/ck"
        }
        let choice = env[backendVariable] ?? ""
        switch choice {
        case "file": return CredentialStore(directory: directory)
        case "", "keychain": break
        default: throw CloudKitError.badRequest("\(backendVariable) is '\(choice)': it takes 'file' or 'keychain'")
        }
        if let tool = env[securityToolVariable], !tool.isEmpty {
            guard tool.hasPrefix("/") else { throw CloudKitError.badRequest("\(securityToolVariable) is '\(tool)': it takes an absolute path") }
            return CredentialStore(directory: directory, keychain: SecurityToolKeychain(tool: tool))
        }
        #if os(macOS)
        if access(SecurityToolKeychain.systemTool, X_OK) == 0 {
            return CredentialStore(directory: directory, keychain: SecurityToolKeychain(tool: SecurityToolKeychain.systemTool))
        }
        #endif
        if choice == "keychain" {
            throw CloudKitError.badRequest("\(backendVariable) is 'keychain' but there is no Keychain here (no \(SecurityToolKeychain.systemTool)); name a tool with \(securityToolVariable), or leave \(backendVariable) unset")
        }
        return CredentialStore(directory: directory)
    }

    var file: String { directory + "/credentials.json" }
    public var keysDirectory: String { directory + "/keys" }

    public func credentials(for url: RemoteURL) throws -> Credentials {
        var c = Credentials(json: try readAll()[url.description] ?? .object([:]))
        if let keychain {
            // A secret still in the file (from before the Keychain, or written with
            // CK_CREDENTIALS=file since) is the newer one: the Keychain is asked for the rest.
            for s in SecurityToolKeychain.Secret.allCases where s.value(in: c) == nil {
                s.set(try keychain.read(s, for: url), in: &c)
            }
        }
        return c
    }

    /// Changes one remote's credentials under the lock; returns the new value. With a
    /// Keychain, a secret set goes there (over the one there), a secret cleared is deleted
    /// there, and the file keeps no secret of the remote after.
    @discardableResult
    public func update(_ url: RemoteURL, _ change: (inout Credentials) throws -> Void) throws -> Credentials {
        try makeDirectory(directory)
        let lockFD = open(directory + "/credentials.lock", O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard lockFD >= 0 else { throw failure("cannot open", directory + "/credentials.lock") }
        defer { close(lockFD) }
        guard flock(lockFD, LOCK_EX) == 0 else { throw failure("cannot lock", directory + "/credentials.lock") }
        var all = try readAll()
        let inFile = Credentials(json: all[url.description] ?? .object([:]))
        var c = inFile
        // What the Keychain holds, for each secret the file does not.
        var inKeychain: [SecurityToolKeychain.Secret: String?] = [:]
        if let keychain {
            for s in SecurityToolKeychain.Secret.allCases where s.value(in: inFile) == nil {
                let v = try keychain.read(s, for: url)
                inKeychain[s] = .some(v)
                s.set(v, in: &c)
            }
        }
        try change(&c)
        var kept = c
        if let keychain {
            // The Keychain first: if it refuses, the file (and any secret still in it) stays.
            for s in SecurityToolKeychain.Secret.allCases {
                let new = s.value(in: c)
                if let known = inKeychain[s], known == new { continue }
                if let new { try keychain.write(new, as: s, for: url) } else { try keychain.delete(s, for: url) }
            }
            for s in SecurityToolKeychain.Secret.allCases { s.set(nil, in: &kept) }
        }
        let j = kept.json
        // Not `all[key] = nil`: JSONValue takes the nil literal, as JSON's null.
        if j.objectValue?.isEmpty == true { all.removeValue(forKey: url.description) } else { all[url.description] = j }
        try write(.object(["schemaVersion": .int(FileFormat.schemaVersion), "remotes": .object(all)]))
        return c
    }

    private func readAll() throws -> [String: JSONValue] {
        let fd = open(file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        if fd < 0 {
            if errno == ENOENT { return [:] }
            throw failure("cannot open", file)
        }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { throw failure("not a regular file:", file) }
        if st.st_mode & 0o077 != 0 {
            throw CloudKitError(.accessDenied, "\(file) is readable by others (mode \(String(st.st_mode & 0o777, radix: 8))); it holds secrets: chmod 600 it")
        }
        var bytes = [UInt8]()
        var buf = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = read(fd, &buf, buf.count)
            if n < 0 { if errno == EINTR { continue }; throw failure("cannot read", file) }
            if n == 0 { break }
            bytes += buf[0..<n]
        }
        guard let j = try? JSONParser.parse(bytes), let o = j["remotes"]?.objectValue ?? (j.objectValue?.isEmpty == true ? [:] : nil) else {
            throw CloudKitError.internalError("\(file) is not a credentials file; move it away and sign in again")
        }
        return o
    }

    private func write(_ value: JSONValue) throws {
        let bytes = Array(JSONWriter.pretty(value).utf8)
        let tmp = directory + "/.credentials.\(getpid()).tmp"
        let fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw failure("cannot create", tmp) }
        var off = 0
        while off < bytes.count {
            let n = bytes[off...].withUnsafeBytes { systemWrite(fd, $0.baseAddress, $0.count) }
            if n < 0 { if errno == EINTR { continue }; close(fd); unlink(tmp); throw failure("cannot write", tmp) }
            off += n
        }
        guard fsync(fd) == 0 else { close(fd); unlink(tmp); throw failure("cannot sync", tmp) }
        close(fd)
        guard rename(tmp, file) == 0 else { unlink(tmp); throw failure("cannot rename into", file) }
        let d = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if d >= 0 { _ = fsync(d); close(d) }
    }

    func makeDirectory(_ path: String) throws {
        var at = ""
        for part in path.split(separator: "/") {
            at += "/" + part
            if mkdir(at, 0o700) != 0 && errno != EEXIST { throw failure("cannot make directory", at) }
        }
        var st = stat()
        guard lstat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFDIR else { throw failure("not a directory:", path) }
    }

    /// A new server-to-server key pair for a remote: the private key written under keys/
    /// (0600) and filed under the remote's URL (its key ID unknown until the Console shows
    /// it); answers the file and the public key's PEM, to register in the Console.
    public func createKey(for url: RemoteURL) throws -> (path: String, publicKeyPEM: String) {
        let key = try P256PrivateKey.generate()
        var rng = SystemRandomNumberGenerator()
        let suffix = String(UInt32.random(in: 0...UInt32.max, using: &rng), radix: 16)
        let safe = String(url.container.unicodeScalars.map { c -> Character in
            let v = c.value
            return (v >= 0x30 && v <= 0x39) || (v >= 0x41 && v <= 0x5A) || (v >= 0x61 && v <= 0x7A) || c == "." || c == "-" || c == "_" ? Character(c) : "_"
        })
        let path = try writeKey(key.pem, named: "\(safe)-\(url.environment.rawValue)-\(suffix).pem")
        try update(url) { $0.privateKeyPath = path; $0.keyID = nil }
        return (path, key.publicKey.pem)
    }

    /// Checks that a file holds a P-256 private key ck can sign with; the reason when not.
    public static func checkKey(at path: String) -> String? {
        guard let data = FileManager.default.contents(atPath: path), let pem = String(data: data, encoding: .utf8) else { return "cannot read it" }
        do { _ = try P256PrivateKey(pem: pem) } catch let e as P256Error { return e.message } catch { return "\(error)" }
        return nil
    }

    /// Writes a new private key file (0600, never over an existing file) under keys/.
    public func writeKey(_ pem: String, named name: String) throws -> String {
        try makeDirectory(keysDirectory)
        let path = keysDirectory + "/" + name
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw failure("cannot create", path) }
        defer { close(fd) }
        let bytes = Array(pem.utf8)
        guard bytes.withUnsafeBytes({ systemWrite(fd, $0.baseAddress, $0.count) }) == bytes.count, fsync(fd) == 0 else { throw failure("cannot write", path) }
        return path
    }

    func failure(_ what: String, _ path: String) -> CloudKitError {
        CloudKitError.internalError("\(what) \(path): \(String(cString: strerror(errno)))")
    }
}

/// write(2), named apart from the store's `write` methods.
func systemWrite(_ fd: Int32, _ p: UnsafeRawPointer?, _ n: Int) -> Int {
    #if canImport(Glibc)
    return Glibc.write(fd, p, n)
    #else
    return Darwin.write(fd, p, n)
    #endif
}
