/// Where a database keeps its subscriptions: one file per subscription, under the subscribing
/// user (`subscriptions/<id>.json` in a private or shared database, which belongs to one user;
/// `subscriptions/<user>/<id>.json` in the public database, which all users share).
struct SubscriptionStore {
    let databaseDirectory: String
    let scope: DatabaseScope

    var root: String { databaseDirectory + "/subscriptions" }

    func directory(owner: String) -> String {
        scope == .public ? root + "/" + PathEncoding.component(owner) : root
    }

    func file(owner: String, id: String) -> String { directory(owner: owner) + "/" + PathEncoding.component(id) + ".json" }

    func save(_ s: Subscription, owner: String) throws {
        try FileSystem.makeDirectories(directory(owner: owner))
        try FileSystem.writeJSON(file(owner: owner, id: s.subscriptionID), [
            "schemaVersion": .int(DataPaths.schemaVersion), "owner": .string(owner), "subscription": s.json(ownerRecordName: owner),
        ])
    }

    func get(owner: String, id: String) throws -> Subscription? {
        guard let j = try FileSystem.readJSON(file(owner: owner, id: id)), let s = j["subscription"] else { return nil }
        return try Subscription(stored: s)
    }

    func delete(owner: String, id: String) throws -> Bool {
        let f = file(owner: owner, id: id)
        guard try FileSystem.exists(f) else { return false }
        try FileSystem.remove(f)
        return true
    }

    /// One user's subscriptions, sorted by ID.
    func list(owner: String) throws -> [Subscription] {
        let dir = directory(owner: owner)
        var out: [Subscription] = []
        for f in try FileSystem.list(dir) where f.hasSuffix(".json") && !f.hasPrefix(".") {
            guard let j = try FileSystem.readJSON(dir + "/" + f), let s = j["subscription"] else { continue }
            out.append(try Subscription(stored: s))
        }
        return out.sorted { $0.subscriptionID < $1.subscriptionID }
    }

    /// Every subscription of the database with its owner: all users' in the public database.
    func all(owner: String) throws -> [(owner: String, subscription: Subscription)] {
        guard scope == .public else { return try list(owner: owner).map { (owner, $0) } }
        var out: [(owner: String, subscription: Subscription)] = []
        for d in try FileSystem.list(root) where !d.hasPrefix(".") {
            for f in try FileSystem.list(root + "/" + d) where f.hasSuffix(".json") && !f.hasPrefix(".") {
                guard let j = try FileSystem.readJSON(root + "/" + d + "/" + f), let s = j["subscription"],
                      let o = j["owner"]?.stringValue else { continue }
                out.append((o, try Subscription(stored: s)))
            }
        }
        return out
    }
}
