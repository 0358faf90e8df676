import CKCore
import CKJSON
import CKModel
import CKTestSupport
import CKHTTP
import Foundation
import XCTest
@testable import CKServe

/// The console API past its gate: each call answers what its ck command answers, and bad
/// bodies are BAD_REQUEST naming the problem with nothing changed.
final class ConsoleAPITests: XCTestCase {
    var f: ServeFixture!
    var headers: [(String, String)] = []
    let container = ServeFixture.container

    override func setUpWithError() throws {
        f = try ServeFixture()
        let token = String(try XCTUnwrap(f.server.consoleURL).split(separator: "=").last!)
        headers = [("X-CK-Console", token)]
        let caller = Caller(container: container)
        _ = try f.api.modifyZones(ZonesModifyRequest(json: ["operations": [["operationType": "create", "zone": ["zoneID": ["zoneName": "Lists"]]]]]), as: caller)
        for (name, title) in [("a", "one"), ("b", "two")] {
            _ = try f.api.modifyRecords(try ModifyRequest.parse(["zoneID": ["zoneName": "Lists"], "operations": [["operationType": "create", "record": ["recordName": .string(name), "recordType": "T", "fields": ["title": ["value": .string(title)]]]]]]), as: caller)
        }
        _ = try f.api.createTag(CreateTagRequest(name: "v1"), as: caller)
        _ = try f.api.modifyRecords(try ModifyRequest.parse(["zoneID": ["zoneName": "Lists"], "operations": [["operationType": "forceUpdate", "record": ["recordName": "a", "recordType": "T", "fields": ["title": ["value": "ONE"]]]]]]), as: caller)
    }

    func post(_ path: String, _ json: String) throws -> HTTPTestClient.Answer {
        try f.client().request("POST", path, json: json, headers: headers)
    }

