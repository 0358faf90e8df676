import CKTestSupport
import Foundation
import XCTest

/// `ck serve` as a process: its announcement, signals, the CLI and the server on one data
/// directory at once, and kill -9 in the middle of commits.
final class ServeProcessTests: XCTestCase {
    static let container = "iCloud.com.example.serve"

    /// A JSON document with its keys sorted, whatever its layout was.
    static func canonical(_ o: Any?) -> String {
        guard let o, let d = try? JSONSerialization.data(withJSONObject: o, options: [.sortedKeys, .fragmentsAllowed]) else { return "nil" }
        return String(decoding: d, as: UTF8.self)
    }

    func served() throws -> ServedSandbox { try ServedSandbox(container: Self.container) }

    func testItAnnouncesWhereItListensAnswersAndStopsCleanlyOnSIGTERM() throws {
        let s = try served()
        XCTAssertEqual(s.serve.announcement["pid"] as? Int, Int(s.serve.process.processIdentifier))
        XCTAssertEqual((s.serve.announcement["dataDirectory"] as? String).map { URL(fileURLWithPath: $0).resolvingSymlinksInPath().path },
                       s.sandbox.dataDir.resolvingSymlinksInPath().path)
        XCTAssertTrue(s.serve.url.hasPrefix("http://127.0.0.1:"))
        XCTAssertEqual(try s.serve.client().request("GET", s.path("private", "zones/list")).status, 200)
        // A long-poll in flight when the signal comes is answered, and the process exits 0 soon.
        let made = try s.serve.client().request("POST", "/device/1/\(Self.container)/development/tokens/create?\(s.auth)", json: "{}")
        let courier = try XCTUnwrap(made["webcourierURL"] as? String)
        let poller = try s.serve.client()
        try poller.send("GET \(courier.dropFirst(s.serve.url.count)) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        Thread.sleep(forTimeInterval: 0.3)
        let stopped = s.serve.stop(SIGTERM)
        XCTAssertEqual(stopped.status, 0, stopped.stderr)
        XCTAssertLessThan(stopped.seconds, 5)
        XCTAssertEqual(try poller.readAnswer().text, "null", "the poll in flight was answered")
        XCTAssertTrue(stopped.stderr.contains("GET /database/1/\(Self.container)/development/private/zones/list 200 "), stopped.stderr)
        XCTAssertFalse(stopped.stderr.contains(s.apiToken), "no token in the log")
    }

    func testAnAddressOtherThanLoopbackIsWarnedAbout() throws {
        let s = Sandbox()
        let serve = try ServeProcess(s, ["--host", "0.0.0.0"])
        let stopped = serve.stop(SIGINT)
        XCTAssertEqual(stopped.status, 0)
        XCTAssertTrue(stopped.stderr.contains("not loopback"), stopped.stderr)
        assertFailure(s.ck("serve", "--port", "70000"), exit: 2, contains: "--port")
        // A port another server holds: said in one line, EXISTS (exit 4), nothing served.
        let first = try ServeProcess(s)
        assertFailure(s.ck("serve", "--port", String(first.port)), exit: 4, contains: "cannot listen on 127.0.0.1:\(first.port)")
        XCTAssertEqual(first.stop().status, 0)
        assertFailure(s.ck("serve", "--allow-origin", "evil"), exit: 2, contains: "--allow-origin")
    }

    /// The CLI and HTTP clients write one zone at once; every write lands, and both sides then
    /// read exactly the same records.
    func testCLIAndHTTPWritesAtOnceEndInOneStore() throws {
        let s = try served()
        let n = 15
        let group = DispatchGroup()
        final class Failures: @unchecked Sendable { var list: [String] = []; let lock = NSLock()
            func add(_ s: String) { lock.lock(); list.append(s); lock.unlock() } }
        let failures = Failures()
        group.enter()
        DispatchQueue.global().async {
            for i in 0..<n {
                let r = s.sandbox.ck("record", "save", "--type", "Item", "--name", "cli-\(i)", "n=\(i)")
                if r.status != 0 { failures.add("cli-\(i): \(r.stderr)") }
            }
            group.leave()
        }
        group.enter()
        DispatchQueue.global().async {
            for i in 0..<n {
                do {
                    let a = try s.post("private", "records/modify", #"{"operations":[{"operationType":"create","record":{"recordType":"Item","recordName":"http-\#(i)","fields":{"n":{"value":\#(i)}}}}]}"#)
                    if a.status != 200 || a.text.contains("serverErrorCode") { failures.add("http-\(i): \(a.text)") }
                } catch { failures.add("http-\(i): \(error)") }
            }
            group.leave()
        }
        group.wait()
        XCTAssertEqual(failures.list, [])
        // Queries without a filter, sorted by record name, need these indexes, as in CloudKit.
        XCTAssertEqual(s.sandbox.ck("schema", "index", "add", "Item", "___recordID", "QUERYABLE", "SORTABLE").status, 0)
        let query = #"{"query":{"recordType":"Item","sortBy":[{"fieldName":"___recordID","ascending":true}]},"resultsLimit":200}"#
        let overHTTP = try s.post("private", "records/query", query)
        let overCLI = s.sandbox.run(["record", "query", "--type", "Item", "--limit", "200"])
        func names(_ o: Any?) -> [String] { ((o as? [String: Any])?["records"] as? [[String: Any]])?.compactMap { $0["recordName"] as? String }.sorted() ?? [] }
        let expected = ((0..<n).map { "cli-\($0)" } + (0..<n).map { "http-\($0)" }).sorted()
        XCTAssertEqual(names(overHTTP.json), expected)
        XCTAssertEqual(names(overCLI.json()), expected)
        // Record for record, the same bytes.
        for name in ["cli-3", "http-7"] {
            let cli = s.sandbox.ck("record", "get", name)
            let http = try s.post("private", "records/lookup", #"{"records":[{"recordName":"\#(name)"}]}"#)
            XCTAssertEqual(Self.canonical(http.json), Self.canonical(cli.json()), cli.stderr)
        }
        _ = s.serve.stop()
    }

    /// What the server keeps of the files it reads for every request is never staler than the
    /// CLI's last write: every write counts in the write counter the user's ck processes share,
    /// so the very next request sees it — a record saved, a fault armed (a file that was not
    /// there) and cleared. A hand edit counts nothing; it is seen within a quarter of a second.
    func testTheServerSeesEachCLIWriteAtTheNextRequestAndAHandEditSoonAfter() throws {
        let s = try served()
        let lookup = #"{"records":[{"recordName":"seen"}]}"#
        func n() throws -> Int? {
            let first = ((try s.post("private", "records/lookup", lookup).json as? [String: Any])?["records"] as? [[String: Any]])?.first
            return ((first?["fields"] as? [String: Any])?["n"] as? [String: Any])?["value"] as? Int
        }
        for i in 1...5 {
            XCTAssertEqual(s.sandbox.ck("record", "save", "--type", "Item", "--name", "seen", "--force", "n=\(i)").status, 0)
            XCTAssertEqual(try n(), i, "saved by the CLI, seen by the next request")
            for _ in 0..<10 { XCTAssertEqual(try n(), i) }
        }
        XCTAssertEqual(s.sandbox.ck("fault", "add", "--op", "records/lookup", "--error", "THROTTLED").status, 0)
        XCTAssertTrue(try s.post("private", "records/lookup", lookup).text.contains("THROTTLED"), "a fault armed is seen at once")
        XCTAssertEqual(s.sandbox.ck("fault", "clear").status, 0)
        XCTAssertEqual(try n(), 5, "and cleared")
        // By hand, as an editor saves: a new file renamed over the record's.
        let records = FileManager.default.enumerator(atPath: s.sandbox.dataDir.path)?.compactMap { $0 as? String } ?? []
        let file = s.sandbox.dataDir.path + "/" + (try XCTUnwrap(records.first { $0.contains("/records/") && $0.hasSuffix("/seen.json") }))
        var record = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: file))) as? [String: Any])
        var inner = try XCTUnwrap(record["record"] as? [String: Any])
        var fields = try XCTUnwrap(inner["fields"] as? [String: Any])
        fields["n"] = ["type": "INT64", "value": 99]
        inner["fields"] = fields
        record["record"] = inner
        try JSONSerialization.data(withJSONObject: record).write(to: URL(fileURLWithPath: file + ".edit"))
        XCTAssertEqual(rename(file + ".edit", file), 0)
        Thread.sleep(forTimeInterval: 0.3)
        XCTAssertEqual(try n(), 99, "a hand edit is seen within a quarter of a second")
        _ = s.serve.stop()
    }

    /// kill -9 while HTTP clients commit, then another write from the CLI, then fsck: every
    /// save the server acknowledged is there, and a second fsck finds nothing.
    func testKillNineMidCommitThenAnotherWriteThenFsckLosesNothingAcknowledged() throws {
        let s = try served()
        final class Acked: @unchecked Sendable { var names: [String] = []; let lock = NSLock()
            func add(_ s: String) { lock.lock(); names.append(s); lock.unlock() }
            var all: [String] { lock.lock(); defer { lock.unlock() }; return names } }
        let acked = Acked()
        let group = DispatchGroup()
        for w in 0..<3 {
            group.enter()
            DispatchQueue.global().async {
                defer { group.leave() }
                for i in 0..<10_000 {
                    let name = "w\(w)-\(i)"
                    guard let a = try? s.post("private", "records/modify", #"{"operations":[{"operationType":"create","record":{"recordType":"Item","recordName":"\#(name)","fields":{"n":{"value":\#(i)}}}}]}"#) else { return }
                    if a.status == 200, !a.text.contains("serverErrorCode") { acked.add(name) }
                }
            }
        }
        Thread.sleep(forTimeInterval: 1.5)
        _ = s.serve.stop(SIGKILL)
        group.wait()
        let names = acked.all
        XCTAssertGreaterThan(names.count, 0)
        XCTAssertEqual(s.sandbox.ck("record", "save", "--type", "Item", "--name", "after-kill", "n=1").status, 0)
        let first = s.sandbox.ck("fsck")
        XCTAssertEqual(first.status, 0, first.stdout + first.stderr)
        let second = s.sandbox.ck("fsck")
        XCTAssertEqual(second.object["clean"] as? Bool, true, second.stdout)
        XCTAssertEqual(s.sandbox.ck("schema", "index", "add", "Item", "___recordID", "QUERYABLE").status, 0)
        let all = s.sandbox.run(["record", "query", "--type", "Item", "--all", "--format", "ndjson"])
        let present = Set(all.stdout.split(separator: "\n").compactMap { line -> String? in
            ((try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any])?["recordName"] as? String
        })
        let lost = names.filter { !present.contains($0) }
        XCTAssertEqual(lost, [], "acknowledged saves lost after kill -9")
        XCTAssertTrue(present.contains("after-kill"))
    }

    /// The server answers a commit once its history is synced and publishes the record files
    /// after (issue 38); here it is held in between (`CK_DEBUG_PUBLISH_DELAY_MS`). Meanwhile
    /// another process reads the answered records; a writer of another zone goes on; then
    /// kill -9, another write to the zone, fsck: every answered record is there, files included.
    func testKillNineWhileAnsweredCommitsAreUnpublishedThenAnotherWriteThenFsck() throws {
        let s = try ServedSandbox(container: Self.container, serveEnvironment: ["CK_DEBUG_PUBLISH_DELAY_MS": "60000"])
        XCTAssertEqual(s.sandbox.ck("zone", "create", "Z").status, 0)
        for i in 0..<3 {
            let a = try s.post("private", "records/modify", #"{"zoneID":{"zoneName":"Z"},"operations":[{"operationType":"create","record":{"recordType":"Item","recordName":"r\#(i)","fields":{"n":{"value":\#(i)}}}}]}"#)
            XCTAssertEqual(a.status, 200, a.text)
            XCTAssertFalse(a.text.contains("serverErrorCode"), a.text)
        }
        func recordFiles() -> [String] {
            let root = s.sandbox.root.path
            return (FileManager.default.enumerator(atPath: root)?.allObjects as? [String] ?? [])
                .filter { $0.contains("/zones/Z/records/") && $0.hasSuffix(".json") }.map { ($0 as NSString).lastPathComponent }.sorted()
        }
        XCTAssertEqual(recordFiles(), [], "answered, not yet published")
        // Another process reads them from the history.
        let looked = s.sandbox.ck("record", "get", "--zone", "Z", "r0", "r1", "r2")
        XCTAssertEqual(looked.status, 0, looked.stderr)
        XCTAssertEqual(((looked.object["records"] as? [[String: Any]]) ?? []).compactMap { $0["recordName"] as? String }, ["r0", "r1", "r2"])
        // The server's other zones are not held.
        XCTAssertEqual(s.sandbox.ck("record", "save", "--type", "Item", "--name", "elsewhere", "n=1").status, 0)

        XCTAssertEqual(s.serve.stop(SIGKILL).status, SIGKILL)
        XCTAssertEqual(s.sandbox.ck("record", "save", "--zone", "Z", "--type", "Item", "--name", "after-kill", "n=9").status, 0)
        XCTAssertEqual(recordFiles(), ["after-kill.json", "r0.json", "r1.json", "r2.json"], "the next writer published them from the history")
        // The first fsck removes the files the kill left half made; the second finds nothing.
        let first = s.sandbox.ck("fsck")
        XCTAssertEqual(first.status, 0, first.stdout + first.stderr)
        XCTAssertEqual(((first.object["problems"] as? [[String: Any]]) ?? []).filter { ($0["problem"] as? String)?.hasPrefix("half-written temporary file") != true }.count, 0, first.stdout)
        let second = s.sandbox.ck("fsck")
        XCTAssertEqual(second.object["clean"] as? Bool, true, second.stdout)
        let listed = s.sandbox.ck("record", "list", "--zone", "Z")
        XCTAssertEqual(((listed.object["records"] as? [[String: Any]]) ?? []).compactMap { $0["recordName"] as? String }.sorted(), ["after-kill", "r0", "r1", "r2"], listed.stdout)
    }

    /// The server keeps nothing the store does not have: after a restart the API token, the
    /// session and the web client's push token still work, and a notification that came while
    /// it was down is delivered.
    func testARestartedServerKnowsEveryTokenAndDeliversWhatCameMeanwhile() throws {
        let s = try served()
        let auth = "ckAPIToken=\(s.apiToken)&ckWebAuthToken=" + (s.session.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? s.session)
        XCTAssertEqual(try s.post("private", "subscriptions/modify", #"{"operations":[{"operationType":"create","subscription":{"subscriptionID":"db","subscriptionType":"database"}}]}"#).status, 200)
        let made = try s.serve.client().request("POST", "/device/1/\(Self.container)/development/tokens/create?" + auth, json: "{}")
        let courier = try XCTUnwrap(made["webcourierURL"] as? String)
        XCTAssertEqual(s.serve.stop().status, 0)
        // While it is down, the CLI makes a zone: the database subscription fires.
        XCTAssertEqual(s.sandbox.ck("zone", "create", "WhileDown").status, 0)
        let again = try ServeProcess(s.sandbox)
        // The new server listens on another port; the path is the same.
        let path = try XCTUnwrap(URL(string: courier)?.path)
        let push = try again.client().request("GET", path)
        XCTAssertEqual(((push.json as? [String: Any])?["ck"] as? [String: Any])?["met"] as? [String: Any] != nil, true, push.text)
        let zones = try again.client().request("GET", "/database/1/\(Self.container)/development/private/zones/list?" + auth)
        XCTAssertEqual(zones.status, 200, zones.text)
        XCTAssertTrue(zones.text.contains("WhileDown"))
        _ = again.stop()
    }

    /// A writer killed after its zone's commit was indexed and before its database entry's index
    /// words: the server's feed of database changes announces the zone at the next fetch, not
    /// only after the next write (a kept head hung on the index file, which the crash left as
    /// it was).
    func testADatabaseEntryACrashedWriterLeftIsAnnouncedByTheServer() throws {
        let s = try served()
        XCTAssertEqual(s.sandbox.ck("zone", "create", "A").status, 0)
        XCTAssertEqual(s.sandbox.ck("--zone", "A", "record", "save", "--type", "T", "--name", "a1", "n=1").status, 0)
        let save = ["--zone", "A", "record", "save", "--type", "T", "--name", "a1", "--force"]
        let trace = s.sandbox.run(save + ["n=2"], env: ["CK_DEBUG_TRACE_OPS": "1"])
        let ops = trace.stderr.split(separator: "\n").filter { $0.hasPrefix("op ") }
        let zoneWords = try XCTUnwrap(ops.firstIndex { $0.hasSuffix("/zones/A/history.idx") && $0.contains(" write ") }, trace.stderr)
        let databaseWords = try XCTUnwrap(ops[(zoneWords + 1)...].firstIndex { $0.hasSuffix("/history.idx") && !$0.contains("/zones/") }, trace.stderr)
        // The server has read the feed, and keeps its head once the index is past the racy window.
        let before = try XCTUnwrap(try s.post("private", "changes/database", "{}")["syncToken"] as? String)
        Thread.sleep(forTimeInterval: 0.1)
        XCTAssertEqual((try s.post("private", "changes/database", #"{"syncToken":"\#(before)"}"#)["zones"] as? [Any])?.count, 0)
        let crashed = s.sandbox.run(save + ["n=3"], env: ["CK_DEBUG_CRASH_AT_OP": String(databaseWords + 1)])
        XCTAssertEqual(crashed.status, 137, crashed.stderr)
        let after = try s.post("private", "changes/database", #"{"syncToken":"\#(before)"}"#)
        let zones = (after["zones"] as? [[String: Any]] ?? []).compactMap { ($0["zoneID"] as? [String: Any])?["zoneName"] as? String }
        XCTAssertEqual(zones, ["A"], "the zone commit the crashed writer made is announced: \(after.text)")
        // What the crash left besides (the commit's record files) is the next writer's or fsck's.
        let fix = s.sandbox.ck("fsck")
        XCTAssertEqual(fix.status, 0, fix.stdout)
        XCTAssertFalse(fix.stdout.contains("database history"), "the entry was recorded by the server's read: \(fix.stdout)")
        XCTAssertEqual(s.sandbox.ck("fsck", "--dry-run").object["clean"] as? Bool, true)
    }
}
