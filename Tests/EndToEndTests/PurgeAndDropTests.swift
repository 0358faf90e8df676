import CKTestSupport
import Foundation
import XCTest

/// Issue 15's two failures a sync loop must survive that are not errors: a notification that
/// never arrives (`ck notifications drop`) and a zone purged under the app (`ck zone purge`).
final class PurgeAndDropTests: XCTestCase {
    private func ok(_ s: Sandbox, _ args: String..., file: StaticString = #filePath, line: UInt = #line) -> CKResult {
        let r = s.run(args)
        XCTAssertEqual(r.status, 0, "\(args): \(r.stderr)", file: file, line: line)
        return r
    }

    private func notes(_ r: CKResult) -> [[String: Any]] { r.object["notifications"] as? [[String: Any]] ?? [] }
    private func dropped(_ r: CKResult) -> [[String: Any]] { r.object["dropped"] as? [[String: Any]] ?? [] }
    private func recordNames(_ list: [[String: Any]]) -> [String] { list.map { $0["recordName"] as? String ?? $0["notificationType"] as? String ?? "?" } }
    private func changed(_ r: CKResult) -> [String] { (r.zoneChanges["records"] as? [[String: Any]] ?? []).compactMap { $0["recordName"] as? String } }
    private func zoneEntries(_ r: CKResult) -> [[String: Any]] { r.object["zones"] as? [[String: Any]] ?? [] }
    private func zoneName(_ e: [String: Any]) -> String? { (e["zoneID"] as? [String: Any])?["zoneName"] as? String }

    private func save(_ s: Sandbox, _ name: String, zone: String = "Lists", device: String = "phone", file: StaticString = #filePath, line: UInt = #line) {
        _ = ok(s, "--device", device, "--zone", zone, "record", "save", "--type", "T", "--name", name, "n=1", file: file, line: line)
    }

    // MARK: dropped notifications

    func testDropLosesTheNewestUnreadNotificationsWhileTheChangesStay() {
        let s = Sandbox()
        s.signIn()
        _ = ok(s, "zone", "create", "Lists")
        // Query notifications do not coalesce: one per record created.
        _ = ok(s, "--device", "ipad", "subscribe", "query", "--type", "T", "--fires-on", "create")
        _ = ok(s, "--device", "ipad", "--zone", "Lists", "zone", "changes")
        for n in ["a1", "a2", "a3"] { save(s, n) }
        XCTAssertEqual(recordNames(notes(ok(s, "--device", "ipad", "notifications"))), ["a1", "a2", "a3"])

        // The default: the newest one, the notification the last save sent.
        XCTAssertEqual(recordNames(dropped(ok(s, "--device", "ipad", "notifications", "drop"))), ["a3"])
        XCTAssertEqual(recordNames(notes(ok(s, "--device", "ipad", "notifications"))), ["a1", "a2"])
        // More than there are: what there is, oldest first.
        XCTAssertEqual(recordNames(dropped(ok(s, "--device", "ipad", "notifications", "drop", "--count", "5"))), ["a1", "a2"])
        XCTAssertEqual(notes(ok(s, "--device", "ipad", "notifications")).count, 0)
        XCTAssertEqual(ok(s, "--device", "ipad", "notifications", "--follow", "--timeout", "0.3").stdout, "", "--follow never shows a dropped one")
        // The changes themselves are all there for the feed.
        XCTAssertEqual(changed(ok(s, "--device", "ipad", "--zone", "Lists", "zone", "changes")), ["a1", "a2", "a3"])

        // Later changes still notify.
        save(s, "a4")
        save(s, "a5")
        XCTAssertEqual(recordNames(notes(ok(s, "--device", "ipad", "notifications"))), ["a4", "a5"])
        XCTAssertEqual(recordNames(dropped(ok(s, "--device", "ipad", "notifications", "drop", "--all"))), ["a4", "a5"])
        XCTAssertEqual(notes(ok(s, "--device", "ipad", "notifications")).count, 0)
        XCTAssertEqual(changed(ok(s, "--device", "ipad", "--zone", "Lists", "zone", "changes")), ["a4", "a5"])

        // Nothing unread: nothing dropped, nothing written; refusals change nothing either.
        s.assertUnchanged("drop with nothing unread") {
            let r = ok(s, "--device", "ipad", "notifications", "drop", "--all")
            XCTAssertEqual((r.object["dropped"] as? [Any])?.count, 0)
            XCTAssertEqual(dropped(r).count, 0)
            XCTAssertEqual(dropped(ok(s, "--device", "never-seen", "notifications", "drop")).count, 0, "an unknown device has nothing to drop")
            assertFailure(s.ck("--device", "ipad", "notifications", "drop", "--count", "0"), exit: 2, contains: "--count")
            assertFailure(s.ck("--device", "ipad", "notifications", "drop", "--count", "2", "--all"), exit: 2, contains: "exclude")
            assertFailure(s.ck("--device", "ipad", "notifications", "drop", "extra"), exit: 2)
        }
        // Another device's inbox is its own.
        _ = ok(s, "--device", "mac", "subscribe", "query", "--type", "T", "--fires-on", "create")
        save(s, "a6")
        XCTAssertEqual(recordNames(dropped(ok(s, "--device", "mac", "notifications", "drop"))), ["a6"])
        XCTAssertEqual(recordNames(notes(ok(s, "--device", "ipad", "notifications"))), ["a6"])
        XCTAssertEqual(ok(s, "fsck", "--dry-run").object["clean"] as? Bool, true)
    }