    func history(_ call: String, _ extra: String) throws -> HTTPTestClient.Answer {
        try post("/console/api/history/" + call, #"{"container":"\#(container)","environment":"development","database":"private","zoneName":"Lists"\#(extra)}"#)
    }

    func testHistoryCallsAnswerAsTheirCommands() throws {
        let log = try history("log", #","limit":2"#)
        XCTAssertEqual(log.status, 200, log.text)
        let changes = try XCTUnwrap((log.json as? [String: Any])?["changes"] as? [[String: Any]])
        XCTAssertEqual(changes.map { $0["seq"] as? Int }, [3, 2])
        XCTAssertEqual((changes.first?["fields"] as? [String: Any])?.keys.sorted(), ["title"], "a change says what it set")
        let older = try history("log", #","until":"Lists@2""#)
        XCTAssertEqual(((older.json as? [String: Any])?["changes"] as? [[String: Any]])?.map { $0["seq"] as? Int }, [2, 1])

        let show = try history("show", #","ref":"Lists@3""#)
        let title = ((show.json as? [String: Any])?["fields"] as? [String: Any])?["title"] as? [String: Any]
        XCTAssertEqual((title?["old"] as? [String: Any])?["value"] as? String, "one")
        XCTAssertEqual((title?["new"] as? [String: Any])?["value"] as? String, "ONE")

        let diff = try history("diff", #","from":"v1""#)
        let diffed = (diff.json as? [String: Any])?["changes"] as? [[String: Any]]
        XCTAssertEqual(diffed?.map { $0["recordName"] as? String }, ["a"], diff.text)

        let blame = try history("blame", #","recordName":"a","at":"v1""#)
        let fields = (blame.json as? [String: Any])?["fields"] as? [[String: Any]]
        XCTAssertEqual(fields?.first?["value"] as? String, "one")
        XCTAssertEqual(fields?.first?["seq"] as? Int, 1)

        let tags = try history("tags", "")
        XCTAssertEqual(((tags.json as? [String: Any])?["tags"] as? [[String: Any]])?.first?["name"] as? String, "v1")
    }

    func testRestoreAndRevertPreviewThenWrite() throws {
        let before = try snapshot()
        let preview = try history("revert", #","ref":"Lists@3","dryRun":true"#)
        XCTAssertEqual(preview.status, 200, preview.text)
        XCTAssertTrue(preview.text.contains(#""recordName":"a""#), preview.text)
        let restorePreview = try history("restore", #","ref":"v1","dryRun":true"#)
        XCTAssertTrue(restorePreview.text.contains(#""recordName":"a""#), restorePreview.text)
        XCTAssertEqual(try snapshot(), before, "previews write nothing")
        let plan = try XCTUnwrap(restorePreview.json as? [String: Any])
        XCTAssertEqual(plan["ref"] as? String, "Lists@2", "the tag, resolved")
        let head = try XCTUnwrap(plan["head"] as? Int)
        // Without the preview's head, no write; with it, none once the zone moved on.
        let unconfirmed = try history("revert", #","ref":"Lists@3","dryRun":false"#)
        XCTAssertEqual(unconfirmed.status, 400, unconfirmed.text)
        XCTAssertTrue(unconfirmed.text.contains("ifHead"), unconfirmed.text)
        XCTAssertEqual(try history("revert", #","ref":"Lists@3""#).status, 400, "dryRun is said")
        XCTAssertEqual(try snapshot(), before)
        let moved = try post("/console/ws/database/1/\(container)/development/private/records/modify",
                             #"{"zoneID":{"zoneName":"Lists"},"operations":[{"operationType":"create","record":{"recordName":"c","recordType":"T","fields":{"v":{"value":"new"}}}}]}"#)
        XCTAssertEqual(moved.status, 200, moved.text)
        XCTAssertFalse(moved.text.contains("serverErrorCode"), moved.text)
        let afterMove = try snapshot()
        let stale = try history("restore", #","ref":"Lists@2","dryRun":false,"ifHead":\#(head)"#)
        XCTAssertEqual(stale.status, 409, stale.text)
        XCTAssertEqual((stale.json as? [String: Any])?["serverErrorCode"] as? String, "CONFLICT")
        XCTAssertTrue(stale.text.contains("preview again"), stale.text)
        XCTAssertEqual(try snapshot(), afterMove, "a stale confirmation writes nothing")
        let fresh = try XCTUnwrap(try history("revert", #","ref":"Lists@3","dryRun":true"#).json as? [String: Any])
        let done = try history("revert", #","ref":"\#(fresh["ref"] as! String)","dryRun":false,"ifHead":\#(fresh["head"] as! Int)"#)
        XCTAssertEqual(done.status, 200, done.text)
        let now = try f.client().request("POST", "/console/ws/database/1/\(container)/development/private/records/lookup", json: #"{"zoneID":{"zoneName":"Lists"},"records":[{"recordName":"a"}]}"#, headers: headers)
        XCTAssertTrue(now.text.contains(#""value":"one""#), now.text)
        XCTAssertTrue(now.text.contains(#""deviceID":"console""#), now.text)
    }

    func testRecordsReadAtAPointOfHistory() throws {
        let base = "/console/ws/database/1/\(container)/development/private/"
        let lookup = try post(base + "records/lookup?at=v1", #"{"zoneID":{"zoneName":"Lists"},"records":[{"recordName":"a"}]}"#)
        XCTAssertTrue(lookup.text.contains(#""value":"one""#), lookup.text)
        let now = try post(base + "records/lookup", #"{"zoneID":{"zoneName":"Lists"},"records":[{"recordName":"a"}]}"#)
        XCTAssertTrue(now.text.contains(#""value":"ONE""#), now.text)
        // Only reads have a past.
        let write = try post(base + "records/modify?at=v1", #"{"zoneID":{"zoneName":"Lists"},"operations":[{"operationType":"forceDelete","record":{"recordName":"a"}}]}"#)
        XCTAssertEqual(write.status, 400, write.text)
        XCTAssertTrue(now.text.contains("ONE"))
        XCTAssertEqual(try post(base + "records/lookup?at=nosuchtag", #"{"zoneID":{"zoneName":"Lists"},"records":[{"recordName":"a"}]}"#).status, 404)
    }

    func testTheTablesFilterTextGoesInTheQueryString() throws {
        let base = "/console/ws/database/1/\(container)/development/private/"
        _ = try post("/console/api/schema/index", #"{"container":"\#(container)","recordType":"T","fieldName":"title","index":"QUERYABLE"}"#)
        let body = #"{"zoneID":{"zoneName":"Lists"},"query":{"recordType":"T"}}"#
        // encodeURIComponent's spaces (%20); a '+' would be a plus, as in CloudKit JS's queries.
        let one = try post(base + "records/query?filter=title%20BEGINS_WITH%20tw", body)
        XCTAssertEqual(one.status, 200, one.text)
        XCTAssertTrue(one.text.contains(#""recordName":"b""#) && !one.text.contains(#""recordName":"a""#), one.text)
        let atV1 = try post(base + "records/query?at=v1&filter=title%20%3D%3D%20one&tz=Europe%2FParis", body)
        XCTAssertTrue(atV1.text.contains(#""recordName":"a""#), atV1.text)
        for (path, says) in [("records/query?filter=title+BEGINS_WITH+tw", "comparator"), ("records/lookup?filter=title%20%3D%3D%20one", "filter=")] {
            let r = try post(base + path, path.hasPrefix("records/lookup") ? #"{"zoneID":{"zoneName":"Lists"},"records":[{"recordName":"a"}]}"# : body)
            XCTAssertEqual(r.status, 400, path)
            XCTAssertTrue(r.text.contains(says), "\(path): \(r.text)")
        }
    }

    func testBadBodiesAreRefusedNamingTheProblemAndChangeNothing() throws {
        let before = try snapshot()
        let cases: [(String, String, String)] = [
            ("/console/api/history/log", "not json", "JSON object"),
            ("/console/api/history/log", "[1,2]", "JSON object"),
            ("/console/api/history/log", #"{"environment":"development","zoneName":"Lists"}"#, "container"),
            ("/console/api/history/log", #"{"container":"\#(container)","zoneName":"Lists","limit":"ten"}"#, "limit"),
            ("/console/api/history/log", #"{"container":"\#(container)","zoneName":"Lists","limit":100000}"#, "limit"),
            ("/console/api/history/log", #"{"container":"\#(container)","zoneName":7}"#, "zoneName"),
            ("/console/api/history/log", #"{"container":"\#(container)","zoneName":"Lists","database":"secret"}"#, "database"),
            ("/console/api/history/show", #"{"container":"\#(container)","zoneName":"Lists","ref":"Lists@999999999999999999999"}"#, "too large"),
            ("/console/api/history/show", #"{"container":"\#(container)","zoneName":"Lists"}"#, "ref"),
            ("/console/api/history/nothing", #"{"container":"\#(container)","zoneName":"Lists"}"#, "log, show"),
            ("/console/api/schema/index", #"{"container":"\#(container)","recordType":"T","fieldName":"title","index":"FAST"}"#, "QUERYABLE"),
            ("/console/api/history/log", #"{"container":"../../etc","zoneName":"Lists"}"#, "container"),
            // A preview asked for with the wrong type writes nothing.
            ("/console/api/history/revert", #"{"container":"\#(container)","zoneName":"Lists","ref":"Lists@3","dryRun":"yes"}"#, "dryRun"),
            ("/console/api/history/restore", #"{"container":"\#(container)","zoneName":"Lists","ref":"v1","dryRun":1}"#, "dryRun"),
            ("/console/api/history/restore", #"{"container":"\#(container)","zoneName":"Lists","ref":"v1","recordNames":"a","dryRun":true}"#, "recordNames"),
            ("/console/api/schema/deploy", #"{"container":"\#(container)","dryRun":"true"}"#, "dryRun"),
            // A write must be asked for: a body without dryRun is neither.
            ("/console/api/schema/deploy", #"{"container":"\#(container)"}"#, "dryRun"),
            ("/console/api/schema/deploy", #"{"container":"\#(container)","dryRun":false}"#, "ifDevelopment"),
            ("/console/api/schema/deploy", #"{"container":"\#(container)","dryRun":false,"ifDevelopment":7}"#, "ifDevelopment"),
            ("/console/api/history/restore", #"{"container":"\#(container)","zoneName":"Lists","ref":"v1"}"#, "dryRun"),
            ("/console/api/schema/index", #"{"container":"\#(container)","environment":7,"recordType":"T","fieldName":"title","index":"SORTABLE"}"#, "environment"),
            ("/console/api/schema/index", #"{"container":"\#(container)","recordType":"T","index":"SORTABLE"}"#, "fieldName"),
            ("/console/api/schema/index", #"{"container":["\#(container)"],"recordType":"T","fieldName":"title","index":"SORTABLE"}"#, "container"),
            ("/console/api/faults/clear", "{}", "all"),
            ("/console/api/faults/clear", #"{"id":"x","all":true}"#, "all"),
        ]
        for (path, body, names) in cases {
            let r = try post(path, body)
            XCTAssertTrue((400...404).contains(r.status), "\(path) \(body): \(r.status) \(r.text)")
            XCTAssertTrue(r.text.contains(names), "\(path) \(body): \(r.text)")
        }
        XCTAssertEqual(try f.client().request("GET", "/console/api/history/log", headers: headers).status, 400, "history calls are POSTs")
        XCTAssertEqual(try snapshot(), before)
    }

    func testFaultsAreClearedOneByIDOrAllByName() throws {
        for _ in 0..<2 {
            let armed = try post("/console/api/faults", #"{"op":"records/modify","error":"THROTTLED","retryAfter":3}"#)
            XCTAssertEqual(armed.status, 200, armed.text)
        }
        func count() throws -> Int { ((try f.client().request("GET", "/console/api/faults", headers: headers).json as? [String: Any])?["faults"] as? [Any])?.count ?? -1 }
        XCTAssertEqual(try count(), 2)
        XCTAssertEqual(try post("/console/api/faults/clear", "{}").status, 400)
        XCTAssertEqual(try count(), 2, "a body without an id clears nothing")
        XCTAssertEqual(try post("/console/api/faults/clear", #"{"all":true}"#).status, 200)
        XCTAssertEqual(try count(), 0)
    }

    func testTheRequestLogShowsAppsRequestsWithoutTheirSecrets() throws {
        _ = try f.post("private", "zones/list", "{}")
        _ = try f.client().request("POST", "/device/1/\(container)/development/tokens/create?ckAPIToken=\(f.apiToken)&ckWebAuthToken=\(f.session)",
                                   json: #"{"apnsEnvironment":"development"}"#)
        _ = try f.client().request("GET", "/console/api/overview", headers: headers)
        let list = try f.client().request("GET", "/console/api/requests", headers: headers)
        let entries = try XCTUnwrap((list.json as? [String: Any])?["requests"] as? [[String: Any]])
        XCTAssertEqual(entries.compactMap { $0["path"] as? String }.map { $0.hasSuffix("tokens/create") || $0.hasSuffix("zones/list") }, [true, true],
                       "the apps' requests, newest first; the console's own API is not logged: \(entries)")
        XCTAssertEqual(entries.last?["caller"] as? String, "API token, web session")
        XCTAssertFalse(list.text.contains(f.apiToken) || list.text.contains(f.session), list.text)
        let id = try XCTUnwrap(entries.first?["id"] as? Int)
        let one = try f.client().request("GET", "/console/api/requests/\(id)", headers: headers)
        let response = try XCTUnwrap((one.json as? [String: Any])?["responseBody"] as? String)
        XCTAssertTrue(response.contains(#""apnsToken":"…""#), response)
        XCTAssertFalse(one.text.contains(f.apiToken) || one.text.contains(f.session), one.text)
        let after = try f.client().request("GET", "/console/api/requests?after=\(id)", headers: headers)
        XCTAssertEqual(((after.json as? [String: Any])?["requests"] as? [Any])?.count, 0)
        XCTAssertEqual(try f.client().request("GET", "/console/api/requests/999999", headers: headers).status, 404)
    }

    func testTheRequestLogKeepsTheNewestAndCutsBodies() {
        let log = RequestLog(capacity: 3, bodyLimit: 10)
        let head = HTTPRequestHead(method: "POST", target: "/database/1/c/development/private/records/modify", headers: HTTPHeaders())
        for n in 1...7 {
            log.add(head, path: head.path, caller: "API token", request: Array("{\"n\":\(n),\"ckWebAuthToken\":\"secret\"}".utf8),
                    response: HTTPResponse(status: 200, body: Array(String(repeating: "x", count: 40).utf8)), milliseconds: 1, binaryBodies: false)
            XCTAssertEqual(log.list(after: 0).map(\.id), Array((max(1, n - 2)...n).reversed()), "the newest three, newest first")
        }
        XCTAssertEqual(log.list(after: 5).map(\.id), [7, 6])
        XCTAssertEqual(log.list(after: 0, limit: 2).map(\.id), [7, 6])
        XCTAssertNil(log.entry(4))
        XCTAssertEqual(log.entry(5)?.requestBody, #"{"ckWebAuthToken":"…","n":5}"#.prefix(10) + "… (33 bytes in all)")
        XCTAssertTrue(log.entry(5)?.responseBody.hasPrefix("xxxxxxxxxx…") == true)
        XCTAssertNil(log.entry(1))
        // Capability URLs are secrets too: an upload's url, an asset's downloadURL.
        let masked = RequestLog.shown(Array(#"{"tokens":[{"url":"http://127.0.0.1:1/upload/SECRET","recordName":"r"}],"a":{"downloadURL":"http://x/assets/ab/SECRET"}}"#.utf8), limit: 1000)
        XCTAssertFalse(masked.contains("SECRET"), masked)
        XCTAssertTrue(masked.contains(#""recordName":"r""#), masked)
    }

    func testTheRequestLogShowsABodyWhenItIsOpenedNotWhenItIsLogged() {
        let log = RequestLog(capacity: 3, bodyLimit: 100)
        let head = HTTPRequestHead(method: "POST", target: "/database/1/c/development/private/records/lookup", headers: HTTPHeaders())
        let small = Array(#"{"ckWebAuthToken":"secret","records":[{"recordName":"r"}]}"#.utf8)
        let large = Array(("{\"apiToken\":\"secret\",\"pad\":\"" + String(repeating: "x", count: 200) + "\"}").utf8)
        log.add(head, path: head.path, caller: "API token", request: small, response: HTTPResponse(status: 200, body: large), milliseconds: 1, binaryBodies: false)
        let e = log.entry(1)!
        // The answer went out without its bodies being parsed: the small one is kept as it came,
        // the large one shown (and cut) at once, so memory stays bounded by bodyLimit.
        guard case .bytes(let kept) = e.request else { return XCTFail("a small body is kept as it came: \(e.request)") }
        XCTAssertEqual(kept, small)
        guard case .shown(let text) = e.response else { return XCTFail("a long body is shown when logged: \(e.response)") }
        XCTAssertFalse(text.contains("secret"), text)
        // Opened, the small body is shown as ever: masked, compact.
        XCTAssertEqual(e.requestBody, #"{"ckWebAuthToken":"…","records":[{"recordName":"r"}]}"#)
        XCTAssertFalse(e.responseBody.contains("secret"), e.responseBody)
    }

    /// Every file of the data directory with its bytes.
    func snapshot() throws -> [String: Data] {
        // The fixture's API is a server's: its commits publish their files after the answer.
        f.api.finishPublishing()
        var out: [String: Data] = [:]
        let e = FileManager.default.enumerator(atPath: f.root)!
        while let rel = e.nextObject() as? String {
            var dir: ObjCBool = false
            let path = f.root + "/" + rel
            if FileManager.default.fileExists(atPath: path, isDirectory: &dir), !dir.boolValue { out[rel] = FileManager.default.contents(atPath: path) }
        }
        return out
    }
}
