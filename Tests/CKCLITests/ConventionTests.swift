import CKTestSupport
import Foundation
import XCTest

/// The conventions of issue 12 that a shell user meets first (Docs/ck.md "Conventions"):
/// "did you mean", next steps in errors, environment variables and cktool spellings, names
/// from stdin, --if-exists, `ck status`, one-screen help. (A terminal on stdin and account
/// checks with `--follow`: EndToEndTests/ConventionTests.)
final class ConventionTests: XCTestCase {
    func testUnknownWordsGetTheNearestKnownOne() {
        let s = CLISandbox()
        assertFailure(s.ck("recod"), exit: 2, contains: "unknown command 'recod'; did you mean 'ck record'?")
        assertFailure(s.ck("record", "sav"), exit: 2, contains: "unknown command 'ck record sav'; did you mean 'ck record save'?")
        assertFailure(s.ck("zone", "lst"), exit: 2, contains: "did you mean 'ck zone list'?")
        assertFailure(s.ck("record", "save", "--tga", "3"), exit: 2, contains: "unknown option '--tga'; did you mean '--tag'?")
        assertFailure(s.ck("--formt", "json", "account"), exit: 2, contains: "unknown option '--formt'; did you mean '--format'?")
        // Nothing close: no guess, but where to look.
        let far = s.ck("frobnicate")
        assertFailure(far, exit: 2, contains: "unknown command 'frobnicate'; see 'ck help'")
        XCTAssertFalse(far.stderr.contains("did you mean"))
        // A dash name keeps its own hint when no option is near.
        assertFailure(s.ck("record", "get", "----Root-Folder----"), exit: 2, contains: "goes in --name")
    }

    func testErrorsNameTheirNextStep() {
        let s = CLISandbox()
        s.signIn()
        XCTAssertEqual(s.ck("record", "save", "--type", "Note", "--name", "x", "title=a").status, 0)
        assertFailure(s.ck("record", "save", "--type", "Note", "--name", "x", "title=b"), exit: 4,
                      contains: "EXISTS: record to insert already exists: 'x'; to update it, pass --tag 1 (its current tag) or --force")
        assertFailure(s.ck("record", "save", "--name", "x", "--tag", "zz", "title=b"), exit: 4,
                      contains: "fetch it again (ck record get x) and retry with --tag 1, or pass --force to overwrite")
        assertFailure(s.ck("--zone", "Trips", "record", "get", "x"), exit: 3, contains: "; create it with ck zone create Trips")
        assertFailure(s.ck("--db", "public", "--zone", "Trips", "record", "list"), exit: 3, contains: "the public database has only _defaultZone")
        assertFailure(s.ck("zone", "delete", "Trips"), exit: 3, contains: "pass --if-exists")
        assertFailure(s.ck("record", "delete", "nope"), exit: 3, contains: "pass --if-exists")
        // The JSON envelope stays CloudKit's: no hint in its reason.
        let j = s.ck("--error-format", "json", "record", "save", "--type", "Note", "--name", "x", "title=b")
        XCTAssertEqual(j.status, 4)
        XCTAssertFalse(j.stderr.contains("--force"), j.stderr)
        // A bad choice lists the valid ones, from the flag or from its variable.
        assertFailure(s.ck("--format", "yaml", "account"), exit: 2, contains: "invalid value 'yaml' for --format; valid values: json, ndjson, table, csv, tsv")
        assertFailure(s.ck("--db", "secret", "account"), exit: 2, contains: "valid values: public, private, shared")
        assertFailure(s.run(["account"], env: ["CK_ENVIRONMENT": "staging"]), exit: 2, contains: "invalid value 'staging' for $CK_ENVIRONMENT; valid values: development, production")
    }

    func testEnvironmentVariablesAndCktoolSpellings() {
        let s = CLISandbox()
        s.signIn()
        XCTAssertEqual(s.ck("zone", "create", "Trips").status, 0)
        // CK_ZONE is --zone's variable; the flag beats it.
        let saved = s.run(["record", "save", "--type", "Trip", "--name", "t1", "city=Paris"], env: ["CK_ZONE": "Trips"])
        XCTAssertEqual(saved.status, 0, saved.stderr)
        XCTAssertEqual(s.run(["record", "get", "t1"], env: ["CK_ZONE": "Trips"]).status, 0)
        assertFailure(s.run(["--zone", "_defaultZone", "record", "get", "t1"], env: ["CK_ZONE": "Trips"]), exit: 3)
        // CK_ZONE scopes what --zone scopes: export of one zone instead of all.
        XCTAssertEqual(s.ck("record", "save", "--type", "Note", "title=home").status, 0)
        XCTAssertEqual(s.ck("export").stdout.split(separator: "\n").count, 2)
        let one = s.run(["export"], env: ["CK_ZONE": "Trips"])
        XCTAssertEqual(one.stdout.split(separator: "\n").count, 1)
        XCTAssertTrue(one.stdout.contains("Paris"))
        // cktool's spellings, as copied from its documentation.
        let listed = s.ck("record", "list", "--container-id", "iCloud.com.example.app", "--environment", "development",
                          "--database-type", "private", "--zone-name", "Trips", "--record-type", "Trip", "--format", "ndjson")
        XCTAssertEqual(listed.status, 0, listed.stderr)
        XCTAssertEqual(listed.stdout.split(separator: "\n").count, 1)
        XCTAssertTrue(listed.stdout.contains("\"recordName\":\"t1\""))
        let other = s.ck("--container-id", "iCloud.com.other", "--zone-name", "Trips", "record", "list")
        assertFailure(other, exit: 3)
    }

