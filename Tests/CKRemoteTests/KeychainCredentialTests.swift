import CKJSON
import CKModel
import Foundation
import XCTest
@testable import CKRemote

/// The Keychain backend of the credential store, against a stand-in for Apple's `security`
/// that keeps its items in a JSON file, splits `security -i` lines as Apple's tool does, takes
/// only the subcommands and flags the store is meant to use (anything else exits 2, as a usage
/// error), and logs every argv it was given.
final class KeychainCredentialTests: XCTestCase {
    var home = ""
    var tool: String { home + "/tool/security" }
    let url = try! RemoteURL("https://api.apple-cloudkit.com/database/1/iCloud.com.example.App/development")

    override func setUpWithError() throws {
        home = NSTemporaryDirectory() + "ck-keychain-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: home + "/tool", withIntermediateDirectories: true)
        try Self.fakeSecurity.write(toFile: tool, atomically: true, encoding: .utf8)
        chmod(tool, 0o755)
    }

    override func tearDown() { try? FileManager.default.removeItem(atPath: home) }

    func store(_ extra: [String: String] = [:]) throws -> CredentialStore {
        try CredentialStore.standard(env: ["HOME": home, "CK_SECURITY_TOOL": tool].merging(extra) { $1 })
    }

    /// The fake's items, "service\naccount" to password.
    func items() throws -> [String: String] {
        guard let data = FileManager.default.contents(atPath: home + "/tool/items.json") else { return [:] }
        return try JSONSerialization.jsonObject(with: data) as? [String: String] ?? [:]
    }

    func item(_ service: String) -> String { service + "\n" + url.description }

    /// Every argv the fake was started with, one JSON array a line.
    func argvLog() -> String { (try? String(contentsOfFile: home + "/tool/argv.log", encoding: .utf8)) ?? "" }

    func credentialsFile() -> String { (try? String(contentsOfFile: home + "/.config/ck/credentials.json", encoding: .utf8)) ?? "" }

    /// Makes the fake fail `command` with `status`, saying `message` (where `{password}` is the
    /// password it was given, as a tool that echoes its arguments would).
    func failing(_ command: String, status: Int, message: String) throws {
        let j = try JSONSerialization.data(withJSONObject: ["command": command, "status": status, "message": message])
        try j.write(to: URL(fileURLWithPath: home + "/tool/fail.json"))
    }

    func testRoundTripKeepsTheSecretsInTheKeychainAndOutOfArgv() throws {
        let s = try store()
        XCTAssertTrue(s.keepsSecretsInKeychain)
        let api = "SECRETAPI-0123456789abcdef", web = "158__54__SECRETWEB+/=token"
        try s.update(url) { $0.apiToken = api; $0.webAuthToken = web; $0.keyID = "kid-1"; $0.userRecordName = "_u1" }
        let expected = Credentials(apiToken: api, webAuthToken: web, keyID: "kid-1", userRecordName: "_u1")
        XCTAssertEqual(try s.credentials(for: url), expected)
        XCTAssertEqual(try store().credentials(for: url), expected, "a store made anew reads them back")
        XCTAssertEqual(try items(), [item("ck remote apiToken"): api, item("ck remote webAuthToken"): web])
        let file = credentialsFile()
        XCTAssertTrue(file.contains("kid-1") && file.contains("_u1"), file)
        XCTAssertFalse(file.contains("SECRET"), "no secret in credentials.json: \(file)")
        let log = argvLog()
        XCTAssertTrue(log.contains("[\"-i\"]"), log)
        XCTAssertTrue(log.contains("find-generic-password"), log)
        XCTAssertFalse(log.contains("SECRET"), "no secret in any argv: \(log)")
        var st = stat()
        XCTAssertEqual(stat(s.directory + "/credentials.json", &st), 0)
        XCTAssertEqual(st.st_mode & 0o777, 0o600)
    }

