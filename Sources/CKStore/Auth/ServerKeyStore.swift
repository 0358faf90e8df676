import CKCrypto
import CKJSON
import CKModel
import Foundation

/// The server-to-server keys of one container environment, as the CloudKit Console keeps them:
/// `containers/<c>/<environment>/server-keys.json` — `{schemaVersion, keys: [{keyID, publicKey,
/// created, userRecordName?}]}`, oldest first; `publicKey` is the P-256 public key in PEM,
/// re-encoded from the point so every key reads the same way whatever the file it came from
/// held; `userRecordName` the user who registered the key, whom its requests act as (keys
/// registered by an older ck have none).
package struct ServerKeyStore {
    package let paths: DataPaths
    package let container: String
    package let environment: Environment

    package struct Key {
        package var keyID: String
        package var publicKey: P256PublicKey
        package var created: Int64
        package var userRecordName: String?

        package var pem: String { ServerKeyStore.pem(publicKey) }

        package var json: JSONValue {
            var o: [String: JSONValue] = ["keyID": .string(keyID), "publicKey": .string(pem), "created": .int(created)]
            if let u = userRecordName { o["userRecordName"] = .string(u) }
            return .object(o)
        }

        package init(keyID: String, publicKey: P256PublicKey, created: Int64, userRecordName: String?) {
            self.keyID = keyID
            self.publicKey = publicKey
            self.created = created
            self.userRecordName = userRecordName
        }
    }

    package var file: String { paths.serverKeysFile(container, environment) }

    /// A key ID goes in a header (`X-Apple-CloudKit-Request-KeyID`): 1…128 letters, digits,
    /// `.`, `-` or `_` (the Console's are 64 hex digits).
    package static func validateKeyID(_ s: String) throws {
        guard !s.isEmpty, s.utf8.count <= 128,
              s.utf8.allSatisfy({ (48...57).contains($0) || (65...90).contains($0) || (97...122).contains($0) || $0 == 0x2E || $0 == 0x2D || $0 == 0x5F })
        else {
            throw CloudKitError.badRequest("key ID '\(Names.describe(s))' must be 1…128 letters, digits, '.', '-' or '_' (the CloudKit Console's are 64 hex digits)")
        }
    }

    package func list() throws -> [Key] { try parse(try StampedFiles.shared.readJSON(file)) }

    private func parse(_ stored: JSONValue?) throws -> [Key] {
        guard let j = stored else { return [] }
        guard let items = j["keys"]?.arrayValue else { throw CloudKitError.internalError("malformed \(file): no keys list").with(.repairDataDirectory) }
        return try items.map { k in
            guard let id = k["keyID"]?.stringValue, let pem = k["publicKey"]?.stringValue, let created = k["created"]?.int64Value,
                  let key = try? P256PublicKey(pem: pem) else {
                throw CloudKitError.internalError("malformed \(file): a key without keyID, a P-256 publicKey or created").with(.repairDataDirectory)
            }
            return Key(keyID: id, publicKey: key, created: created, userRecordName: k["userRecordName"]?.stringValue)
        }
    }

    package func key(_ keyID: String) throws -> Key? { try list().first { $0.keyID == keyID } }

    /// Changes the list under the data directory's auth lock; a change that throws writes nothing.
    package func update<T>(_ change: (inout [Key]) throws -> T) throws -> T {
        try LockedDocument(file, lock: paths.authLock, decode: parse, encode: { keys in
            .object(["schemaVersion": .int(FileFormat.schemaVersion), "keys": .array(keys.map(\.json))])
        }).update(change)
    }

    /// SubjectPublicKeyInfo of an uncompressed P-256 point, up to the point: SEQUENCE {
    /// SEQUENCE { id-ecPublicKey, prime256v1 }, BIT STRING (0 unused bits) }.
    private static let spkiPrefix: [UInt8] = [0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01,
                                              0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07, 0x03, 0x42, 0x00]

    /// The key as `openssl ec -pubout` writes it.
    package static func pem(_ key: P256PublicKey) -> String {
        let b64 = Array(Data(spkiPrefix + key.x963).base64EncodedString())
        let lines = stride(from: 0, to: b64.count, by: 64).map { String(b64[$0..<min($0 + 64, b64.count)]) }
        return "-----BEGIN PUBLIC KEY-----\n" + lines.joined(separator: "\n") + "\n-----END PUBLIC KEY-----\n"
    }

    package init(paths: DataPaths, container: String, environment: Environment) {
        self.paths = paths
        self.container = container
        self.environment = environment
    }
}
