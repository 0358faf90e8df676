import CKJSON
import CKModel

/// The armed faults of a data directory (`faults.json` at its root, Docs/faults.md): added,
/// listed and cleared by `ck fault`, checked by every client operation. Without faults a
/// check is one read of a missing file; a fault that fails every match (no count, no rate) is
/// decided without writing anything; a counted or rated one is consumed under `faults.lock`.
/// Reached through the API only (API/Faults: `addFault`, `faults`, `clearFaults`; the preflight).
package struct FaultStore {
    package let paths: DataPaths

    package init(root: String) { self.paths = DataPaths(root: root) }
    package init(paths: DataPaths) { self.paths = paths }

    package struct File {
        var nextID: Int64 = 1
        package var faults: [Fault] = []

        package var json: JSONValue {
            ["schemaVersion": .int(FileFormat.schemaVersion), "nextID": .int(nextID), "faults": .array(faults.map(\.json))]
        }
    }

    /// `faults.json` under `faults.lock`; nil when no fault is armed.
    private var document: LockedDocument<File?> {
        let file = paths.faultsFile
        return LockedDocument(file, lock: paths.faultsLock, decode: { j in
            guard let j else { return nil }
            guard let v = j["schemaVersion"]?.int64Value, v == FileFormat.schemaVersion else {
                throw CloudKitError.internalError("\(file) was written by another storage version").with(.clearFaults)
            }
            guard let list = j["faults"]?.arrayValue else { throw CloudKitError.internalError("malformed \(file)").with(.clearFaults) }
            return File(nextID: j["nextID"]?.int64Value ?? 1, faults: try list.map(Fault.init(stored:)))
        }, encode: { $0?.json }, unreadable: { e in
            // Not fsck's to mend: the faults are the user's, and clearing them is the repair.
            CloudKitError.internalError("\(file) is damaged: \(e.reason)").with(.clearFaults)
        })
    }

    private func load() throws -> File? { try document.read() }

    // MARK: ck fault

    /// The armed faults, in the order they are checked.
    package func list() throws -> [Fault] { try load()?.faults ?? [] }

    /// Arms a fault, giving it the next ID (`f1`, `f2`, …; never reused in this file).
    package func add(_ fault: Fault) throws -> Fault {
        try document.update { stored in
            var file = stored ?? File()
            var f = fault
            f.id = "f\(file.nextID)"
            f.evaluations = 0
            file.nextID += 1
            file.faults.append(f)
            stored = file
            return f
        }
    }

    /// Removes one fault (NOT_FOUND when there is none by that ID), or all of them — then the
    /// file goes whatever it holds, so a damaged one can always be cleared. Returns those removed.
    @discardableResult
    package func clear(id: String? = nil) throws -> [Fault] {
        guard let id = id else {
            return try document.withLock {
                let gone = (try? load())??.faults ?? []
                try FileSystem.remove(paths.faultsFile)
                return gone
            }
        }
        return try document.update { stored in
            guard var file = stored, let i = file.faults.firstIndex(where: { $0.id == id }) else {
                throw CloudKitError(.notFound, "no fault '\(Names.describe(id))'").with(.listFaults)
            }
            let gone = file.faults.remove(at: i)
            stored = file
            return [gone]
        }
    }

    // MARK: checks

    /// Fails a whole request: throws the error of the first fault that fires among those for
    /// `op` (or `*`) without a `record` scope whose zone, user and device match. A counted
    /// fault loses one count (and goes at zero), a rated one advances its counter. A request on
    /// several zones is failed by a zone-scoped fault that names any of them; the user is found
    /// only if some fault is scoped to a user.
    /// Returns whether any fault is scoped to a record (from the same read of the faults).
    @discardableResult
    package func check(op: Endpoint, zones: [String], user: () -> String?, device: String?) throws -> Bool {
        let file = try load()
        let recordScoped = file?.faults.contains { $0.record != nil } ?? false
        guard op != .notificationsDeliver else { return recordScoped }
        var who: String??
        func lazyUser() -> String? {
            if let w = who { return w }
            let w = user()
            who = .some(w)
            return w
        }
        let fired = try fire(read: file) { f in
            f.record == nil && f.op.matches(op) && f.code != nil
                && (f.zone.map { z in zones.contains { NameKey($0) == NameKey(z) } } ?? true)
                && matches(f, user: lazyUser, device: device)
        }
        if let f = fired { throw f.error() }
        return recordScoped
    }

    /// The error one record of a request fails with: the first fault that fires among those
    /// for `op` (or `*`) scoped to this record, whose zone, user and device match.
    package func recordFault(op: Endpoint, zone: String?, record: String, user: String?, device: String?) throws -> CloudKitError? {
        let fired = try fire { f in
            f.record.map { Array($0.utf8) == Array(record.utf8) } == true && f.op.matches(op) && f.code != nil
                && (f.zone == nil || zone.map { NameKey($0) == NameKey(f.zone!) } == true)
                && matches(f, user: { user }, device: device)
        }
        return fired?.error(recordName: record)
    }

    /// Whether any fault is scoped to a record: a command asks once, so that a batch without
    /// such faults reads nothing per record.
    package func hasRecordFaults() throws -> Bool { try load()?.faults.contains { $0.record != nil } ?? false }

    /// Whether a notification for `user` on `device` (about `zone`, if any) is dropped: a
    /// `notifications/deliver` fault fires (every time, a number of times, or at a rate).
    func dropsDelivery(user: String, device: String, zone: String?) throws -> Bool {
        try fire { f in
            f.op == .deliver && (f.zone == nil || zone.map { NameKey($0) == NameKey(f.zone!) } == true)
                && matches(f, user: { user }, device: device)
        } != nil
    }

    /// The user and device scopes. A user is an Apple ID or a user record name; either
    /// matches the other when this device has seen the user.
    private func matches(_ f: Fault, user: () -> String?, device: String?) -> Bool {
        if let d = f.device, d != device { return false }
        guard let u = f.user else { return true }
        guard let given = user() else { return false }
        return !identities(u).isDisjoint(with: identities(given))
    }

    private func identities(_ s: String) -> Set<String> {
        let accounts = AccountStore(paths: paths, clock: .system)
        if s.contains("@") {
            var out: Set<String> = [s.lowercased()]
            if let u = try? accounts.user(appleID: s) { out.insert(u.userRecordName) }
            return out
        }
        var out: Set<String> = [s]
        if let u = try? accounts.user(recordName: s) { out.insert(u.appleID.lowercased()) }
        return out
    }

    /// Decides the faults `selects` picks, in order, and returns the first that fires. One that
    /// fires every time is found without the lock or a write; counts and rates are consumed
    /// under the lock, on the file as it is then.
    /// `read`: the faults as the caller just read them (one read less).
    private func fire(read: File?? = nil, _ selects: (Fault) -> Bool) throws -> Fault? {
        guard let first = try (read ?? load())?.faults.first(where: selects) else { return nil }
        if first.times == nil && first.rate == nil { return first }
        // Written back only when a count or a rate moved.
        return try document.update { stored in
            guard var file = stored else { return nil }
            var fired: Fault?
            for i in file.faults.indices where selects(file.faults[i]) {
                let f = file.faults[i]
                if let r = f.rate {
                    file.faults[i].evaluations += 1
                    if Fault.decide(seed: f.seed, counter: f.evaluations, rate: r) { fired = f; break }
                } else if let t = f.times {
                    fired = f
                    if t <= 1 { file.faults.remove(at: i) } else { file.faults[i].times = t - 1 }
                    break
                } else {
                    fired = f
                    break
                }
            }
            stored = file
            return fired
        }
    }
}