    func testQuietSilencesWarnings() {
        let s = CLISandbox()
        s.signIn()
        // A field defined just in time is announced on stderr; -q, --quiet and CK_QUIET say nothing.
        let loud = s.ck("record", "save", "--type", "Note", "--name", "n0", "title=a")
        XCTAssertEqual(loud.status, 0, loud.stderr)
        XCTAssertTrue(loud.stderr.contains("ck: defined field 'title' as STRING in new record type 'Note'"), loud.stderr)
        for (i, quiet) in [s.ck("-q", "record", "save", "--type", "Note", "--name", "n1", "a1=x"),
                           s.ck("record", "save", "--quiet", "--type", "Note", "--name", "n2", "a2=x"),
                           s.run(["record", "save", "--type", "Note", "--name", "n3", "a3=x"], env: ["CK_QUIET": "1"])].enumerated() {
            XCTAssertEqual(quiet.status, 0, quiet.stderr)
            XCTAssertEqual(quiet.stderr, "")
            XCTAssertEqual((quiet.object["records"] as? [[String: Any]])?.first?["recordName"] as? String, "n\(i + 1)")
        }
        // A query the schema has no index for is an error, in development too: -q keeps it.
        assertFailure(s.ck("-q", "record", "query", "--type", "Note", "--filter", "a1 == x", "--sort", "zz"), exit: 6, contains: "not marked")
        // Errors are not warnings: -q keeps them.
        assertFailure(s.ck("-q", "record", "get", "nope"), exit: 3, contains: "NOT_FOUND")
    }

    func testNamesFromStdinAndDeletesForScripts() {
        let s = CLISandbox()
        s.signIn()
        XCTAssertEqual(s.ck("zone", "create", "Z").status, 0)
        for n in ["a", "b", "c"] { XCTAssertEqual(s.ck("--zone", "Z", "record", "save", "--type", "T", "--name", n, "v=1").status, 0) }
        // A child that goes with its parent (DELETE_SELF).
        let child = #"{"operations":[{"operationType":"create","record":{"recordName":"kid","recordType":"T","fields":{"up":{"value":{"recordName":"a","action":"DELETE_SELF"}}}}}]}"#
        XCTAssertEqual(s.run(["--zone", "Z", "record", "modify"], stdin: child).status, 0)

        let got = s.run(["--zone", "Z", "record", "get", "-", "--format", "ndjson"], stdin: "a\r\n\nb\n")
        XCTAssertEqual(got.status, 0, got.stderr)
        XCTAssertEqual(got.stdout.split(separator: "\n").compactMap { line -> String? in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["recordName"] as? String }, ["a", "b"])
        assertFailure(s.run(["--zone", "Z", "record", "get", "-"], stdin: "\n\n"), exit: 2, contains: "no record names on stdin")
        assertFailure(s.run(["--zone", "Z", "record", "get", "-", "-"], stdin: "a\n"), exit: 2, contains: "more than once")

        // Several names, one missing: --if-exists leaves it out; the cascade is listed.
        let del = s.run(["--zone", "Z", "record", "delete", "-", "--if-exists"], stdin: "a\nnope\nb\n")
        XCTAssertEqual(del.status, 0, del.stderr)
        let names = (del.object["records"] as? [[String: Any]])?.map { "\($0["recordName"]!):\($0["deleted"]!)" }
        XCTAssertEqual(names, ["a:1", "b:1", "kid:1"])
        XCTAssertNil((del.object["records"] as? [[String: Any]])?.first?["zoneID"], "records/modify tombstones carry no zoneID")
        assertFailure(s.ck("--zone", "Z", "record", "get", "kid"), exit: 3)

        // Without --if-exists a missing name fails the (atomic) batch: nothing deleted.
        s.assertUnchanged("atomic delete with a missing name") {
            let r = s.ck("--zone", "Z", "record", "delete", "c", "nope")
            XCTAssertEqual(r.status, 9)
            XCTAssertTrue(r.stderr.contains("(cause: NOT_FOUND"), r.stderr)
        }
        let gone = s.ck("--zone", "Z", "record", "delete", "nope", "--if-exists")
        XCTAssertEqual(gone.status, 0)
        XCTAssertEqual(gone.object["records"] as? [Any] as? [NSObject], [])
        assertFailure(s.ck("--zone", "Z", "record", "delete", "c", "a", "--tag", "1"), exit: 2, contains: "--tag goes with one record name")
        XCTAssertEqual(s.ck("--zone", "Z", "record", "delete", "c").status, 0)

        // zone delete --if-exists.
        let zd = s.ck("zone", "delete", "Z", "Gone", "--if-exists", "--format", "ndjson")
        XCTAssertEqual(zd.status, 0, zd.stderr)
        XCTAssertEqual(zd.stdout.split(separator: "\n").count, 1)
        XCTAssertTrue(zd.stdout.contains("\"zoneName\":\"Z\""))
        s.assertUnchanged("zone delete --if-exists of nothing") {
            XCTAssertEqual(s.ck("zone", "delete", "Gone", "--if-exists").stdout, "{\n  \"zones\": []\n}\n")
        }
    }

