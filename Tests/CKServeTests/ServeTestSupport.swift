import CKCore
import CKJSON
import CKModel
import CKTestSupport
import Foundation
@testable import CKServe

/// A `ck serve` in-process on a free port over a fresh data directory, with alice signed in on
/// the device, an API token and a web session of hers.
final class ServeFixture {
    static let container = "iCloud.com.example.serve"
    let root: String
    let server: WebServicesServer
    let url: String
    let port: UInt16
    let api: CloudKitAPI
    let apiToken: String
    let session: String
    final class Lines: @unchecked Sendable {
        private let lock = NSLock()
        private var all: [String] = []
        func add(_ s: String) { lock.lock(); all.append(s); lock.unlock() }
        var lines: [String] { lock.lock(); defer { lock.unlock() }; return all }
    }
    let log = Lines()

    init(pollSeconds: Double = 2, clock: Clock = .system, container: String = ServeFixture.container, allowedOrigins: [String] = [],
         webTokenRotation: WebTokenRotation = .live, host: String = "127.0.0.1") throws {
        root = NSTemporaryDirectory() + "ck-serve-" + UUID().uuidString
        let setup = CloudKitAPI(dataDirectory: root)
        _ = try setup.signIn(SignInRequest(appleID: "alice@example.com", givenName: "Alice"), as: Caller(container: Self.container))
        let lines = log
        server = WebServicesServer(dataDirectory: root, host: host, port: 0, allowedOrigins: allowedOrigins, pollSeconds: pollSeconds, clock: clock,
                                   webTokenRotation: webTokenRotation) { lines.add($0) }
        url = try server.start()
        port = UInt16(url.split(separator: ":").last!)!
        api = CloudKitAPI(dataDirectory: root, clock: clock, serverURL: url)
        apiToken = try XCTUnwrapString(api.createAPIToken(name: "tests", container: container, environment: .development).document["apiToken"])
        session = try XCTUnwrapString(api.createWebAuthToken(as: Caller(container: Self.container), keepSignedIn: false).document["ckWebAuthToken"])
    }

    deinit {
        server.stop(grace: 1)
        try? FileManager.default.removeItem(atPath: root)
    }

    func client() throws -> HTTPTestClient { try HTTPTestClient(port: port) }

    /// `/database/1/<container>/development/<db>/<endpoint>?…` with the API token, and the
    /// session unless `signedIn` is false.
    func path(_ db: String, _ endpoint: String, signedIn: Bool = true, token: String? = nil) -> String {
        var q = "ckjsBuildVersion=2420ProjectDev22&ckjsVersion=2.6.4&clientId=test-client"
        if signedIn { q += "&ckWebAuthToken=" + (session.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? session) }
        q += "&ckAPIToken=" + (token ?? apiToken)
        return "/database/1/\(Self.container)/development/\(db)/\(endpoint)?" + q
    }

    func post(_ db: String, _ endpoint: String, _ json: String, signedIn: Bool = true) throws -> HTTPTestClient.Answer {
        try client().request("POST", path(db, endpoint, signedIn: signedIn), json: json)
    }

    func get(_ db: String, _ endpoint: String, signedIn: Bool = true) throws -> HTTPTestClient.Answer {
        try client().request("GET", path(db, endpoint, signedIn: signedIn))
    }

    /// The caller the session stands for, to compare answers with the API's own.
    var alice: Caller { Caller(container: Self.container, environment: .development, scope: .private, user: .device, deviceID: "web-test-client") }
}

struct MissingValue: Error {}

func XCTUnwrapString(_ v: JSONValue?) throws -> String {
    guard let s = v?.stringValue else { throw MissingValue() }
    return s
}