    /// The tutorial's case: a zone notification never arrives, the app hears of the next change
    /// and catches up on both from its token; nothing coalesces into the lost notification.
    func testADroppedZoneNotificationIsNeverCoalescedIntoAndTheFeedCatchesUp() {
        let s = Sandbox()
        s.signIn()
        _ = ok(s, "zone", "create", "Lists")
        _ = ok(s, "--device", "ipad", "--zone", "Lists", "subscribe", "zone")
        _ = ok(s, "--device", "ipad", "--zone", "Lists", "zone", "changes")
        save(s, "r1")
        let lost = dropped(ok(s, "--device", "ipad", "notifications", "drop"))
        XCTAssertEqual(lost.map { $0["notificationType"] as? String }, ["recordZone"])
        XCTAssertEqual(notes(ok(s, "--device", "ipad", "notifications")).count, 0, "the notification never arrives")
        // Had the next change coalesced into the dropped one, it would never arrive either.
        save(s, "r2")
        let arrived = notes(ok(s, "--device", "ipad", "notifications"))
        XCTAssertEqual(arrived.count, 1)
        XCTAssertNotEqual(arrived.first?["notificationID"] as? String, lost.first?["notificationID"] as? String)
        save(s, "r3")
        XCTAssertEqual(notes(ok(s, "--device", "ipad", "notifications")).count, 1, "unread zone notifications still coalesce")
        // Fetching from the bookmark on that notification brings every change, the unannounced one too.
        XCTAssertEqual(changed(ok(s, "--device", "ipad", "--zone", "Lists", "zone", "changes")), ["r1", "r2", "r3"])
        // Read marks still work across dropped lines.
        _ = ok(s, "--device", "ipad", "notifications", "--mark-read")
        save(s, "r4")
        XCTAssertEqual(notes(ok(s, "--device", "ipad", "notifications")).count, 1)
        XCTAssertEqual(ok(s, "fsck", "--dry-run").object["clean"] as? Bool, true)
    }

    /// A `notifications/deliver` fault loses deliveries as they happen: the inbox never gets
    /// them, the delivery still counts as done (fsck's redo brings nothing back), other devices
    /// are untouched, and the changes are in the feed.
    func testADeliveryFaultLosesTheNotificationOnTheWay() {
        let s = Sandbox()
        s.signIn()
        _ = ok(s, "zone", "create", "Lists")
        _ = ok(s, "--device", "ipad", "subscribe", "query", "--type", "T", "--fires-on", "create")
        _ = ok(s, "--device", "mac", "notifications")
        _ = ok(s, "--device", "ipad", "--zone", "Lists", "zone", "changes")
        _ = ok(s, "fault", "add", "--op", "notifications/deliver", "--device", "ipad", "--times", "1")
        save(s, "a1")
        save(s, "a2")
        XCTAssertEqual(recordNames(notes(ok(s, "--device", "ipad", "notifications"))), ["a2"], "the first delivery to ipad was lost")
        XCTAssertEqual(recordNames(notes(ok(s, "--device", "mac", "notifications"))), ["a1", "a2"], "other devices are untouched")
        XCTAssertEqual(ok(s, "fsck").status, 0)
        XCTAssertEqual(recordNames(notes(ok(s, "--device", "ipad", "notifications"))), ["a2"], "nothing re-delivers a lost notification")
        XCTAssertEqual(changed(ok(s, "--device", "ipad", "--zone", "Lists", "zone", "changes")), ["a1", "a2"])
        // At rate 1, every delivery to the device is lost until the fault is cleared.
        _ = ok(s, "fault", "add", "--drop-rate", "1", "--device", "ipad")
        save(s, "a3")
        save(s, "a4")
        _ = ok(s, "fault", "clear")
        save(s, "a5")
        XCTAssertEqual(recordNames(notes(ok(s, "--device", "ipad", "notifications"))), ["a2", "a5"])
        XCTAssertEqual(changed(ok(s, "--device", "ipad", "--zone", "Lists", "zone", "changes")), ["a3", "a4", "a5"])
        XCTAssertEqual(ok(s, "fsck", "--dry-run").object["clean"] as? Bool, true)
    }

