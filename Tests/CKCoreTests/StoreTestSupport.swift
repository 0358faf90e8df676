import CKJSON
import CKModel
import Foundation
@testable import CKCore

/// A store in a fresh temporary directory, with alice signed in.
final class TempStore {
    let root: String
    let store: CloudKitStore
    var now: Int64 = 1_700_000_000_000

    init(signIn: Bool = true) {
        root = NSTemporaryDirectory() + "ck-core-" + UUID().uuidString
        let box = ClockBox()
        store = CloudKitStore(root: root, clock: Clock { box.now })
        self.box = box
        if signIn { try! store.accounts.signIn(appleID: "alice@example.com", givenName: "Alice", familyName: nil, phone: nil) }
    }

    private let box: ClockBox
    final class ClockBox: @unchecked Sendable { var now: Int64 = 1_700_000_000_000 }
    func advance(_ ms: Int64) { box.now += ms }

    deinit { try? FileManager.default.removeItem(atPath: root) }

    func db(_ scope: DatabaseScope = .private, as user: String? = nil, env: CKModel.Environment = .development) throws -> Database {
        try store.database(DatabaseAddress(container: "iCloud.com.example.test", environment: env, scope: scope), actingAs: user)
    }

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

extension Database {
    /// Adds development indexes as `ck schema index add` does — by default the
    /// `"___recordID" REFERENCE QUERYABLE` a query without a filter needs, in development as
    /// in production — and reads the schema afresh.
    func addIndexes(_ type: String, _ field: String = "___recordID", _ indexes: [IndexNeed.Index] = [.queryable]) throws {
        _ = try schemaAdmin.addIndexes(type, field: field, indexes)
        forgetCachedSchema()
    }
}