    func testARotatedTokenIsUpdatedInPlace() throws {
        let s = try store()
        try s.update(url) { $0.apiToken = "SECRETAPI"; $0.webAuthToken = "SECRETWEB-1" }
        // Without -U the fake (as Apple's tool) refuses an item that exists: exit 45.
        try s.update(url) { $0.webAuthToken = "SECRETWEB-2" }
        XCTAssertEqual(try items(), [item("ck remote apiToken"): "SECRETAPI", item("ck remote webAuthToken"): "SECRETWEB-2"])
        XCTAssertEqual(try s.credentials(for: url).webAuthToken, "SECRETWEB-2")
        let writes = argvLog().split(separator: "\n").filter { $0 == "[\"-i\"]" }.count
        XCTAssertEqual(writes, 3, "two secrets, then one rotated: only what changed is written")
        try s.update(url) { $0.userRecordName = "_u" }
        XCTAssertEqual(argvLog().split(separator: "\n").filter { $0 == "[\"-i\"]" }.count, 3, "an update of the file alone writes no secret")
        XCTAssertFalse(argvLog().contains("SECRET"))
    }

    func testAClearedSecretIsDeletedFromTheKeychain() throws {
        let s = try store()
        try s.update(url) { $0.apiToken = "SECRETAPI"; $0.webAuthToken = "SECRETWEB"; $0.keyID = "kid" }
        try s.update(url) { $0.webAuthToken = nil }
        XCTAssertEqual(try items(), [item("ck remote apiToken"): "SECRETAPI"])
        XCTAssertEqual(try s.credentials(for: url), Credentials(apiToken: "SECRETAPI", keyID: "kid"))
        XCTAssertTrue(argvLog().contains("[\"delete-generic-password\", \"-s\", \"ck remote webAuthToken\", \"-a\", \"\(url)\"]"), argvLog())
        try s.update(url) { $0 = Credentials() }
        XCTAssertEqual(try items(), [:])
        XCTAssertEqual(try s.credentials(for: url), Credentials())
        XCTAssertFalse(credentialsFile().contains(url.description), "the remote's entry is gone: \(credentialsFile())")
    }

    func testAFileThatStillHoldsSecretsKeepsWorkingAndItsNextUpdateMovesThem() throws {
        let plain = CredentialStore(directory: home + "/.config/ck")
        try plain.update(url) { $0.apiToken = "SECRETAPI-old"; $0.webAuthToken = "SECRETWEB-old"; $0.keyID = "kid" }
        let s = try store()
        XCTAssertEqual(try s.credentials(for: url), Credentials(apiToken: "SECRETAPI-old", webAuthToken: "SECRETWEB-old", keyID: "kid"))
        XCTAssertEqual(try items(), [:], "reading moves nothing")
        try s.update(url) { $0.userRecordName = "_u" }
        XCTAssertEqual(try items(), [item("ck remote apiToken"): "SECRETAPI-old", item("ck remote webAuthToken"): "SECRETWEB-old"])
        XCTAssertFalse(credentialsFile().contains("SECRET"), credentialsFile())
        XCTAssertEqual(try s.credentials(for: url), Credentials(apiToken: "SECRETAPI-old", webAuthToken: "SECRETWEB-old", keyID: "kid", userRecordName: "_u"))
        // A token rotated since with CK_CREDENTIALS=file is in the file: it is the newer one.
        try plain.update(url) { $0.webAuthToken = "SECRETWEB-new" }
        XCTAssertEqual(try s.credentials(for: url).webAuthToken, "SECRETWEB-new")
        try s.update(url) { _ in }
        XCTAssertEqual(try items()[item("ck remote webAuthToken")], "SECRETWEB-new")
        XCTAssertFalse(credentialsFile().contains("SECRET"), credentialsFile())
    }