    // MARK: zone purge

    func testPurgeReportsPurgedExpiresTokensAndRecreatesEmpty() {
        let s = Sandbox()
        s.signIn()
        _ = ok(s, "zone", "create", "Lists")
        _ = ok(s, "zone", "create", "Other")
        _ = ok(s, "--device", "ipad", "subscribe")
        save(s, "r1")
        save(s, "r2")
        let zoneToken = ok(s, "--zone", "Lists", "zone", "changes").zoneChanges["syncToken"] as? String ?? ""
        let dbToken = ok(s, "database", "changes").object["syncToken"] as? String ?? ""
        _ = ok(s, "--device", "ipad", "notifications", "--mark-read")

        let purged = ok(s, "zone", "purge", "Lists")
        XCTAssertEqual(zoneEntries(purged).count, 1)
        XCTAssertEqual(zoneName(zoneEntries(purged)[0]), "Lists")
        XCTAssertEqual(zoneEntries(purged)[0]["deleted"] as? Bool, true)
        XCTAssertEqual(zoneEntries(purged)[0]["purged"] as? Bool, true)

        // The database feed: the zone, deleted and purged, once.
        let db = zoneEntries(ok(s, "database", "changes"))
        XCTAssertEqual(db.count, 1, "\(db)")
        XCTAssertEqual(db.first.flatMap(zoneName), "Lists")
        XCTAssertEqual(db.first?["deleted"] as? Bool, true)
        XCTAssertEqual(db.first?["purged"] as? Bool, true)
        XCTAssertEqual(zoneEntries(ok(s, "database", "changes")).count, 0, "the bookmark moved past it")
        // A plain deletion keeps CloudKit's shape, without purged.
        _ = ok(s, "zone", "delete", "Other")
        let deleted = zoneEntries(ok(s, "database", "changes", "--since", dbToken, "--no-save"))
        XCTAssertEqual(deleted.map(zoneName), ["Lists", "Other"])
        XCTAssertNil(deleted.last?["purged"])
        // Database subscribers hear of it, as of a deletion.
        XCTAssertTrue(notes(ok(s, "--device", "ipad", "notifications")).contains { $0["notificationType"] as? String == "database" })

        // The zone is gone: its feed, its records.
        assertFailure(s.ck("--zone", "Lists", "zone", "changes"), exit: 3, contains: "ZONE_NOT_FOUND")
        assertFailure(s.ck("--zone", "Lists", "zone", "changes", "--since", zoneToken), exit: 3, contains: "ZONE_NOT_FOUND")
        assertFailure(s.ck("--zone", "Lists", "record", "get", "r1"), exit: 3)

        // Made again, it is empty, and every earlier token of it has expired.
        _ = ok(s, "zone", "create", "Lists")
        assertFailure(s.ck("--zone", "Lists", "zone", "changes", "--since", zoneToken), exit: 7, contains: "CHANGE_TOKEN_EXPIRED")
        // The device's bookmark lived in the zone's directory and went with it: the next
        // fetch starts from the beginning (Docs/history.md, "Bookmarks").
        XCTAssertEqual(changed(ok(s, "--zone", "Lists", "zone", "changes", "--no-save")), [])
        let fresh = ok(s, "--zone", "Lists", "zone", "changes", "--from-start")
        XCTAssertEqual(changed(fresh), [])
        XCTAssertEqual((ok(s, "--zone", "Lists", "zone", "changes").zoneChanges["records"] as? [Any])?.count, 0, "the new bookmark works")
        let again = zoneEntries(ok(s, "database", "changes"))
        XCTAssertEqual(again.map(zoneName), ["Other", "Lists"])
        XCTAssertEqual(again.last?["deleted"] as? Bool, false)
        XCTAssertNil(again.last?["purged"], "as of the token the zone exists again")
        XCTAssertEqual(ok(s, "fsck", "--dry-run").object["clean"] as? Bool, true)
    }

