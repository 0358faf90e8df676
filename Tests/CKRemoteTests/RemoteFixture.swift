import CKCore
import CKHTTP
import CKJSON
import CKModel
import Foundation
import XCTest
@testable import CKRemote
@testable import CKServe

/// Two data directories: `server`'s, served by a `ck serve` in-process on a free port, with
/// alice signed in, an API token and a web session of hers; and `local`'s, a clone's, with the
/// server as remote `origin`. Everything the tests compare goes through the two APIs.
final class RemoteFixture {
    static let container = "iCloud.com.example.remote"
    let serverRoot: String
    let localRoot: String
    let server: WebServicesServer
    let serverAPI: CloudKitAPI
    let localAPI: CloudKitAPI
    let url: RemoteURL
    let apiToken: String
    var session: String
    var notices: [String] = []
    /// The server's clock runs this many milliseconds ahead of the system's (`advance`).
    final class Offset: @unchecked Sendable { var ms: Int64 = 0 }
    let offset = Offset()
    func advance(seconds: Int64) { offset.ms += seconds * 1000 }

    init(rotation: WebTokenRotation = .live) throws {
        let base = NSTemporaryDirectory() + "ck-remote-" + UUID().uuidString
        serverRoot = base + "/server"
        localRoot = base + "/local"
        let o = offset
        let clock = Clock { Clock.system.now() + o.ms }
        let setup = CloudKitAPI(dataDirectory: serverRoot, clock: clock)
        _ = try setup.signIn(SignInRequest(appleID: "alice@example.com", givenName: "Alice"), as: Caller(container: Self.container))
        server = WebServicesServer(dataDirectory: serverRoot, port: 0, allowedOrigins: [], pollSeconds: 1, clock: clock, webTokenRotation: rotation) { _ in }
        let u = try server.start()
        serverAPI = CloudKitAPI(dataDirectory: serverRoot, clock: clock, serverURL: u)
        apiToken = try serverAPI.createAPIToken(name: "tests", container: Self.container, environment: .development).document["apiToken"]!.stringValue!
        session = try serverAPI.createWebAuthToken(as: Caller(container: Self.container), keepSignedIn: true).document["ckWebAuthToken"]!.stringValue!
        url = try RemoteURL(u + "/database/1/\(Self.container)/development")
        localAPI = CloudKitAPI(dataDirectory: localRoot)
        _ = try localAPI.signIn(SignInRequest(appleID: "alice@example.com"), as: Caller(container: Self.container))
        try localAPI.addRemote("origin", url: url)
    }

    deinit {
        server.stop(grace: 1)
        try? FileManager.default.removeItem(atPath: (serverRoot as NSString).deletingLastPathComponent)
    }

    func serverCaller(_ scope: DatabaseScope = .private) -> Caller { Caller(container: Self.container, scope: scope) }
    func localCaller(_ scope: DatabaseScope = .private) -> Caller { Caller(container: Self.container, scope: scope) }

    var remote: RemoteEntry { try! localAPI.remote(named: "origin") }

    func client(_ credentials: Credentials? = nil, pacing: PacingPolicy = PacingPolicy(rate: nil, maxWait: 30, retries: 2)) throws -> WebServicesClient {
        WebServicesClient(remote: remote, credentials: credentials ?? Credentials(apiToken: apiToken, webAuthToken: session), store: nil,
                          http: try RemoteConnection.httpClient(url, env: [:]), pacer: Pacer(pacing), notice: { [weak self] in self?.notices.append($0) })
    }

    func fetch(_ client: WebServicesClient, _ scope: DatabaseScope = .private, types: [String] = []) -> RemoteFetch {
        var f = RemoteFetch(api: localAPI, client: client, caller: localCaller(scope))
        f.types = types
        return f
    }

    @discardableResult
    func pull(_ scope: DatabaseScope = .private, strategy: MergeStrategy = .none, types: [String] = [], client c: WebServicesClient? = nil) throws -> PullReport {
        let client = try c ?? self.client()
        defer { if c == nil { client.close() } }
        var p = RemotePull(fetch: fetch(client, scope, types: types))
        p.strategy = strategy
        return try p.run()
    }

    @discardableResult
    func push(_ scope: DatabaseScope = .private, force: Bool = false) throws -> PushReport {
        let client = try self.client()
        defer { client.close() }
        var p = RemotePush(api: localAPI, client: client, caller: localCaller(scope))
        p.force = force
        return try p.run(localZones: try localAPI.zoneNames(as: localCaller(scope)))
    }

    // MARK: data

    func save(_ api: CloudKitAPI, _ caller: Caller, zone: String, _ records: [(String, [String: JSONValue])], type: String = "Item") throws {
        var start = 0
        while start < records.count {
            let chunk = records[start..<min(start + 200, records.count)]
            start += chunk.count
            let ops: [JSONValue] = chunk.map { name, fields in
                .object(["operationType": "forceReplace", "record": .object(["recordName": .string(name), "recordType": .string(type), "fields": .object(fields.mapValues { .object(["value": $0]) })])])
            }
            var r = try ModifyRequest.parse(.object(["operations": .array(ops), "atomic": false]))
            r.zoneName = zone
            let out = try api.modifyRecords(r, as: caller)
            for case .failed(let e) in out.results { throw e }
        }
    }

    func delete(_ api: CloudKitAPI, _ caller: Caller, zone: String, _ names: [String]) throws {
        _ = try api.deleteRecords(DeleteRecordsRequest(recordNames: names, zoneName: zone), as: caller)
    }

    func createZone(_ api: CloudKitAPI, _ caller: Caller, _ name: String) throws {
        _ = try api.modifyZones(ZonesModifyRequest(operations: [.init(.create, name)], ifExists: true), as: caller)
    }

    /// Each record of a zone as data (type, fields with asset URLs left out), by name.
    func contents(_ api: CloudKitAPI, _ caller: Caller, zone: String) throws -> [String: JSONValue] {
        var out: [String: JSONValue] = [:]
        try api.listRecords(ListRecordsRequest(zoneName: zone), as: caller) { batch in
            for r in batch.records {
                var fields: [String: JSONValue] = [:]
                // An asset is its bytes (URLs differ); a reference its target and action (its
                // zoneID names each side's own user).
                func data(_ v: JSONValue) -> JSONValue {
                    if let a = v.arrayValue { return .array(a.map(data)) }
                    guard var o = v.objectValue else { return v }
                    if o["fileChecksum"] != nil { o = o.filter { ["fileChecksum", "size"].contains($0.key) } }
                    if o["recordName"] != nil { o["zoneID"] = nil }
                    return .object(o)
                }
                for (k, f) in r.fields { fields[k] = data(f.value) }
                out[r.recordName] = .object(["recordType": .string(r.recordType), "fields": .object(fields)])
            }
            return true
        }
        return out
    }

    func assertSame(zone: String, _ scope: DatabaseScope = .private, file: StaticString = #filePath, line: UInt = #line) throws {
        let a = try contents(serverAPI, serverCaller(scope), zone: zone)
        let b = try contents(localAPI, localCaller(scope), zone: zone)
        XCTAssertEqual(a.count, b.count, "records in zone \(zone)", file: file, line: line)
        XCTAssertEqual(a, b, "zone \(zone)", file: file, line: line)
    }
}