    func testARefusingKeychainIsAClearErrorWithoutTheSecret() throws {
        let s = try store()
        try s.update(url) { $0.webAuthToken = "SECRETWEB-1" }
        try failing("add-generic-password", status: 36, message: "SecKeychainItemCreateFromContent (<default>): User interaction is not allowed. ({password})")
        XCTAssertThrowsError(try s.update(url) { $0.webAuthToken = "SECRETWEB-2" }) { e in
            let reason = (e as? CloudKitError)?.reason ?? "\(e)"
            XCTAssertEqual((e as? CloudKitError)?.code, .accessDenied)
            XCTAssertTrue(reason.contains(self.url.description), reason)
            XCTAssertTrue(reason.contains("User interaction is not allowed."), reason)
            XCTAssertTrue(reason.contains("exited with 36"), reason)
            XCTAssertTrue(reason.contains("CK_CREDENTIALS=file"), reason)
            XCTAssertFalse(reason.contains("SECRETWEB"), "the tool's echo of the secret is cut: \(reason)")
        }
        try failing("find-generic-password", status: 51, message: "SecKeychainSearchCopyNext: The user name or passphrase you entered is not correct.")
        XCTAssertThrowsError(try s.credentials(for: url)) { e in
            let reason = (e as? CloudKitError)?.reason ?? "\(e)"
            XCTAssertTrue(reason.contains("the Keychain would not read the API token for \(self.url)"), reason)
            XCTAssertTrue(reason.contains("passphrase you entered is not correct"), reason)
        }
        try FileManager.default.removeItem(atPath: home + "/tool/fail.json")
        XCTAssertEqual(try s.credentials(for: url).webAuthToken, "SECRETWEB-1", "a refused write loses nothing")
    }

    func testAMissingToolIsAClearError() throws {
        let s = try store(["CK_SECURITY_TOOL": home + "/no-such-security"])
        XCTAssertThrowsError(try s.credentials(for: url)) { e in
            let reason = (e as? CloudKitError)?.reason ?? "\(e)"
            XCTAssertTrue(reason.contains(self.home + "/no-such-security") && reason.contains(self.url.description), reason)
        }
    }

    func testQuotesAndBackslashesGoThroughTheCommandLineAndANewlineIsRefused() throws {
        let s = try store()
        let odd = #"SECRET a "b" \c 'd' \"#
        try s.update(url) { $0.apiToken = odd }
        XCTAssertEqual(try items()[item("ck remote apiToken")], odd)
        XCTAssertEqual(try s.credentials(for: url).apiToken, odd)
        XCTAssertThrowsError(try s.update(url) { $0.apiToken = "SECRET\nline" }) { e in
            let reason = (e as? CloudKitError)?.reason ?? "\(e)"
            XCTAssertTrue(reason.contains("CK_CREDENTIALS=file") && !reason.contains("SECRET"), reason)
        }
        XCTAssertEqual(try s.credentials(for: url).apiToken, odd)
    }

    func testTheBackendTheEnvironmentChooses() throws {
        let file = try store(["CK_CREDENTIALS": "file"])
        XCTAssertFalse(file.keepsSecretsInKeychain, "CK_CREDENTIALS=file wins over a named tool")
        try file.update(url) { $0.webAuthToken = "SECRETWEB-f" }
        XCTAssertTrue(credentialsFile().contains("SECRETWEB-f"))
        XCTAssertEqual(argvLog(), "", "the tool never ran")
        XCTAssertTrue(try store(["CK_CREDENTIALS": "keychain"]).keepsSecretsInKeychain)
        XCTAssertThrowsError(try store(["CK_CREDENTIALS": "vault"]))
        XCTAssertThrowsError(try store(["CK_SECURITY_TOOL": "security"]), "a relative tool path")
        #if os(macOS)
        XCTAssertEqual(try CredentialStore.standard(env: ["HOME": home]).keepsSecretsInKeychain, FileManager.default.isExecutableFile(atPath: "/usr/bin/security"))
        #else
        XCTAssertFalse(try CredentialStore.standard(env: ["HOME": home]).keepsSecretsInKeychain)
        XCTAssertThrowsError(try CredentialStore.standard(env: ["HOME": home, "CK_CREDENTIALS": "keychain"]))
        #endif
    }

    /// A stand-in for Apple's `security`: only what the store uses, as strictly as Apple's tool.
    static let fakeSecurity = #"""
    #!/usr/bin/env python3
    import json, os, sys

    HERE = os.path.dirname(os.path.abspath(__file__))
    ITEMS = os.path.join(HERE, "items.json")

    with open(os.path.join(HERE, "argv.log"), "a") as f:
        f.write(json.dumps(sys.argv[1:]) + "\n")

