import CKCore
import CKHTTP
import CKJSON
import CKModel
import CKTestSupport
import Foundation
import XCTest
@testable import CKServe

/// A request is resolved once and its answer encoded once: what `admit` resolved from the head
/// (the route, the credentials it checked) travels to `respond` with the request, and an API
/// that serves HTTP encodes error dictionaries as the wire has them, with nothing stripped after.
final class ResolveOnceEncodeOnceTests: XCTestCase {
    static let container = ServeFixture.container

    /// A handler over a fresh data directory with an API token, called directly (no sockets).
    private func handler() throws -> (api: CloudKitAPI, handler: WebServicesHandler, token: String, root: String) {
        let root = NSTemporaryDirectory() + "ck-once-" + UUID().uuidString
        addTeardownBlock { try? FileManager.default.removeItem(atPath: root) }
        let api = CloudKitAPI(dataDirectory: root, serverURL: "http://127.0.0.1:1")
        _ = try api.signIn(SignInRequest(appleID: "alice@example.com"), as: Caller(container: Self.container))
        let token = try XCTUnwrapString(api.createAPIToken(name: "t", container: Self.container, environment: .development).document["apiToken"])
        return (api, WebServicesHandler(api: api, allowedOrigins: [], hostNames: ["127.0.0.1"], log: { _ in }), token, root)
    }

    private func head(_ method: String, _ target: String, body: [UInt8] = []) -> HTTPRequestHead {
        var h = HTTPHeaders([("Host", "127.0.0.1")])
        if !body.isEmpty { h.add("Content-Length", String(body.count)) }
        return HTTPRequestHead(method: method, target: target, headers: h)
    }

    private func context(_ admission: HTTPAdmission, file: StaticString = #filePath, line: UInt = #line) -> (any Sendable)? {
        guard case .readBody(_, let context) = admission else { XCTFail("not admitted with a body to read: \(admission)", file: file, line: line); return nil }
        return context
    }

    /// `respond` answers the route `admit` parsed: a request whose path changed in between
    /// still gets the answer of the admitted one. Were the path parsed again, it would be 404.
    func testRespondAnswersTheRouteAdmitResolved() throws {
        let (_, h, token, _) = try handler()
        let admitted = head("GET", "/database/1/\(Self.container)/development/public/zones/list?ckAPIToken=\(token)")
        let context = context(h.admit(admitted))
        var moved = admitted
        moved.target = "/nowhere?ckAPIToken=\(token)"
        let answer = h.respond(to: HTTPRequest(head: moved, body: [], context: context))
        XCTAssertEqual(answer.status, 200, String(decoding: answer.body, as: UTF8.self))
        XCTAssertTrue(String(decoding: answer.body, as: UTF8.self).contains("_defaultZone"))
        // The engine calls respond only with what admit gave it; without it, nothing is resolved twice.
        XCTAssertEqual(h.respond(to: HTTPRequest(head: admitted, body: [])).status, 500)
    }

    /// The API token checked before the body is not checked again after it: revoked while the
    /// body is on its way, it still carries the request it was checked for (were it checked
    /// again, 401), and the next request with it is refused before its body.
    func testCredentialsCheckedBeforeTheBodyAreNotCheckedAgain() throws {
        let (api, h, token, _) = try handler()
        let body = Array(#"{"zones":[{"zoneName":"_defaultZone"}]}"#.utf8)
        let lookup = head("POST", "/database/1/\(Self.container)/development/public/zones/lookup?ckAPIToken=\(token)", body: body)
        let context = context(h.admit(lookup))
        _ = try api.deleteAPIToken(token, container: Self.container, environment: .development)
        let answer = h.respond(to: HTTPRequest(head: lookup, body: body, context: context))
        XCTAssertEqual(answer.status, 200, String(decoding: answer.body, as: UTF8.self))
        guard case .answer(let refused) = h.admit(lookup) else { return XCTFail("a revoked token is admitted") }
        XCTAssertEqual(refused.status, 401)
    }

    /// The same failures, answered by the API that serves HTTP and by the command line's: one
    /// encoding each, the wire's without `ckErrorCode` (CloudKit JS would take it over the
    /// server's code), the command line's with it, and otherwise the same.
    func testTheWireAndTheCommandLineGetErrorDictionariesEachInTheirShape() throws {
        let (wire, _, _, root) = try handler()
        let cli = CloudKitAPI(dataDirectory: root)
        let caller = Caller(container: Self.container)
        func bodies(_ answer: (CloudKitAPI) throws -> any ResponseBody) throws -> (wire: JSONValue, cli: JSONValue) {
            func encoded(_ api: CloudKitAPI) throws -> JSONValue {
                var out: [UInt8] = []
                try answer(api).encodeJSON(into: &out, pretty: false)
                return try JSONParser.parse(out)
            }
            return (try encoded(wire), try encoded(cli))
        }
        let zones = try bodies { try $0.lookupZones(ZonesLookupRequest(zoneNames: ["Nowhere"]), as: caller) }
        let records = try bodies { try $0.lookupRecords(LookupRecordsRequest(recordNames: ["nothing"]), as: caller) }
        for (name, b) in [("zones/lookup", zones), ("records/lookup", records)] {
            let list = name == "zones/lookup" ? "zones" : "records"
            let w = try XCTUnwrap(b.wire.objectValue?[list]?.arrayValue?.first?.objectValue, name)
            var c = try XCTUnwrap(b.cli.objectValue?[list]?.arrayValue?.first?.objectValue, name)
            XCTAssertNotNil(w["serverErrorCode"], name)
            XCTAssertNil(w["ckErrorCode"], name)
            XCTAssertEqual(c["ckErrorCode"], .int(name == "zones/lookup" ? 26 : 11), name)
            c["ckErrorCode"] = nil
            c["uuid"] = w["uuid"]
            XCTAssertEqual(c, w, name)
        }
        // A request-level error on the wire: the envelope without it too.
        XCTAssertNil(CloudKitError(.conflict, "x").envelope(for: .wire).objectValue?["ckErrorCode"])
        XCTAssertEqual(CloudKitError(.conflict, "x").envelope().objectValue?["ckErrorCode"], .int(14))
    }
}
