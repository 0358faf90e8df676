import CKJSON
import CKTestSupport
import Foundation
import XCTest
@testable import CKCLI
@testable import CKCore

/// The walkthrough issue 28 asks for: every read path, in every output format, for each
/// caller — the owner, a read-only participant, a read-write participant, a user who accepted
/// a public share, a user never invited, the device's own account (no `--as`), and a
/// signed-out device (with and without `--as`) — over alice's zone holding a shared list and
/// her unshared diary, and a public-database type only its creator may read. A hidden
/// record's fields, name and type never appear on stdout or stderr; asking for one by name
/// gets the answer a record that does not exist gets.
final class ReadPathIsolationTests: XCTestCase {
    static let alice = "alice@example.com", bob = "bob@example.com", carol = "carol@example.com", dave = "dave@example.com", erin = "erin@example.com"
    static let formats = ["json", "ndjson", "table", "csv", "tsv"]
    /// alice's diary, never shared: its names, type, field names and values.
    static let diary = ["secret-diary", "secret-gone", "Diary", "diaryText", "classified-", "diaryScan"]
    /// alice's public vault entry: only its creator may read the type.
    static let vault = ["vault-entry", "Vault", "vaultCode", "zx-vault"]

    struct Fixture {
        let s: CLISandbox
        /// The short GUID of alice's share (its URL's last part).
        let guid: String
        /// The number of changes of zone Lists and of the public default zone.
        let listsHead: Int
        let publicHead: Int
    }

    static func makeFixture() -> Fixture {
        let s = CLISandbox()
        @discardableResult
        func ok(_ args: String...) -> CLISandbox.Result { ok(args) }
        @discardableResult
        func ok(_ args: [String]) -> CLISandbox.Result {
            let r = s.run(args)
            XCTAssertEqual(r.status, 0, "\(args): \(r.stderr)")
            return r
        }
        let a = ["--as", alice]
        for u in [alice, carol, dave, erin, bob] { ok("account", "signin", u) }
        let schema = s.dir + "/schema.ckdb"
        try? FileManager.default.createDirectory(atPath: s.dir, withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: schema, contents: Data("""
        DEFINE SCHEMA
        RECORD TYPE Vault ("___recordID" REFERENCE QUERYABLE, vaultCode STRING, GRANT CREATE TO "_icloud", GRANT READ, WRITE TO "_creator");
        RECORD TYPE Note (title STRING, GRANT CREATE TO "_icloud", GRANT WRITE TO "_creator", GRANT READ TO "_world");

        """.utf8))
        ok("schema", "import", schema)
        let scan = s.dir + "/scan.bin"
        _ = FileManager.default.createFile(atPath: scan, contents: Data("diary scan".utf8))
        // Subscriptions made before the changes they are told of.
        _ = ok("--as", bob, "--db", "public", "subscribe", "query", "--id", "vaults", "--type", "Vault")
        _ = ok("--as", bob, "--db", "public", "subscribe", "query", "--id", "notes", "--type", "Note")

        _ = ok(a + ["zone", "create", "Lists"])
        let l = a + ["--zone", "Lists"]
        _ = ok(l + ["record", "save", "--type", "List", "--name", "groceries", "title=Groceries"])
        _ = ok(l + ["record", "save", "--type", "Item", "--name", "milk", "--parent", "groceries", "qty=1"])
        _ = ok(l + ["record", "save", "--type", "Diary", "--name", "secret-diary", "diaryText=classified-1", "diaryScan:ASSET=@" + scan])
        let share = ok(l + ["share", "create", "groceries", "--participant", "\(bob):readOnly", "--participant", "\(carol):readWrite", "--public-permission", "readOnly"])
        let guid = share.parsed?["records"]?.arrayValue?.first?["shortGUID"]?.stringValue ?? ""
        XCTAssertFalse(guid.isEmpty, share.stdout)
        for u in [bob, carol, dave] { _ = ok("--as", u, "share", "accept", guid) }
        _ = ok("--as", bob, "--db", "shared", "subscribe", "zone", "--zone", "Lists", "--id", "lists")
        _ = ok(l + ["record", "save", "--name", "milk", "--force", "qty=2"])
        _ = ok(l + ["record", "save", "--name", "secret-diary", "--force", "diaryText=classified-2"])
        _ = ok(l + ["record", "save", "--type", "Item", "--name", "eggs", "--parent", "groceries", "qty=12"])
        _ = ok(l + ["record", "save", "--type", "Diary", "--name", "secret-gone", "diaryText=classified-3"])
        _ = ok(l + ["record", "delete", "secret-gone"])
        _ = ok(l + ["record", "save", "--name", "eggs", "--force", "qty=6"])
        _ = ok(a + ["tag", "create", "walk"])

        let p = ["--db", "public"]
        _ = ok(a + p + ["record", "save", "--type", "Vault", "--name", "vault-entry", "vaultCode=zx-vault-1"])
        _ = ok(a + p + ["record", "save", "--type", "Note", "--name", "hello", "title=hi"])
        _ = ok(["--as", bob] + p + ["record", "save", "--type", "Note", "--name", "bobnote", "title=yo"])
        _ = ok(a + p + ["record", "save", "--name", "vault-entry", "--force", "vaultCode=zx-vault-2"])
        // The read paths' queries have no filter: they need "___recordID" QUERYABLE.
        for t in ["Diary", "Item"] { _ = ok("schema", "index", "add", t, "___recordID", "QUERYABLE") }

        func head(_ args: [String]) -> Int { ok(args + ["log", "--format", "ndjson"]).stdout.split(separator: "\n").count }
        return Fixture(s: s, guid: guid, listsHead: head(a + ["--zone", "Lists"]), publicHead: head(a + p))
    }

