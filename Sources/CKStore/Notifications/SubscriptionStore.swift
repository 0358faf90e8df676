import CKModel

/// Where a database keeps its subscriptions: one file per subscription, under the subscribing
/// user (`subscriptions/<id>.json` in a private or shared database, which belongs to one user;
/// `subscriptions/<user>/<id>.json` in the public database, which all users share).
struct SubscriptionStore {
    let databaseDirectory: String
    package let scope: DatabaseScope

    package var root: String { databaseDirectory + "/subscriptions" }

    package func directory(owner: String) -> String {
        scope == .public ? root + "/" + PathEncoding.component(owner) : root
    }

    package func file(owner: String, id: String) -> String { directory(owner: owner) + "/" + PathEncoding.component(id) + ".json" }

    /// `created`: when it was saved; changes committed before then never notify it (a
    /// delivery redone after a crash must not tell a newer subscription of an older change).
    package func save(_ s: Subscription, owner: String, created: Int64) throws {
        try FileSystem.writeJSON(file(owner: owner, id: s.subscriptionID), [
            "schemaVersion": .int(FileFormat.schemaVersion), "owner": .string(owner), "subscription": s.json(ownerRecordName: owner),
            "created": .int(created),
        ])
    }

    package func get(owner: String, id: String) throws -> Subscription? {
        guard let j = try FileSystem.readJSON(file(owner: owner, id: id)), let s = j["subscription"] else { return nil }
        return try Subscription(stored: s)
    }

    package func delete(owner: String, id: String) throws -> Bool {
        let f = file(owner: owner, id: id)
        guard try FileSystem.exists(f) else { return false }
        try FileSystem.remove(f)
        return true
    }

    /// One user's subscriptions, sorted by ID.
    package func list(owner: String) throws -> [Subscription] {
        let dir = directory(owner: owner)
        var out: [Subscription] = []
        for f in try FileSystem.list(dir) where f.hasSuffix(".json") && !f.hasPrefix(".") {
            guard let j = try FileSystem.readJSON(dir + "/" + f), let s = j["subscription"] else { continue }
            out.append(try Subscription(stored: s))
        }
        return out.sorted { $0.subscriptionID < $1.subscriptionID }
    }

    /// Every subscription of the database with its owner and when it was saved: all users' in
    /// the public database.
    package func all(owner: String) throws -> [(owner: String, subscription: Subscription, created: Int64)] {
        let owners = scope == .public ? try FileSystem.list(root).filter { !$0.hasPrefix(".") }.map { root + "/" + $0 } : [root]
        var out: [(owner: String, subscription: Subscription, created: Int64)] = []
        for dir in owners {
            for f in try FileSystem.list(dir) where f.hasSuffix(".json") && !f.hasPrefix(".") {
                guard let j = try FileSystem.readJSON(dir + "/" + f), let s = j["subscription"] else { continue }
                out.append((j["owner"]?.stringValue ?? owner, try Subscription(stored: s), j["created"]?.int64Value ?? 0))
            }
        }
        return out.sorted { $0.subscription.subscriptionID.utf8.lexicographicallyPrecedes($1.subscription.subscriptionID.utf8) }
    }
}
