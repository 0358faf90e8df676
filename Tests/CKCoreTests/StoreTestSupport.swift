import CKJSON
import CKModel
import Foundation
@testable import CKCore
@testable import CKStore

/// A store in a fresh temporary directory, with alice signed in.
final class TempStore {
    let root: String
    let store: CloudKitStore
    /// The API over this store, on its clock: what the tests of behaviour call (`client`).
    let api: CloudKitAPI
    var now: Int64 = 1_700_000_000_000

    init(signIn: Bool = true) {
        root = NSTemporaryDirectory() + "ck-core-" + UUID().uuidString
        let box = ClockBox()
        store = CloudKitStore(root: root, clock: Clock { box.now })
        api = CloudKitAPI(dataDirectory: root, clock: Clock { box.now })
        self.box = box
        if signIn { try! store.accounts.signIn(appleID: "alice@example.com", givenName: "Alice", familyName: nil, phone: nil) }
    }

    private let box: ClockBox
    final class ClockBox: @unchecked Sendable { var now: Int64 = 1_700_000_000_000 }
    func advance(_ ms: Int64) { box.now += ms }

    deinit { try? FileManager.default.removeItem(atPath: root) }

    /// A database as the store opens it, past the API: for the tests of the store's mechanics
    /// (commits, crashes, fsck, bulk loads) and the helpers below, the only place the tests
    /// name how a `Database` is made. The tests of behaviour go through `client`.
    func db(_ scope: DatabaseScope = .private, as user: String? = nil, env: CKModel.Environment = .development, device: String = "default") throws -> Database {
        try store.database(DatabaseAddress(container: "iCloud.com.example.test", environment: env, scope: scope), actingAs: user, deviceID: device)
    }

    /// A database's directory, for the tests of where its files are (tags).
    func directory(_ scope: DatabaseScope = .private, as user: String? = nil) throws -> String { try db(scope, as: user).directory }

    /// A zone's files, for the tests of how the store keeps them (its history's files, a
    /// record's file, the applied cursor, the tombstones).
    func zoneStore(_ name: String, _ scope: DatabaseScope = .private, as user: String? = nil) throws -> ZoneStore {
        try db(scope, as: user).zone(name)
    }

    /// A change token of the private database at any position, signed with the store's own
    /// secret: what a store restored from an older copy meets, for the tests of tokens the
    /// server never issued for this history. `zone` nil: a token of the database's feed.
    func token(zone: String?, seq: Int64, origin: Int64? = nil) throws -> String {
        let db = try db()
        let secret = try db.tokens.secret.getOrCreate()
        guard let name = zone else { return ChangeToken(kind: .database, scopeKey: db.tokens.databaseScopeKey, seq: seq).encode(secret: secret) }
        let z = try db.zone(name)
        return ChangeToken(kind: .zone, scopeKey: db.tokens.zoneScopeKey(z), seq: seq, epoch: try z.history.epoch(), origin: origin).encode(secret: secret)
    }

    /// The latest entry of the private database's history (its zones made, deleted, purged).
    func databaseHead() throws -> Int64 { try db().databaseHistory.head() }

    /// All files under the root with their bytes, to prove nothing changed.
    func snapshot() -> [String: Data] {
        var out: [String: Data] = [:]
        let fm = FileManager.default
        guard let e = fm.enumerator(atPath: root) else { return out }
        while let rel = e.nextObject() as? String {
            out[rel] = fm.contents(atPath: root + "/" + rel) ?? Data("dir".utf8)
        }
        return out
    }
}

func field(_ v: JSONValue) -> RecordField? { try! RecordField.parse(name: "f", json: ["value": v]) }

func op(_ type: RecordOperationType, _ name: String?, type recordType: String? = "Item", tag: String? = nil,
        _ fields: [String: JSONValue] = [:]) -> RecordOperation {
    RecordOperation(type: type, recordName: name, recordType: recordType, recordChangeTag: tag, fields: fields.mapValues { field($0) })
}

extension OperationResult {
    var record: Record? { if case .saved(let r) = self { return r }; return nil }
}