    /// A caller: who runs the commands, in which database their view of alice's zone is.
    struct Who {
        let label: String
        /// Global options for the zone (`--db shared` for participants) and for the public database.
        let zone: [String]
        let pub: [String]
        /// The zone's database, with no zone named (what every zone of it shows).
        var db: [String] { Array(zone.dropLast(2)) }
        /// What they may not see of each.
        let hiddenInZone: [String]
        let hiddenInPublic: [String]
    }

    /// The share record's fields, to someone who takes no part in it: who does.
    static let others = [bob, carol, dave]

    static var callers: [Who] {
        let participant = { (u: String, label: String) in
            Who(label: label, zone: ["--as", u, "--db", "shared", "--zone", "Lists"], pub: ["--as", u, "--db", "public"], hiddenInZone: diary, hiddenInPublic: vault)
        }
        return [
            Who(label: "owner", zone: ["--as", alice, "--zone", "Lists"], pub: ["--as", alice, "--db", "public"], hiddenInZone: [], hiddenInPublic: []),
            participant(bob, "read-only participant"),
            participant(carol, "read-write participant"),
            participant(dave, "public-share user"),
            Who(label: "never invited", zone: ["--as", erin, "--db", "shared", "--zone", "Lists"], pub: ["--as", erin, "--db", "public"],
                hiddenInZone: diary + others, hiddenInPublic: vault),
            // The device's own account (bob signed in last): no --as.
            Who(label: "device account", zone: ["--db", "shared", "--zone", "Lists"], pub: ["--db", "public"], hiddenInZone: diary, hiddenInPublic: vault),
            Who(label: "never invited, own private database", zone: ["--as", erin, "--zone", "Lists"], pub: ["--as", erin, "--db", "public"],
                hiddenInZone: diary + others, hiddenInPublic: vault),
        ]
    }

    /// One command and what it may show: `named` is a hidden record the command names itself,
    /// so it may appear as the name asked for — in the words a missing record gets.
    struct Probe {
        let args: [String]
        var named: String?
        /// What the caller may see here although it is hidden elsewhere (what they wrote themselves).
        var allowed: [String] = []
    }