    func testPurgeRefusalsChangeNothing() {
        let s = Sandbox()
        s.signIn()
        _ = ok(s, "zone", "create", "Lists")
        save(s, "r1")
        s.assertUnchanged("refused purges") {
            assertFailure(s.ck("zone", "purge", "Missing"), exit: 3, contains: "--if-exists")
            assertFailure(s.ck("zone", "purge", "Lists", "Missing"), exit: 3, contains: "Missing")
            assertFailure(s.ck("zone", "purge", "_defaultZone"), exit: 6, contains: "cannot be purged")
            assertFailure(s.ck("--db", "public", "zone", "purge", "Lists"), exit: 6, contains: "private database")
            assertFailure(s.ck("--db", "shared", "zone", "purge", "Lists"), exit: 6, contains: "private database")
            assertFailure(s.ck("zone", "purge"), exit: 2)
            assertFailure(s.ck("zone", "purge", "Lists", "--bogus"), exit: 2)
            let r = ok(s, "zone", "purge", "--if-exists", "Missing")
            XCTAssertEqual(zoneEntries(r).count, 0)
        }
        XCTAssertEqual(ok(s, "--zone", "Lists", "record", "get", "r1").status, 0)
        // --if-exists: the missing one left out, the others purged.
        let r = ok(s, "zone", "purge", "--if-exists", "Missing", "Lists")
        XCTAssertEqual(zoneEntries(r).map(zoneName), ["Lists"])
        XCTAssertEqual(zoneEntries(ok(s, "zone", "list")).compactMap(zoneName).filter { $0 != "_defaultZone" }, [], "no custom zone is left")
        _ = ok(s, "zone", "create", "Lists")
        XCTAssertEqual(changed(ok(s, "--zone", "Lists", "zone", "changes", "--from-start")), [], "nothing of the purged zone comes back")
    }

    /// A purge killed at each of its disk operations is finished (or, before it began, never
    /// happened) by the next write and fsck; the database history records it exactly once.
    func testAPurgeInterruptedByACrashIsFinishedOnce() throws {
        let s = Sandbox()
        s.signIn()
        _ = ok(s, "zone", "create", "Z")
        _ = ok(s, "--device", "v", "subscribe", "query", "--type", "T", "--fires-on", "create")
        _ = ok(s, "--device", "w", "subscribe")
        var acknowledged: [String: String] = [:]
        var points = 0
        for n in 1...200 {
            _ = ok(s, "zone", "create", "P\(n)")
            save(s, "p\(n)", zone: "P\(n)")
            _ = ok(s, "--device", "w", "notifications", "--mark-read")
            let r = s.run(["zone", "purge", "P\(n)"], env: ["CK_DEBUG_CRASH_AT_OP": String(n)])
            let crashed = r.status == 137
            if !crashed { XCTAssertEqual(r.status, 0, "purge at op \(n): \(r.stderr)") }
            // Another write to another zone finishes what the crash left.
            save(s, "after-\(n)", zone: "Z")
            acknowledged["after-\(n)"] = "Z"
            let fix = s.run(["fsck"])
            XCTAssertEqual(fix.status, 0, "purge at op \(n): fsck could not repair: \(fix.stdout)")
            XCTAssertEqual(s.run(["fsck", "--dry-run"]).object["clean"] as? Bool, true, "purge at op \(n): second fsck")
            let exists = s.run(["--zone", "P\(n)", "record", "list"]).status == 0
            if r.status == 0 { XCTAssertFalse(exists, "purge at op \(n): an acknowledged purge did not happen") }
            if exists {
                XCTAssertEqual(s.run(["--zone", "P\(n)", "record", "get", "p\(n)"]).status, 0, "purge at op \(n): a zone that survived lost its record")
                _ = ok(s, "zone", "purge", "P\(n)")
            } else {
                let notes = notes(ok(s, "--device", "w", "notifications", "--mark-read"))
                XCTAssertTrue(notes.contains { $0["notificationType"] as? String == "database" }, "purge at op \(n): no database notification")
            }
            // Whoever finished it, the database history says "purge" once, and the feed says purged.
            let entries = try databaseHistory(s).filter { $0["zoneName"] as? String == "P\(n)" && $0["op"] as? String != "change" }.compactMap { $0["op"] as? String }
            XCTAssertEqual(entries, ["create", "purge"], "purge at op \(n)")
            let feed = zoneEntries(ok(s, "database", "changes", "--from-start", "--no-save")).first { zoneName($0) == "P\(n)" }
            XCTAssertEqual(feed?["purged"] as? Bool, true, "purge at op \(n): \(String(describing: feed))")
            for broken in s.brokenPromises(acknowledged: acknowledged, watcher: "v") { XCTFail("purge at op \(n): \(broken)") }
            if !crashed {
                points = n - 1
                break
            }
        }
        XCTAssertGreaterThan(points, 5, "a purge has more crash points than that")
        print("STRESS crash-points: purge: crashed at each of its \(points) disk operations, each followed by another write and fsck")
    }

