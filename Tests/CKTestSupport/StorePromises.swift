import Foundation

/// The store's promises, checked from outside after crashes and repairs: what the tests that
/// kill ck (CrashRecoveryTests, KillLoopTests) assert.
extension TestSandbox {
    private func document(_ r: CKResult) -> [String: Any] { (try? JSONSerialization.jsonObject(with: Data(r.stdout.utf8))) as? [String: Any] ?? [:] }

    private func ndjson(_ r: CKResult) -> [[String: Any]] {
        r.stdout.split(separator: "\n").compactMap { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any] }
    }

    /// What is wrong with the store: `acknowledged` maps each record whose save exited 0 to
    /// its zone; `watcher` is a device subscribed to query notifications on creation of type T.
    public func brokenPromises(acknowledged: [String: String], watcher: String) -> [String] {
        var broken: [String] = []
        let zones = Set((document(run(["zone", "list"]))["zones"] as? [[String: Any]] ?? []).compactMap { ($0["zoneID"] as? [String: Any])?["zoneName"] as? String })
        var exported: [String: [String: String]] = [:]
        var created: Set<String> = []
        for zone in zones {
            for r in ndjson(run(["--zone", zone, "export"])) {
                exported[zone, default: [:]][r["recordName"] as! String] = r["recordChangeTag"] as? String
                if zone != "_defaultZone" && r["recordType"] as? String == "T" { created.insert(r["recordName"] as! String) }
            }
        }
        // Nothing acknowledged is lost.
        for (name, zone) in acknowledged where zones.contains(zone) && exported[zone]?[name] == nil {
            broken.append("acknowledged record \(name) is lost")
        }
        // Every custom zone's change feed, read from the start, is exactly its records.
        for zone in zones where zone != "_defaultZone" {
            var feed: [String: String] = [:]
            var args = ["--zone", zone, "zone", "changes", "--from-start", "--no-save"]
            while true {
                let page = (document(run(args))["zones"] as? [[String: Any]])?.first ?? [:]
                for r in page["records"] as? [[String: Any]] ?? [] {
                    let n = r["recordName"] as! String
                    if r["deleted"] as? Bool == true { feed[n] = nil } else { feed[n] = r["recordChangeTag"] as? String }
                }
                guard page["moreComing"] as? Bool == true else { break }
                args = ["--zone", zone, "zone", "changes", "--since", page["syncToken"] as? String ?? "", "--no-save"]
            }
            if feed != exported[zone] ?? [:] { broken.append("zone \(zone): the change feed disagrees with the records") }
        }
        // The database history knows exactly the zones there are.
        let db = document(run(["database", "changes", "--from-start", "--no-save"]))
        let listed = Set((db["zones"] as? [[String: Any]] ?? []).filter { $0["deleted"] as? Bool != true }
            .compactMap { ($0["zoneID"] as? [String: Any])?["zoneName"] as? String })
        if listed != zones.subtracting(["_defaultZone"]) {
            broken.append("database changes list \(listed.sorted()), the zones are \(zones.sorted())")
        }
        // One creation notification per record of type T in a custom zone, never two.
        let notes = (document(run(["--device", watcher, "notifications"]))["notifications"] as? [[String: Any]] ?? [])
            .filter { $0["queryNotificationReason"] as? String == "recordCreated" }.compactMap { $0["recordName"] as? String }
        let counted = Dictionary(notes.map { ($0, 1) }, uniquingKeysWith: +)
        for name in created.sorted() where counted[name] != 1 {
            broken.append("record \(name) has \(counted[name] ?? 0) creation notifications")
        }
        return broken
    }
}