    /// The read paths of one database view.
    static func zoneProbes(_ f: Fixture) -> [Probe] {
        var out: [Probe] = [
            Probe(args: ["record", "get", "milk"]),
            Probe(args: ["record", "get", "secret-diary"], named: "secret-diary"),
            Probe(args: ["record", "get", "milk", "secret-diary", "nosuch-record"], named: "secret-diary"),
            Probe(args: ["record", "get", "secret-diary", "--asset", "diaryScan"], named: "secret-diary"),
            Probe(args: ["record", "get", "secret-diary", "--at", "Lists@5"], named: "secret-diary"),
            Probe(args: ["record", "get", "secret-diary", "--at", "walk"], named: "secret-diary"),
            Probe(args: ["record", "get", "secret-gone", "--at", "Lists@\(f.listsHead - 2)"], named: "secret-gone"),
            Probe(args: ["record", "list"]),
            Probe(args: ["record", "list", "--at", "Lists@\(f.listsHead - 2)"]),
            Probe(args: ["record", "query", "--type", "Diary"]),
            Probe(args: ["record", "query", "--type", "Diary", "--at", "Lists@\(f.listsHead - 2)"]),
            Probe(args: ["record", "query", "--type", "Item", "--all"]),
            Probe(args: ["export"]),
            Probe(args: ["export", "--at", "Lists@\(f.listsHead - 2)"]),
            Probe(args: ["zone", "changes", "--from-start", "--no-save"]),
            Probe(args: ["zone", "changes", "--from-start", "--no-save", "--all", "--limit", "2"]),
            Probe(args: ["database", "changes", "--from-start", "--no-save"]),
            Probe(args: ["log"]),
            Probe(args: ["log", "--patch"]),
            Probe(args: ["log", "--field", "diaryText"]),
            Probe(args: ["log", "secret-diary"], named: "secret-diary"),
            Probe(args: ["log", "--all-zones", "--patch"]),
            Probe(args: ["diff", "Lists@0"]),
            Probe(args: ["diff", "Lists@0", "--name-only"]),
            Probe(args: ["diff", "Lists@2", "Lists@\(f.listsHead)", "--stat"]),
            Probe(args: ["blame", "milk"]),
            Probe(args: ["blame", "secret-diary"], named: "secret-diary"),
            Probe(args: ["blame", "secret-diary", "--at", "Lists@5"], named: "secret-diary"),
            Probe(args: ["restore", "Lists@0", "--dry-run"]),
            Probe(args: ["restore", "Lists@3", "--dry-run"]),
            Probe(args: ["restore", "Lists@0", "secret-diary", "--dry-run"], named: "secret-diary"),
            Probe(args: ["share", "get", "groceries"]),

            Probe(args: ["share", "list"]),
            Probe(args: ["subscription", "list"]),
            Probe(args: ["notifications"]),
        ]
        for seq in 1...max(1, f.listsHead) {
            out.append(Probe(args: ["show", "Lists@\(seq)"]))
            out.append(Probe(args: ["revert", "Lists@\(seq)", "--dry-run"]))
        }
        return out
    }

    /// The read paths of a whole database (no --zone).
    static func databaseProbes(_ f: Fixture) -> [Probe] {
        [
            Probe(args: ["share", "list"]),
            Probe(args: ["database", "changes", "--from-start", "--no-save"]),
            Probe(args: ["export"]),
            Probe(args: ["log", "--all-zones", "--patch"]),
            Probe(args: ["diff", "walk"]),
            Probe(args: ["subscription", "list"]),
            Probe(args: ["notifications"]),
        ]
    }

