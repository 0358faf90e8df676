import CKJSON
import CKModel
import Foundation

/// The device's iCloud account (device.json), the users it has seen (users/), and the
/// account-changed events (account-events.ndjson).
package final class AccountStore {
    package let paths: DataPaths
    private let clock: Clock

    package init(paths: DataPaths, clock: Clock) {
        self.paths = paths
        self.clock = clock
    }

    package struct DeviceAccount: Equatable {
        package var status: AccountStatus
        package var appleID: String?
    }

    /// Asked for every request `ck serve` answers: kept parsed while the file is the same.
    package func device() throws -> DeviceAccount {
        let path = paths.deviceFile
        let device: DeviceAccount?? = try StampedFiles.shared.value(path) {
            guard let j = try FileSystem.readJSON(path) else { return nil }
            guard let s = j["status"]?.stringValue, let st = AccountStatus(rawValue: s) else {
                throw CloudKitError.internalError("malformed \(path)")
            }
            return DeviceAccount(status: st, appleID: j["appleID"]?.stringValue)
        }
        return (device ?? nil) ?? DeviceAccount(status: .noAccount, appleID: nil)
    }

    /// Asked for every request `ck serve` answers with a web session: kept parsed while the
    /// file is the same.
    package func user(appleID: String) throws -> UserAccount? {
        try user(inFile: paths.userFile(appleID: appleID))
    }

    /// The user a user file holds, kept parsed while the file is the same.
    private func user(inFile path: String) throws -> UserAccount? {
        let user: UserAccount?? = try StampedFiles.shared.value(path) { try FileSystem.readJSON(path).map(UserAccount.init(stored:)) }
        return user ?? nil
    }

    /// Every user this device has seen, by Apple ID.
    package func allUsers() throws -> [UserAccount] {
        try StampedFiles.shared.list(paths.usersDirectory).filter { $0.hasSuffix(".json") }.compactMap {
            try StampedFiles.shared.readJSON(paths.usersDirectory + "/" + $0).map(UserAccount.init(stored:))
        }
    }

    /// Asked for every request `ck serve` answers: found through a map of record names to the
    /// files `user(appleID:)` reads, kept while the users directory is the same (a user written
    /// or added renames a file into it), so it costs two `lstat`s however many users the device
    /// has seen, and no path made (an Apple ID's file name is encoded, `@` and all).
    package func user(recordName: String) throws -> UserAccount? {
        let byRecordName = try StampedFiles.shared.value(paths.usersDirectory) {
            Dictionary(try allUsers().map { ($0.userRecordName, paths.userFile(appleID: $0.appleID)) }, uniquingKeysWith: { first, _ in first })
        }
        guard let file = byRecordName?[recordName], let u = try user(inFile: file) else { return nil }
        // A file replaced since the map was made: look at every user.
        return u.userRecordName == recordName ? u : try allUsers().first { $0.userRecordName == recordName }
    }

    /// Resolves who a command runs as: `actingAs` (an Apple ID that signed in on this device
    /// before) or the device's account. The device's account status binds both: a signed-out
    /// or restricted device is so for every user acting on it.
    package func caller(actingAs: String?, deviceID: String) throws -> Principal {
        let d = try device()
        if let a = actingAs {
            try Validation.appleID(a)
            guard let u = try user(appleID: a) else {
                var e = CloudKitError(.authenticationRequired, "user '\(a)' has never signed in on this device")
                e.nextStep = .signInUser(appleID: a)
                throw e
            }
            return Principal(status: d.status, user: u, deviceID: deviceID)
        }
        let u = try d.appleID.flatMap { try user(appleID: $0) }
        return Principal(status: u == nil && d.status == .available ? .noAccount : d.status, user: u, deviceID: deviceID)
    }

    var lockFile: String { paths.root + "/account.lock" }

    /// Runs `body` holding the account lock, after making the event log agree with the device.
    package func withLock<T>(_ body: () throws -> T) throws -> T {
        let lock = try FileLock(path: lockFile)
        defer { lock.unlock() }
        _ = try reconcile(repair: true)
        return try body()
    }

    /// Signs the device in, creating the iCloud user on first use with a user record name that
    /// is never reused for another Apple ID. Concurrent first sign-ins of one Apple ID agree.
    @discardableResult
    package func signIn(appleID: String, givenName: String?, familyName: String?, phone: String?) throws -> UserAccount {
        try Validation.appleID(appleID)
        if let p = phone { try Validation.phoneNumber(p) }
        for (n, v) in [("given name", givenName), ("family name", familyName)] {
            if let v = v, v.isEmpty || v.utf8.count > 255 || v.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
                throw CloudKitError.badRequest("\(n) must be 1…255 bytes of printable characters")
            }
        }
        return try withLock {
            var u: UserAccount
            if let existing = try user(appleID: appleID) {
                u = existing
            } else {
                u = try newUser(appleID: appleID)
            }
            if let g = givenName { u.givenName = g }
            if let f = familyName { u.familyName = f }
            if let p = phone { u.phoneNumber = p }
            let previous = try FileSystem.read(paths.userFile(appleID: appleID))
            // Another account signing in signs the one before out: its web sessions end with it.
            let replaced = try device().appleID.flatMap { try user(appleID: $0) }.flatMap { $0.appleID.lowercased() == appleID.lowercased() ? nil : $0 }
            if try user(appleID: appleID) != u { try FileSystem.writeJSON(paths.userFile(appleID: appleID), u.stored) }
            // Parental controls or device management restrict the device, whoever signs in:
            // the account is signed in, and stays restricted until the restriction is lifted.
            // The other statuses are the account's own state, which signing in ends.
            let status: AccountStatus = try device().status == .restricted ? .restricted : .available
            do { try setDevice(DeviceAccount(status: status, appleID: u.appleID)) } catch {
                // A sign-in that fails changes nothing, the user's file included.
                if let p = previous { try? FileSystem.writeAtomically(paths.userFile(appleID: appleID), p) } else { try? FileSystem.remove(paths.userFile(appleID: appleID)) }
                throw error
            }
            if let r = replaced { try WebSessionStore(paths: paths, clock: clock).revoke(userRecordName: r.userRecordName) }
            return u
        }
    }

    /// A user known to this data directory without signing the device in (an Apple ID signed in
    /// on `ck serve`'s sign-in page): made on first use, as `signIn` makes one; the device's
    /// account is left as it is.
    @discardableResult
    package func register(appleID: String) throws -> UserAccount {
        try Validation.appleID(appleID)
        return try withLock {
            if let existing = try user(appleID: appleID) { return existing }
            let u = try newUser(appleID: appleID)
            try FileSystem.writeJSON(paths.userFile(appleID: appleID), u.stored)
            return u
        }
    }

    /// A user of a remote, known here by the user record name the remote gave them (the owner
    /// of a zone shared with a clone's user, another participant of its share): made on first
    /// use, under `appleID` if it is free here, else under one made from the name; the device's
    /// account is left as it is.
    @discardableResult
    package func registerRemoteUser(userRecordName: String, appleID: String?) throws -> UserAccount {
        guard Identifiers.isUserRecordName(userRecordName) else {
            throw CloudKitError.badRequest("'\(Names.describe(userRecordName))' is not a user record name (an underscore and 32 hexadecimal digits)")
        }
        return try withLock {
            if let existing = try user(recordName: userRecordName) { return existing }
            var id = String(userRecordName.dropFirst()) + "@users.remote.invalid"
            if let a = appleID, (try? Validation.appleID(a)) != nil, try user(appleID: a) == nil { id = a }
            guard try user(appleID: id) == nil else {
                throw CloudKitError.badRequest("Apple ID '\(id)' is another user's here; user \(userRecordName) of the remote cannot be made")
            }
            let u = UserAccount(appleID: id, userRecordName: userRecordName)
            try FileSystem.writeJSON(paths.userFile(appleID: id), u.stored)
            return u
        }
    }

    /// A user not yet written, with a user record name no other user has.
    private func newUser(appleID: String) throws -> UserAccount {
        var name = Identifiers.newUserRecordName()
        let taken = Set(try allUsers().map(\.userRecordName))
        while taken.contains(name) { name = Identifiers.newUserRecordName() }
        return UserAccount(appleID: appleID, userRecordName: name)
    }

    /// Signs the device out, revoking every web session (`ck serve`) of the user who was signed in.
    package func signOut() throws {
        _ = try signOut(user: nil)
    }

    /// Signs a user out: `user` (an Apple ID that signed in here), or the device's account
    /// (nil). The user's web sessions end; the device is signed out only if it is that user's.
    /// The user signed out (nil: the device had none) and how many web sign-ins ended.
    package func signOut(user appleID: String?) throws -> (user: UserAccount?, webSessionsEnded: Int) {
        try withLock {
            let d = try device()
            let named = try (appleID ?? d.appleID).flatMap { try user(appleID: $0) }
            if appleID == nil || d.appleID?.lowercased() == appleID?.lowercased() {
                try setDevice(DeviceAccount(status: .noAccount, appleID: nil))
            }
            guard let u = named else { return (nil, 0) }
            return (u, try WebSessionStore(paths: paths, clock: clock).revoke(userRecordName: u.userRecordName))
        }
    }

    /// `noAccount` is the account gone from the device: a sign-out (its user no longer shown,
    /// its web sessions ended); `available` again needs a sign-in.
    package func setStatus(_ status: AccountStatus) throws {
        try withLock {
            var d = try device()
            if status == .noAccount {
                let was = try d.appleID.flatMap { try user(appleID: $0) }
                try setDevice(DeviceAccount(status: .noAccount, appleID: nil))
                if let u = was { try WebSessionStore(paths: paths, clock: clock).revoke(userRecordName: u.userRecordName) }
                return
            }
            if status == .available && d.appleID == nil {
                var e = CloudKitError.badRequest("cannot set status 'available' with no account signed in")
                e.nextStep = .signIn
                throw e
            }
            d.status = status
            try setDevice(d)
        }
    }

    /// Writes the device's account, then its event. A crash between the two is put right by
    /// `reconcile` the next time the lock is taken; a failure writing the event (a full disk)
    /// puts the old account back — by a rename, which needs no space — so nothing changed.
    private func setDevice(_ d: DeviceAccount) throws {
        let before = try device()
        guard before != d else { return }
        var o: [String: JSONValue] = ["schemaVersion": .int(FileFormat.schemaVersion), "status": .string(d.status.rawValue)]
        if let a = d.appleID { o["appleID"] = .string(a) }
        let root = try Directory.open(paths.root, create: true)!
        let undo = ".device-undo.json"
        try root.remove(undo)
        let had = root.kind(of: "device.json") != nil
        if had { try root.link("device.json", as: undo) }
        do { try root.writeJSON("device.json", .object(o)) } catch {
            try? root.remove(undo)
            throw error
        }
        do { try appendEvent(d) } catch {
            if had { try? root.rename(undo, to: "device.json") } else { try? root.remove("device.json") }
            throw error
        }
        try? root.remove(undo)
    }

    var eventsFile: String { paths.root + "/account-events.ndjson" }

    /// The event log: each whole line is an event, appended with the device's change.
    private var eventLog: AppendLog {
        AppendLog(directory: paths.root, name: "account-events.ndjson", commit: .wholeLines, noun: "account event log")
    }

    /// The event log's committed part: whole lines (a torn last line is what an interrupted
    /// append left; it is not an event), and the numbers of those that are no event.
    private func readEvents() throws -> (events: [JSONValue], damaged: [Int]) {
        var out: [JSONValue] = []
        var damaged: [Int] = []
        var line = 0
        try eventLog.forEachEntry { bytes, _ in
            line += 1
            if let e = try? JSONParser.parse(Array(bytes)), e["seq"]?.int64Value != nil { out.append(e) } else { damaged.append(line) }
            return true
        }
        return (out, damaged)
    }

    private func appendEvent(_ d: DeviceAccount) throws {
        let events = try readEvents().events
        let seq = (events.last?["seq"]?.int64Value ?? 0) + 1
        var o: [String: JSONValue] = [
            "seq": .int(seq), "timestamp": .int(clock.now()), "type": "accountChanged", "status": .string(d.status.rawValue),
        ]
        if let a = d.appleID, let u = try user(appleID: a) { o["userRecordName"] = .string(u.userRecordName); o["appleID"] = .string(a) }
        // A torn line an interrupted append left is cut first.
        try eventLog.append([Array(JSONWriter.compact(.object(o)).utf8)])
    }

    /// Whether the last event describes the device as it is; if not (a crash came between the
    /// two writes), appends the missing event. Returns what it found.
    private func reconcile(repair: Bool) throws -> String? {
        let d = try device()
        let last = try readEvents().events.last
        let lastState = last.map { DeviceAccount(status: AccountStatus(rawValue: $0["status"]?.stringValue ?? "") ?? .noAccount, appleID: $0["appleID"]?.stringValue) }
            ?? DeviceAccount(status: .noAccount, appleID: nil)
        guard lastState != d else { return nil }
        if repair { try appendEvent(d) }
        return "the device's account changed without an account-changed event (an interrupted sign-in, sign-out or status change)"
    }

    /// `ck fsck`: the event log's torn tail and damaged lines, and its last event.
    package func check(repair: Bool) throws -> [String] {
        guard try FileSystem.exists(paths.deviceFile) || FileSystem.exists(eventsFile) else { return [] }
        let lock = repair ? try FileLock(path: lockFile) : try FileLock.acquireExisting(lockFile)
        defer { lock?.unlock() }
        var found = try eventLog.cutTail(repair: repair).map(\.problem)
        let (events, damaged) = try readEvents()
        if !damaged.isEmpty {
            found.append("account event log has damaged lines (\(damaged.map(String.init).joined(separator: ", ")))")
            if repair { try eventLog.rewrite(events.map { Array(JSONWriter.compact($0).utf8) }) }
        }
        if let r = try reconcile(repair: repair) { found.append(r) }
        return found
    }

    /// The account-changed events, oldest first — after appending the one a crash kept from
    /// being written, if the device's account changed without it.
    package func events() throws -> [JSONValue] {
        let current = try readEvents().events
        let d = try device()
        let last = current.last.map { DeviceAccount(status: AccountStatus(rawValue: $0["status"]?.stringValue ?? "") ?? .noAccount, appleID: $0["appleID"]?.stringValue) }
        if last ?? DeviceAccount(status: .noAccount, appleID: nil) == d { return current }
        return try withLock { try readEvents().events }
    }
}
