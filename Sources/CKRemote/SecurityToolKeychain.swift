import CKModel
import Foundation

/// The macOS Keychain, through Apple's `security` tool: each secret of a remote is a generic
/// password in the default (login) keychain, its service naming the secret
/// (`ck remote apiToken`, `ck remote webAuthToken`) and its account the remote's URL.
///
/// No secret is ever in the tool's argv (`ps` shows it to every user): a password is stored by
/// `security -i`, which reads the command line from stdin. Apple's `-w` with no value (the
/// man page's "specify -w as the last option to be prompted") is no way round it: it prompts
/// twice, on the terminal, and stores an empty password when the answers do not match.
/// Reading (`find-generic-password -w`, which prints the password alone) and deleting need no
/// secret in argv.
struct SecurityToolKeychain: Sendable {
    /// Apple's tool, where every macOS has it.
    static let systemTool = "/usr/bin/security"

    /// The tool's exit status for errSecItemNotFound (-25300, truncated to 8 bits).
    static let itemNotFound: Int32 = 44
    /// `security -i` reads lines into a 4096-byte buffer; a longer command would be cut.
    static let maxCommandLine = 4095

    let tool: String

    /// The Keychain service that holds one kind of secret.
    static func service(_ secret: Secret) -> String { "ck remote " + secret.rawValue }

    /// The secret stored for `url`, or nil when the Keychain has none.
    func read(_ secret: Secret, for url: RemoteURL) throws -> String? {
        let r = try run(["find-generic-password", "-s", Self.service(secret), "-a", url.description, "-w"], doing: "read the \(secret.name) for", url, secret: nil)
        if r.status == Self.itemNotFound { return nil }
        guard r.status == 0 else { throw refusal("read the \(secret.name) for", url, r, secret: nil) }
        var out = r.output
        if out.last == 0x0A { out.removeLast() }
        return out.isEmpty ? nil : String(decoding: out, as: UTF8.self)
    }

    /// Stores `value` as the secret for `url`, over the one there (`-U`).
    func write(_ value: String, as secret: Secret, for url: RemoteURL) throws {
        // `find-generic-password -w` prints a password holding any other byte as hex, and a
        // newline would end `security -i`'s command: such a value could not come back as it went.
        guard !value.isEmpty, value.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else {
            throw CloudKitError(.badRequest, "the \(secret.name) for \(url) holds characters the Keychain cannot give back as they are (only printable ASCII); set CK_CREDENTIALS=file to keep it in the credentials file")
        }
        let line = ["add-generic-password", "-U", "-s", Self.service(secret), "-a", url.description, "-w", value].map(Self.quoted).joined(separator: " ")
        guard line.utf8.count <= Self.maxCommandLine else {
            throw CloudKitError(.badRequest, "the \(secret.name) for \(url) is too long for the Keychain tool's command line; set CK_CREDENTIALS=file to keep it in the credentials file")
        }
        let r = try run(["-i"], input: Array((line + "\n").utf8), doing: "store the \(secret.name) for", url, secret: value)
        guard r.status == 0 else { throw refusal("store the \(secret.name) for", url, r, secret: value) }
    }

    /// Removes the secret for `url`; one already absent is no error.
    func delete(_ secret: Secret, for url: RemoteURL) throws {
        let r = try run(["delete-generic-password", "-s", Self.service(secret), "-a", url.description], doing: "delete the \(secret.name) for", url, secret: nil)
        guard r.status == 0 || r.status == Self.itemNotFound else { throw refusal("delete the \(secret.name) for", url, r, secret: nil) }
    }

    /// One argument as `security -i` splits its line: in double quotes, a backslash before
    /// each `"` and `\`.
    static func quoted(_ s: String) -> String {
        var q = "\""
        for c in s {
            if c == "\"" || c == "\\" { q.append("\\") }
            q.append(c)
        }
        return q + "\""
    }

    private func run(_ arguments: [String], input: [UInt8] = [], doing what: String, _ url: RemoteURL, secret: String?) throws -> ToolRun {
        do { return try ToolProcess.run(tool, arguments, input: input) } catch {
            throw CloudKitError(.internalError, "cannot \(what) \(url) in the Keychain: cannot run \(tool): \(error.message); set CK_CREDENTIALS=file to keep credentials in the credentials file")
        }
    }

    /// The tool's own words on a failure (a locked keychain, a denied access), never the secret.
    private func refusal(_ what: String, _ url: RemoteURL, _ r: ToolRun, secret: String?) -> CloudKitError {
        var said = String(decoding: r.errorOutput + r.output, as: UTF8.self)
        if let s = secret, !s.isEmpty { said = said.replacingOccurrences(of: s, with: "…") }
        said = said.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }.joined(separator: "; ")
        if said.isEmpty { said = "no message" }
        return CloudKitError(.accessDenied, "the Keychain would not \(what) \(url): \(said) (\(tool) exited with \(r.status)); unlock the keychain and try again, or set CK_CREDENTIALS=file to keep credentials in the credentials file")
    }

    /// The secrets of a remote that go to the Keychain; the rest stays in credentials.json.
    enum Secret: String, CaseIterable, Sendable {
        case apiToken, webAuthToken

        var name: String { self == .apiToken ? "API token" : "web auth token" }

        func value(in c: Credentials) -> String? { self == .apiToken ? c.apiToken : c.webAuthToken }

        func set(_ v: String?, in c: inout Credentials) {
            if self == .apiToken { c.apiToken = v } else { c.webAuthToken = v }
        }
    }
}