    static func publicProbes(_ f: Fixture) -> [Probe] {
        var out: [Probe] = [
            Probe(args: ["record", "get", "hello"]),
            Probe(args: ["record", "get", "vault-entry"], named: "vault-entry"),
            Probe(args: ["record", "get", "hello", "vault-entry", "nosuch-record"], named: "vault-entry"),
            Probe(args: ["record", "get", "vault-entry", "--at", "_defaultZone@1"], named: "vault-entry"),
            Probe(args: ["record", "list"]),
            Probe(args: ["record", "list", "--at", "_defaultZone@2"]),
            Probe(args: ["record", "query", "--type", "Vault"]),
            Probe(args: ["record", "query", "--type", "Vault", "--at", "_defaultZone@1"]),
            Probe(args: ["export"]),
            Probe(args: ["export", "--at", "_defaultZone@3"]),
            Probe(args: ["log"]),
            Probe(args: ["log", "--patch"]),
            Probe(args: ["log", "--field", "vaultCode"]),
            Probe(args: ["diff", "_defaultZone@0"]),
            Probe(args: ["blame", "vault-entry"], named: "vault-entry"),
            Probe(args: ["restore", "_defaultZone@0", "--dry-run"]),
            // bob subscribed to Vault records himself: the type's name is his own words there.
            Probe(args: ["subscription", "list"], allowed: ["Vault"]),
            Probe(args: ["notifications"], allowed: ["Vault"]),
        ]
        for seq in 1...max(1, f.publicHead) {
            out.append(Probe(args: ["show", "_defaultZone@\(seq)"]))
            out.append(Probe(args: ["revert", "_defaultZone@\(seq)", "--dry-run"]))
        }
        return out
    }

    /// Failing writes whose error bodies must not carry the hidden record (`--error-format json`).
    static let zoneWrites: [Probe] = [
        Probe(args: ["record", "save", "--type", "Item", "--name", "secret-diary", "--parent", "groceries", "qty=1"], named: "secret-diary"),
        Probe(args: ["record", "save", "--name", "secret-diary", "--tag", "zzz", "qty=1"], named: "secret-diary"),
        Probe(args: ["record", "delete", "secret-diary", "--tag", "zzz"], named: "secret-diary"),
        Probe(args: ["record", "delete", "secret-diary", "--force"], named: "secret-diary"),
    ]
    static let publicWrites: [Probe] = [
        Probe(args: ["record", "save", "--type", "Note", "--name", "vault-entry", "title=x"], named: "vault-entry"),
        Probe(args: ["record", "save", "--name", "vault-entry", "--tag", "zzz", "title=x"], named: "vault-entry"),
        Probe(args: ["record", "delete", "vault-entry", "--tag", "zzz"], named: "vault-entry"),
    ]

    /// Runs a probe in every format and checks what it shows. A probe that names a hidden
    /// record must answer as it does for a record that never existed (`missing` swapped in).
    func check(_ f: Fixture, _ who: String, _ globals: [String], _ probe: Probe, hidden: [String], errorJSON: Bool = false,
               file: StaticString = #filePath, line: UInt = #line) {
        for format in Self.formats {
            let extra = ["--format", format] + (errorJSON ? ["--error-format", "json"] : [])
            let r = f.s.run(globals + extra + probe.args)
            var shown = r.stdout + r.stderr
            if let n = probe.named, hidden.contains(n) {
                // The name asked for may be echoed, as a missing name would be — nothing else.
                // (A missing name of the same length: tables align on it.)
                let missing = String(repeating: "z", count: n.count)
                let m = f.s.run(globals + extra + probe.args.map { $0 == n ? missing : $0 })
                let normalize = { (s: String) in s.replacingOccurrences(of: n, with: "NAME").replacingOccurrences(of: missing, with: "NAME") }
                if !probe.args.contains(where: { $0.hasPrefix("--tag") || $0 == "save" || $0 == "delete" }) {
                    XCTAssertEqual(r.status, m.status, "\(who) \(format) \(probe.args): a hidden record answers as a missing one", file: file, line: line)
                    XCTAssertEqual(Self.withoutUUIDs(normalize(shown)), Self.withoutUUIDs(normalize(m.stdout + m.stderr)),
                                   "\(who) \(format) \(probe.args): a hidden record answers as a missing one", file: file, line: line)
                }
                shown = shown.replacingOccurrences(of: n, with: "NAME")
            }
            for h in hidden where shown.contains(h) && !probe.allowed.contains(h) {
                XCTFail("\(who) \(format) \(globals + probe.args) shows '\(h)':\n\(shown.prefix(2000))", file: file, line: line)
            }
        }
    }

