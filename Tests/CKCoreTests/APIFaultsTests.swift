import CKJSON
import CKModel
import CKTestSupport
import XCTest
@testable import CKCore
@testable import CKStore

/// The fault entries of the API, in-process: arming, listing and clearing faults, every member
/// of a fault checked before anything is written, the operations a fault names (the
/// `Endpoint` list and `*`), user scopes by Apple ID or user record name, and the preflight
/// failing requests with them.
final class APIFaultsTests: XCTestCase {
    func json(_ b: some ResponseBody) -> String { JSONWriter.line(b.jsonValue) }

    func code(_ e: Error) -> ServerErrorCode? { (e as? CloudKitError)?.code }

    // MARK: add, list, clear

    func testAddListAndClear() throws {
        let t = TempStore()
        let a = api(t.root)
        let added = try a.addFault(AddFaultRequest(op: .endpoint(.recordsModify), error: .throttled, retryAfter: 2, times: 1))
        XCTAssertEqual(added.faults.map(\.id), ["f1"])
        XCTAssertEqual(json(added), #"{"faults":[{"envelope":{"ckErrorCode":7,"serverErrorCode":"THROTTLED"},"error":"THROTTLED","id":"f1","op":"records/modify","retryAfter":2,"times":1}]}"# + "\n")
        _ = try a.addFault(AddFaultRequest(op: .all, error: .zoneBusy, zone: "Lists", user: "bob@example.com", device: "phone"))
        _ = try a.addFault(AddFaultRequest(op: .deliver, error: nil, rate: 0.25, seed: 3))
        let listed = try a.faults()
        XCTAssertEqual(listed.faults.map(\.id), ["f1", "f2", "f3"])
        XCTAssertEqual(listed.faults.map(\.op.path), ["records/modify", "*", "notifications/deliver"])
        XCTAssertEqual(listed.items.last?.jsonValue["drops"], true)
        XCTAssertEqual(listed.items.last?.jsonValue["evaluations"], 0)

        let one = try a.clearFaults(ClearFaultsRequest(id: "f2"))
        XCTAssertEqual(json(one), #"{"faults":[{"deleted":true,"id":"f2"}]}"# + "\n")
        let before = t.snapshot()
        XCTAssertThrowsError(try a.clearFaults(ClearFaultsRequest(id: "f2"))) { XCTAssertEqual(self.code($0), .notFound) }
        XCTAssertEqual(t.snapshot(), before, "a refused clear changes nothing")
        // IDs are not reused until every fault is cleared.
        XCTAssertEqual(try a.addFault(AddFaultRequest(op: .endpoint(.zonesList), error: .internalError)).faults.map(\.id), ["f4"])
        XCTAssertEqual(try a.clearFaults(ClearFaultsRequest()).faults.map(\.id), ["f1", "f3", "f4"])
        XCTAssertEqual(try a.faults().faults.count, 0)
        XCTAssertEqual(json(try a.clearFaults(ClearFaultsRequest())), #"{"faults":[]}"# + "\n")
        XCTAssertEqual(try a.addFault(AddFaultRequest(op: .endpoint(.zonesList), error: .internalError)).faults.map(\.id), ["f1"])
    }

    /// `--op` names every client operation `Endpoint` lists, and `*`: nothing else, and no
    /// second spelling (`users/caller` is whoami's; `users/current` another endpoint).
    func testTheOperationsAreTheEndpointList() throws {
        XCTAssertEqual(FaultOperation.paths, Endpoint.allCases.map(\.path) + ["*"])
        for e in Endpoint.allCases { XCTAssertEqual(FaultOperation(path: e.path), .endpoint(e)) }
        XCTAssertNil(FaultOperation(path: "users/me"))
        XCTAssertNil(FaultOperation(path: "records"))
        XCTAssertEqual(AddFaultRequest.recordScopedOperations, "records/lookup and records/modify")

        let t = TempStore()
        let a = api(t.root)
        _ = try a.addFault(AddFaultRequest(op: .endpoint(.usersCurrent), error: .throttled))
        XCTAssertNoThrow(try a.preflight(.usersCaller, caller(.private, .device), need: .none), "users/current is not an alias of users/caller")
        XCTAssertThrowsError(try a.preflight(.usersCurrent, caller(.private, .device), need: .none)) { XCTAssertEqual(self.code($0), .throttled) }
        // `*` fails every endpoint but the delivery of notifications, which it never drops.
        _ = try a.clearFaults(ClearFaultsRequest())
        _ = try a.addFault(AddFaultRequest(op: .all, error: .accessDenied))
        for e in Endpoint.allCases where e != .notificationsDeliver {
            XCTAssertThrowsError(try a.preflight(e, caller(.private, .device), need: .none), e.path) { XCTAssertEqual(self.code($0), .accessDenied) }
        }
        XCTAssertNoThrow(try a.preflight(.notificationsDeliver, caller(.private, .device), need: .none))
        XCTAssertFalse(try FaultStore(root: t.root).dropsDelivery(user: "_u", device: "default", zone: nil))
    }

    // MARK: checked before anything is written

    func testAnInvalidFaultIsBadRequestAndArmsNothing() throws {
        let t = TempStore()
        let a = api(t.root)
        _ = try a.addFault(AddFaultRequest(op: .endpoint(.zonesList), error: .throttled))
        let long = String(repeating: "n", count: 300)
        let refused: [(AddFaultRequest, String)] = [
            (AddFaultRequest(op: .endpoint(.zonesList), error: nil), "a zones/list fault needs an error; valid codes: THROTTLED"),
            (AddFaultRequest(op: .all, error: nil), "a * fault needs an error"),
            (AddFaultRequest(op: .deliver, error: .throttled), "a notifications/deliver fault drops notifications; it takes no error (THROTTLED)"),
            (AddFaultRequest(op: .endpoint(.zonesList), error: .notFound, retryAfter: 3), "NOT_FOUND carries no retryAfter; the codes that do: THROTTLED, ZONE_BUSY, SERVICE_UNAVAILABLE, TRY_AGAIN_LATER"),
            (AddFaultRequest(op: .deliver, error: nil, retryAfter: 3), "a dropped notification carries no retryAfter"),
            (AddFaultRequest(op: .endpoint(.zonesList), error: .throttled, retryAfter: -1), "retryAfter must be a whole number of seconds, 0…86400, got -1"),
            (AddFaultRequest(op: .endpoint(.zonesList), error: .throttled, retryAfter: 86_401), "retryAfter must be"),
            (AddFaultRequest(op: .endpoint(.zonesList), error: .throttled, times: 0), "times must be from 1 to 1000000000, got 0"),
            (AddFaultRequest(op: .endpoint(.zonesList), error: .throttled, rate: 0), "rate must be a fraction above 0 and at most 1"),
            (AddFaultRequest(op: .endpoint(.zonesList), error: .throttled, rate: 1.01), "rate must be"),
            (AddFaultRequest(op: .endpoint(.zonesList), error: .throttled, rate: .nan), "rate must be"),
            (AddFaultRequest(op: .endpoint(.zonesList), error: .throttled, rate: .leastNonzeroMagnitude), "rate must be"),
            (AddFaultRequest(op: .endpoint(.zonesList), error: .throttled, times: 2, rate: 0.5), "times and rate exclude each other"),
            (AddFaultRequest(op: .endpoint(.zonesList), error: .throttled, seed: 3), "seed goes with rate"),
            (AddFaultRequest(op: .endpoint(.zonesList), error: .throttled, rate: 0.5, seed: -1), "seed must be a non-negative integer"),
            (AddFaultRequest(op: .endpoint(.zonesList), error: .throttled, record: "a"), "a record scope applies to records/lookup and records/modify (or *), not zones/list"),
            (AddFaultRequest(op: .endpoint(.recordsModify), error: .throttled, record: "a\u{1}b"), "invalid record name 'a\\u{1}b' contains a control character"),
            (AddFaultRequest(op: .endpoint(.recordsModify), error: .throttled, record: long), "the limit is 255 bytes"),
            (AddFaultRequest(op: .endpoint(.recordsModify), error: .throttled, record: ""), "record name must not be empty"),
            (AddFaultRequest(op: .endpoint(.recordsModify), error: .throttled, zone: "a/b"), "invalid zone name 'a/b' contains '/'"),
            (AddFaultRequest(op: .endpoint(.recordsModify), error: .throttled, user: "not@valid"), "'not@valid' is not a valid Apple ID"),
            (AddFaultRequest(op: .endpoint(.recordsModify), error: .throttled, user: "_x\u{7f}"), "invalid user record name '_x\\u{7f}' contains a control character"),
            (AddFaultRequest(op: .endpoint(.recordsModify), error: .throttled, device: "../d"), "invalid device name '../d' contains '/'"),
        ]
        let before = t.snapshot()
        for (request, words) in refused {
            XCTAssertThrowsError(try a.addFault(request), words) { e in
                XCTAssertEqual(self.code(e), .badRequest, words)
                let reason = (e as? CloudKitError)?.reason ?? ""
                XCTAssertTrue(reason.contains(words), "\(words): \(reason)")
                XCTAssertFalse(reason.contains("--") || reason.contains("ck "), "no command-line words in the API: \(reason)")
            }
        }
        XCTAssertEqual(t.snapshot(), before, "nothing armed, nothing written")
        XCTAssertEqual(try a.faults().faults.map(\.id), ["f1"])
        // The edges are accepted.
        XCTAssertNoThrow(try a.addFault(AddFaultRequest(op: .all, error: .throttled, retryAfter: 0, record: "a")))
        XCTAssertNoThrow(try a.addFault(AddFaultRequest(op: .endpoint(.zonesList), error: .zoneBusy, retryAfter: 86_400, rate: 1, seed: 0)))
        XCTAssertNoThrow(try a.addFault(AddFaultRequest(op: .endpoint(.recordsLookup), error: .notFound, times: 1_000_000_000, record: "a")))
    }

    /// A fault as JSON, as `ck serve` will take it: the members a fault is listed with.
    func testAFaultAsJSON() throws {
        func body(_ s: String) throws -> JSONValue { try JSONParser.parse(Array(s.utf8)) }
        let r = try AddFaultRequest(json: try body(#"{"op":"changes/zone","error":"request_rate_limited","retryAfter":1,"rate":0.5,"seed":7,"zone":"Lists","user":"a@example.com","device":"phone"}"#))
        XCTAssertEqual(r.op, .endpoint(.changesZone))
        XCTAssertEqual(r.error, .throttled)
        XCTAssertEqual(r.retryAfter, 1)
        XCTAssertEqual(r.rate, 0.5)
        XCTAssertEqual(r.seed, 7)
        XCTAssertEqual([r.zone, r.user, r.device], ["Lists", "a@example.com", "phone"])
        XCTAssertEqual(try AddFaultRequest(json: try body(#"{"op":"*","error":"THROTTLED","record":"r1","times":3}"#)).op, .all)
        XCTAssertNil(try AddFaultRequest(json: try body(#"{"op":"notifications/deliver","rate":1}"#)).error)
        let bad: [(String, String)] = [
            ("[]", "fault must be a JSON object"),
            ("{}", "a fault needs an 'op' string"),
            (#"{"op":7}"#, "op must be a string"),
            (#"{"op":"records/quer","error":"THROTTLED"}"#, "unknown operation 'records/quer'; valid operations: records/modify"),
            (#"{"op":"zones/list","error":"CONFLIT"}"#, "unknown error code 'CONFLIT'; valid codes: THROTTLED"),
            (#"{"op":"zones/list","error":"THROTTLED","times":"2"}"#, "times must be an integer"),
            (#"{"op":"zones/list","error":"THROTTLED","rate":"x"}"#, "rate must be a number"),
            (#"{"op":"zones/list","error":"THROTTLED","zones":["a"]}"#, "unknown key 'zones' in fault"),
            (#"{"op":"zones/list","error":"THROTTLED","times":1e12}"#, "times 1000000000000 is out of range"),
        ]
        for (text, words) in bad {
            XCTAssertThrowsError(try AddFaultRequest(json: try body(text)), text) { e in
                XCTAssertEqual(self.code(e), .badRequest, text)
                XCTAssertTrue((e as? CloudKitError)?.reason.contains(words) == true, "\(text): \(e)")
            }
        }
    }

    // MARK: scopes and the preflight

    /// A user scope is an Apple ID or a user record name, and matches the user either names.
    func testAUserScopeMatchesByAppleIDOrUserRecordName() throws {
        let t = TempStore()
        try t.store.accounts.signIn(appleID: "bob@example.com", givenName: nil, familyName: nil, phone: nil)
        try t.store.accounts.signIn(appleID: "alice@example.com", givenName: nil, familyName: nil, phone: nil)
        let alice = try XCTUnwrap(t.store.accounts.user(appleID: "alice@example.com"))
        let a = api(t.root)
        for scope in [alice.userRecordName, "Alice@Example.com"] {
            _ = try a.clearFaults(ClearFaultsRequest())
            _ = try a.addFault(AddFaultRequest(op: .endpoint(.zonesList), error: .throttled, user: scope))
            XCTAssertThrowsError(try a.listZones(as: caller(.public, .device)), scope)
            XCTAssertThrowsError(try a.listZones(as: caller(.public, .appleID("alice@example.com"))), scope)
            XCTAssertThrowsError(try a.listZones(as: caller(.public, .userRecordName(alice.userRecordName))), scope)
            XCTAssertNoThrow(try a.listZones(as: caller(.public, .appleID("bob@example.com"))), scope)
            XCTAssertNoThrow(try a.listZones(as: caller(.public, .nobody)), scope)
        }
    }

    /// The preflight fails a request with a fault of its endpoint, in its zone, on its device;
    /// a record-scoped fault fails that record of a batch only.
    func testThePreflightFailsRequestsWithTheirFaults() throws {
        let t = TempStore()
        let a = api(t.root)
        _ = try a.addFault(AddFaultRequest(op: .endpoint(.recordsModify), error: .zoneBusy, retryAfter: 1, zone: "_defaultZone", device: "phone"))
        let save = ModifyRequest(operations: [op(.create, "r1")])
        let before = t.snapshot()
        XCTAssertThrowsError(try a.modifyRecords(save, as: caller(device: "phone"))) { e in
            let ck = e as? CloudKitError
            XCTAssertEqual(ck?.code, .tryAgainLater)
            XCTAssertEqual(ck?.ckErrorCode, 23)
            XCTAssertEqual(ck?.retryAfter, 1)
            XCTAssertTrue(ck?.reason.hasSuffix("(fault f1)") == true, ck?.reason ?? "")
        }
        XCTAssertEqual(t.snapshot(), before, "a faulted save writes nothing")
        XCTAssertNoThrow(try a.modifyRecords(save, as: caller()), "another device")

        _ = try a.clearFaults(ClearFaultsRequest())
        _ = try a.addFault(AddFaultRequest(op: .endpoint(.recordsModify), error: .conflict, times: 1, record: "b"))
        let batch = try a.modifyRecords(ModifyRequest(operations: [op(.create, "a"), op(.create, "b"), op(.create, "c")]), as: caller())
        XCTAssertEqual(batch.results.map { $0.error?.code }, [nil, .conflict, nil], "the default zone is not atomic")
        XCTAssertEqual(batch.results[1].error?.recordName, "b")
        XCTAssertEqual(try a.faults().faults.count, 0, "a spent fault is gone")
    }

    /// ck's own operations are never faulted, whatever is armed: faults, status, fsck, schema.
    func testCksOwnOperationsAreNeverFaulted() throws {
        let t = TempStore()
        let a = api(t.root)
        _ = try a.addFault(AddFaultRequest(op: .all, error: .internalError))
        XCTAssertNoThrow(try a.faults())
        XCTAssertNoThrow(try a.status(as: caller()))
        XCTAssertNoThrow(try a.fsck(FsckRequest(repair: false)))
        XCTAssertNoThrow(try a.exportSchema(as: caller()))
        XCTAssertNoThrow(try a.showContainer(as: caller()))
        XCTAssertEqual(try a.clearFaults(ClearFaultsRequest(id: "f1")).faults.map(\.id), ["f1"])
    }

    /// A damaged faults file fails every client request (not fsck's to mend); clearing every
    /// fault removes it whatever it holds. A stored fault of an unknown operation is damage.
    func testADamagedFaultsFileIsClearedWhole() throws {
        let t = TempStore()
        let a = api(t.root)
        let file = t.root + "/faults.json"
        for damage in ["{not json", #"{"schemaVersion":2,"nextID":2,"faults":[{"id":"f1","op":"users/me","error":"THROTTLED"}]}"#] {
            try FileSystem.writeAtomically(file, Array(damage.utf8))
            XCTAssertThrowsError(try a.faults()) { XCTAssertEqual(self.code($0), .internalError) }
            XCTAssertThrowsError(try a.listZones(as: caller(.public, .device))) { XCTAssertEqual(self.code($0), .internalError) }
            XCTAssertNoThrow(try a.clearFaults(ClearFaultsRequest()))
            XCTAssertFalse(FileManager.default.fileExists(atPath: file))
            XCTAssertNoThrow(try a.listZones(as: caller(.public, .device)))
        }
    }
}