    func testStatusShowsWhereAndHowFarBehind() {
        let s = CLISandbox()
        let out = s.ck("status")
        XCTAssertEqual(out.status, 0, out.stderr)
        XCTAssertEqual(out.object["dataDirectory"] as? String, s.dataDir.path)
        XCTAssertEqual((out.object["account"] as? [String: Any])?["status"] as? String, "noAccount")
        XCTAssertNotNil(out.object["zonesUnavailable"])
        s.signIn()
        XCTAssertEqual(s.ck("zone", "create", "A", "B").status, 0)
        for v in ["1", "2"] { XCTAssertEqual(s.ck("--zone", "A", "record", "save", "--type", "T", "v=\(v)").status, 0) }
        XCTAssertEqual(s.ck("--zone", "A", "zone", "changes").status, 0)
        XCTAssertEqual(s.ck("--zone", "A", "record", "save", "--type", "T", "v=3").status, 0)
        XCTAssertEqual(s.ck("--zone", "B", "zone", "changes").status, 0)
        XCTAssertEqual(s.ck("token", "expire", "--zone", "B").status, 0)
        let st = s.ck("status")
        XCTAssertEqual(st.object["containerIdentifier"] as? String, "iCloud.com.example.app")
        XCTAssertEqual(st.object["environment"] as? String, "development")
        XCTAssertEqual(st.object["database"] as? String, "private")
        let zones = Dictionary(uniqueKeysWithValues: ((st.object["zones"] as? [[String: Any]]) ?? []).map { ($0["zoneName"] as! String, $0) })
        XCTAssertEqual(zones["A"]?["bookmark"] as? String, "behind")
        XCTAssertEqual(zones["A"]?["behind"] as? Int, 1)
        XCTAssertEqual(zones["B"]?["bookmark"] as? String, "expired")
        XCTAssertNotNil(zones["_defaultZone"])
        XCTAssertNil(zones["_defaultZone"]?["bookmark"], "the default zone has no change feed")
        let dbc = st.object["databaseChanges"] as? [String: Any]
        XCTAssertEqual(dbc?["bookmark"] as? String, "none")
        XCTAssertGreaterThan(dbc?["behind"] as? Int ?? 0, 0)
        XCTAssertNil(st.object["faults"], "no faults armed")
        XCTAssertEqual(s.ck("fault", "add", "--op", "zones/list", "--error", "THROTTLED").status, 0)
        XCTAssertEqual(s.ck("status").object["faults"] as? [String], ["f1"])
        XCTAssertEqual(s.ck("fault", "clear").status, 0)
        // Another device has fetched nothing.
        let other = s.ck("--device", "phone", "status")
        let az = ((other.object["zones"] as? [[String: Any]]) ?? []).first { $0["zoneName"] as? String == "A" }
        XCTAssertEqual(az?["bookmark"] as? String, "none")
        XCTAssertEqual(az?["behind"] as? Int, 3)
    }

    func testHelpIsOneScreenAndNamesEveryCommand() {
        let s = CLISandbox()
        let h = s.ck("help")
        XCTAssertEqual(h.status, 0)
        let lines = h.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        XCTAssertLessThanOrEqual(lines.count, 30, h.stdout)
        XCTAssertLessThanOrEqual(lines.map(\.count).max() ?? 0, 100)
        let all = s.ck("help", "--all")
        XCTAssertEqual(all.status, 0)
        // Every command of the table is in the overview (by its words) and in --all.
        for line in all.stdout.split(separator: "\n") where line.hasPrefix("  ") && !line.hasPrefix("  -") {
            let words = line.split(separator: " ").prefix { $0.first?.isLowercase == true }.map(String.init)
            guard let first = words.first, !first.hasPrefix("-") else { continue }
            XCTAssertTrue(h.stdout.contains(first), "'\(first)' missing from ck help")
            if words.count > 1 { XCTAssertTrue(h.stdout.contains(words[1]), "'\(words.joined(separator: " "))' missing from ck help") }
        }
        XCTAssertTrue(all.stdout.contains("$CK_ZONE"))
    }
}