    /// Error envelopes carry a random uuid.
    static func withoutUUIDs(_ s: String) -> String {
        s.replacingOccurrences(of: "[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}", with: "UUID", options: .regularExpression)
    }

    // MARK: the walk

    func testTheProbesSeeWhatEachCallerMayRead() {
        let f = Self.makeFixture()
        // Each participant reads the shared list on every path the walk takes.
        for who in Self.callers where who.label != "owner" && !who.label.hasPrefix("never") {
            XCTAssertTrue(f.s.run(who.zone + ["log", "--patch"]).stdout.contains("\"milk\""), who.label)
            XCTAssertTrue(f.s.run(who.zone + ["record", "list"]).stdout.contains("\"milk\""), who.label)
            XCTAssertTrue(f.s.run(who.zone + ["show", "Lists@\(f.listsHead)"]).stdout.contains("\"eggs\""), who.label)
            XCTAssertTrue(f.s.run(who.pub + ["log"]).stdout.contains("\"hello\""), who.label)
        }
        // The probes can tell: alice's own answers do carry the diary and the vault.
        let log = f.s.run(["--as", Self.alice, "--zone", "Lists", "log", "--patch"])
        XCTAssertTrue(log.stdout.contains("secret-diary") && log.stdout.contains("classified-2"), log.stdout)
        XCTAssertTrue(f.s.run(["--as", Self.alice, "--db", "public", "record", "get", "vault-entry"]).stdout.contains("zx-vault-2"))
        XCTAssertTrue(f.s.run(["--as", Self.alice, "--zone", "Lists", "show", "Lists@3"]).stdout.contains("diaryText"))
    }

    func testHistoryPathsHideWhatEachCallerMayNotRead() {
        let f = Self.makeFixture()
        let history: Set<String> = ["log", "show", "diff", "blame", "restore", "revert"]
        for who in Self.callers {
            for p in Self.zoneProbes(f) where history.contains(p.args[0]) || p.args.contains("--at") {
                check(f, who.label, who.zone, p, hidden: who.hiddenInZone)
            }
            for p in Self.databaseProbes(f) where history.contains(p.args[0]) {
                check(f, who.label, who.db, p, hidden: who.hiddenInZone)
            }
            for p in Self.publicProbes(f) where history.contains(p.args[0]) || p.args.contains("--at") {
                check(f, who.label, who.pub, p, hidden: who.hiddenInPublic)
            }
        }
    }

    func testRecordFeedSharingAndNotificationPathsHideWhatEachCallerMayNotRead() {
        let f = Self.makeFixture()
        let history: Set<String> = ["log", "show", "diff", "blame", "restore", "revert"]
        for who in Self.callers {
            for p in Self.zoneProbes(f) where !history.contains(p.args[0]) && !p.args.contains("--at") {
                check(f, who.label, who.zone, p, hidden: who.hiddenInZone)
            }
            for p in Self.databaseProbes(f) where !history.contains(p.args[0]) {
                check(f, who.label, who.db, p, hidden: who.hiddenInZone)
            }
            for p in Self.publicProbes(f) where !history.contains(p.args[0]) && !p.args.contains("--at") {
                check(f, who.label, who.pub, p, hidden: who.hiddenInPublic)
            }
        }
    }