    /// A power loss can take the intent (it is not synced) and leave the purged zone in
    /// `trash/`: fsck still records a purge, not a deletion.
    func testFsckRecordsAPurgeWhoseIntentAPowerLossTook() throws {
        let s = Sandbox()
        s.signIn()
        _ = ok(s, "zone", "create", "Q")
        save(s, "q1", zone: "Q")
        _ = ok(s, "zone", "create", "Probe")
        let trace = s.run(["zone", "purge", "Probe"], env: ["CK_DEBUG_TRACE_OPS": "1"]).stderr.split(separator: "\n")
        guard let move = trace.firstIndex(where: { $0.contains("rename") && $0.hasSuffix("/zones/Probe") }) else { return XCTFail("no rename in \(trace)") }
        let crashed = s.run(["zone", "purge", "Q"], env: ["CK_DEBUG_CRASH_AT_OP": String(move + 2)])
        XCTAssertEqual(crashed.status, 137, crashed.stderr)
        let files = try FileManager.default.subpathsOfDirectory(atPath: s.dataDir.path)
        XCTAssertTrue(files.contains { $0.contains("/trash/") && $0.hasSuffix(".purge") }, "the zone waits in trash/ as a purge")
        for intent in files where intent.hasSuffix("/intents/Q.json") { try FileManager.default.removeItem(at: s.dataDir.appendingPathComponent(intent)) }
        let fix = s.run(["fsck"])
        XCTAssertEqual(fix.status, 0, fix.stdout)
        XCTAssertTrue(fix.stdout.contains("purge was interrupted"), fix.stdout)
        XCTAssertEqual(s.run(["fsck", "--dry-run"]).object["clean"] as? Bool, true)
        XCTAssertEqual(try databaseHistory(s).filter { $0["zoneName"] as? String == "Q" }.compactMap { $0["op"] as? String }, ["create", "change", "purge"])
        let feed = zoneEntries(ok(s, "database", "changes", "--from-start", "--no-save")).first { zoneName($0) == "Q" }
        XCTAssertEqual(feed?["purged"] as? Bool, true)
        assertFailure(s.ck("--zone", "Q", "record", "get", "q1"), exit: 3)
    }

    /// The private database's history, entry by entry.
    private func databaseHistory(_ s: Sandbox) throws -> [[String: Any]] {
        guard let log = try FileManager.default.subpathsOfDirectory(atPath: s.dataDir.path)
            .first(where: { $0.hasSuffix("/history.log") && $0.contains("/private/") && !$0.contains("/zones/") }) else { return [] }
        return try String(contentsOf: s.dataDir.appendingPathComponent(log), encoding: .utf8).split(separator: "\n")
            .map { try JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any] }
    }
}

extension PurgeAndDropTests {
    /// A purge (or delete) killed after its intent, before the zone moved: `zone create` must
    /// finish it first, never hand back the zone that is about to go (a hostile review found
    /// `zone create` returned the old zone, whose next write then failed ZONE_NOT_FOUND).
    func testZoneCreateFinishesAnInterruptedPurgeFirst() {
        // Ops 1–4 write and sync the intent and rename it into place; 5 makes `trash/`, 6 moves the zone.
        for (verb, op) in [("purge", "5"), ("purge", "6"), ("delete", "5")] {
            let s = Sandbox()
            s.signIn()
            XCTAssertEqual(s.ck("zone", "create", "Lists").status, 0)
            XCTAssertEqual(s.ck("--zone", "Lists", "record", "save", "--type", "T", "--name", "old", "a=1").status, 0)
            let crashed = s.run(["zone", verb, "Lists"], env: ["CK_DEBUG_CRASH_AT_OP": op])
            XCTAssertNotEqual(crashed.status, 0, "\(verb) at op \(op) was to crash")
            let made = s.ck("zone", "create", "Lists")
            XCTAssertEqual(made.status, 0, made.stderr)
            let save = s.ck("--zone", "Lists", "record", "save", "--type", "T", "--name", "new", "a=2")
            XCTAssertEqual(save.status, 0, "\(verb) at op \(op): the created zone must stay: \(save.stderr)")
            let names = s.ck("--zone", "Lists", "record", "list", "--format", "ndjson").stdout
            XCTAssertFalse(names.contains("\"old\""), "\(verb) at op \(op): the old zone's records are gone")
            XCTAssertTrue(names.contains("\"new\""))
        }
    }
}