    def load():
        try:
            with open(ITEMS) as f: return json.load(f)
        except FileNotFoundError:
            return {}

    def save(items):
        with open(ITEMS, "w") as f: json.dump(items, f)

    def err(msg): sys.stderr.write("security: " + msg + "\n")

    def split_line(line):
        # As Apple's security.c split_line: blanks separate, ' or " quote, a backslash takes
        # the next character as it is, inside quotes or out.
        args, cur, state, quote = [], "", "ws", None
        for ch in line:
            if state == "ws":
                if ch.isspace(): continue
                cur = ""
                if ch in "\"'":
                    quote, state = ch, "q"; continue
                state = "arg"
            if state == "arg":
                if ch == "\\": state = "arg_esc"
                elif ch.isspace(): args.append(cur); state = "ws"
                else: cur += ch
            elif state == "q":
                if ch == "\\": state = "q_esc"
                elif ch == quote: args.append(cur); state = "ws"
                else: cur += ch
            elif state == "arg_esc": cur += ch; state = "arg"
            elif state == "q_esc": cur += ch; state = "q"
        if state != "ws": args.append(cur)
        return args

    def options(args, spec, required):
        # getopt as the real subcommands take it, but only the flags the store uses.
        got, i = {}, 0
        while i < len(args):
            a = args[i]
            if len(a) != 2 or a[0] != "-" or a[1] not in spec: return None
            if spec[a[1]]:
                if i + 1 >= len(args): return None
                got[a[1]] = args[i + 1]; i += 2
            else:
                got[a[1]] = True; i += 1
        return got if all(r in got for r in required) else None

    def run(args, interactive):
        cmd = args[0]
        failing = os.path.join(HERE, "fail.json")
        specs = {
            "find-generic-password": ({"s": True, "a": True, "w": False}, "saw"),
            "delete-generic-password": ({"s": True, "a": True}, "sa"),
            "add-generic-password": ({"U": False, "s": True, "a": True, "w": True}, "saw"),
        }
        if cmd not in specs:
            err('unknown command "%s"' % cmd); return 1
        o = options(args[1:], *specs[cmd])
        if o is None:
            sys.stderr.write("Usage: %s (fake: only the store's flags)\n" % cmd); return 2
        if cmd == "add-generic-password" and not interactive:
            err("fake: add-generic-password only through -i (its password would be in argv)"); return 2
        if os.path.exists(failing):
            with open(failing) as f: fail = json.load(f)
            if fail["command"] == cmd:
                err(fail["message"].replace("{password}", o.get("w", "") if isinstance(o.get("w"), str) else "")); return fail["status"]
        items = load()
        key = o["s"] + "\n" + o["a"]
        if cmd == "find-generic-password":
            if key not in items:
                err("SecKeychainSearchCopyNext: The specified item could not be found in the keychain."); return 44
            sys.stdout.write(items[key] + "\n"); return 0
        if cmd == "delete-generic-password":
            if key not in items:
                err("SecKeychainSearchCopyNext: The specified item could not be found in the keychain."); return 44
            del items[key]; save(items)
            sys.stdout.write('keychain: "fake"\nclass: "genp"\n'); sys.stderr.write("password has been deleted.\n"); return 0
        if key in items and "U" not in o:
            err("SecKeychainItemCreateFromContent (<default>): The specified item already exists in the keychain."); return 45
        items[key] = o["w"]; save(items); return 0

    if sys.argv[1:] == ["-i"]:
        result = 0
        for line in sys.stdin.read().split("\n"):
            if len(line) >= 4095:
                err("fake: line longer than security's buffer"); sys.exit(2)
            args = split_line(line)
            if not args: continue
            result = run(args, True)
            if result: sys.stderr.write("%s: returned %d\n" % (args[0], result))
        sys.exit(result & 0xFF)
    elif len(sys.argv) > 1 and not sys.argv[1].startswith("-"):
        sys.exit(run(sys.argv[1:], False) & 0xFF)
    else:
        sys.stderr.write("Usage: security [-i] command (fake)\n"); sys.exit(2)
    """#
}