    /// `share get` by the share's URL or short GUID, which anyone holding the link can ask:
    /// to someone who takes no part in the share, nothing of its participants.
    func testAShareLinkShowsNothingOfItsParticipantsToOthers() {
        let f = Self.makeFixture()
        let probes = [Probe(args: ["share", "get", f.guid]), Probe(args: ["share", "get", "https://www.icloud.com/share/" + f.guid])]
        for who in Self.callers where who.label.hasPrefix("never") {
            for p in probes { check(f, who.label, who.db, p, hidden: Self.others + Self.diary) }
        }
        for who in Self.callers where !who.label.hasPrefix("never") {
            for p in probes { check(f, who.label, who.db, p, hidden: who.hiddenInZone) }
        }
    }

    func testFailingWritesCarryNothingOfAHiddenRecord() {
        let f = Self.makeFixture()
        for who in Self.callers where who.label != "owner" {
            for p in Self.zoneWrites { check(f, who.label, who.zone, p, hidden: who.hiddenInZone, errorJSON: true) }
            for p in Self.publicWrites { check(f, who.label, who.pub, p, hidden: who.hiddenInPublic, errorJSON: true) }
        }
    }

    /// A conditional write (`--tag`) to a name the caller may not read answers as one to a name
    /// that does not exist: NOT_FOUND, in the same words — not a refusal that tells them the
    /// record is there (issue 28: "not shared with this user", "created by another user").
    func testConditionalWritesToAHiddenNameAnswerAsToAMissingOne() {
        let f = Self.makeFixture()
        for who in Self.callers where who.label != "owner" && !who.label.hasPrefix("never") {
            for (globals, name) in [(who.zone, "secret-diary"), (who.pub, "vault-entry")] {
                for args in [["record", "save", "--name", name, "--tag", "zzz", "qty=1"], ["record", "delete", name, "--tag", "zzz"]] {
                    let missing = String(repeating: "z", count: name.count)
                    let r = f.s.run(globals + args), m = f.s.run(globals + args.map { $0 == name ? missing : $0 })
                    XCTAssertEqual(r.status, m.status, "\(who.label) \(args): \(r.stderr)")
                    XCTAssertEqual(r.stderr.replacingOccurrences(of: name, with: "NAME"), m.stderr.replacingOccurrences(of: missing, with: "NAME"), "\(who.label) \(args)")
                }
            }
        }
    }

    func testASignedOutDeviceSeesOnlyWhatTheWorldMayRead() {
        let f = Self.makeFixture()
        XCTAssertEqual(f.s.run(["account", "signout"]).status, 0)
        let everything = Self.diary + Self.vault
        for globals in [["--db", "public"], ["--as", Self.alice, "--db", "public"], ["--as", Self.bob, "--db", "public"]] {
            for p in Self.publicProbes(f) { check(f, "signed out \(globals)", globals, p, hidden: Self.vault) }
            for p in Self.publicWrites { check(f, "signed out \(globals)", globals, p, hidden: Self.vault, errorJSON: true) }
        }
        // Private and shared need an account: every path refuses, naming nothing.
        for globals in [["--zone", "Lists"], ["--as", Self.alice, "--zone", "Lists"], ["--as", Self.bob, "--db", "shared", "--zone", "Lists"]] {
            for p in Self.zoneProbes(f) + Self.zoneWrites { check(f, "signed out \(globals)", globals, p, hidden: everything) }
            for p in Self.databaseProbes(f) { check(f, "signed out \(globals)", Array(globals.dropLast(2)), p, hidden: everything + Self.others) }
        }
        // The world-readable notes are there; the vault is not.
        let list = f.s.run(["--db", "public", "record", "list", "--format", "ndjson"])
        XCTAssertEqual(Set(list.stdout.split(separator: "\n").compactMap { try? JSONParser.parse(Array($0.utf8))["recordName"]?.stringValue }), ["hello", "bobnote"])
    }
}
