import CKCrypto
import CKJSON
import CKModel
import CKStore

/// Server-to-server keys, as the CloudKit Console registers them: the public half of a P-256
/// key pair whose private half signs requests (`X-Apple-CloudKit-Request-SignatureV1`). ck's own
/// operations, standing for the Console.
extension CloudKitAPI {
    /// The most text a PEM public key can sensibly be (a P-256 one is under 200 bytes; a file
    /// with the curve's parameters and comments a little more).
    static let maxPublicKeyPEM = 64 * 1024

    func serverKeys(_ container: String, _ environment: Environment) throws -> ServerKeyStore {
        try Names.validateContainerID(container)
        return ServerKeyStore(paths: store.paths, container: container, environment: environment)
    }

    /// Registers a key for the caller's user (the device's account, or `--as`), whom requests
    /// signed with it act as — in the public database, as Apple's keys act as the developer who
    /// made them: `{keyID, containerIdentifier, environment, created, publicKey, userRecordName,
    /// appleID}` (the key in PEM, re-encoded). EXISTS when the key ID is taken; BAD_REQUEST,
    /// saying what is wrong, for text that is not a P-256 public key (a private key, another
    /// curve, RSA, garbage); AUTHENTICATION_REQUIRED when there is no user to register it.
    public func addServerKey(keyID: String, publicKeyPEM: String, container: String, environment: Environment, as caller: Caller) throws -> DocumentBody {
        let keys = try serverKeys(container, environment)
        try ServerKeyStore.validateKeyID(keyID)
        guard publicKeyPEM.utf8.count <= Self.maxPublicKeyPEM else {
            throw CloudKitError.badRequest("the public key is \(publicKeyPEM.utf8.count) bytes; a PEM P-256 public key is a few hundred (limit \(Self.maxPublicKeyPEM))")
        }
        let key: P256PublicKey
        do { key = try P256PublicKey(pem: publicKeyPEM) } catch let e as P256Error {
            throw CloudKitError.badRequest("not a P-256 public key: \(e)")
        }
        let owner = try principal(caller).requireUser(for: "registering a server-to-server key (it acts as the user who registers it)")
        let made: ServerKeyStore.Key = try keys.update { list in
            if list.contains(where: { $0.keyID == keyID }) { throw Self.keyExists(keyID, container, environment) }
            let k = ServerKeyStore.Key(keyID: keyID, publicKey: key, created: clock.now(), userRecordName: owner.userRecordName)
            list.append(k)
            return k
        }
        return DocumentBody(serverKeyBody(made, container, environment))
    }

    static func keyExists(_ keyID: String, _ container: String, _ environment: Environment) -> CloudKitError {
        CloudKitError(.exists, "a server-to-server key '\(keyID)' is already registered in container \(container) (\(environment.rawValue)); delete it first to replace it")
    }

    /// `{keys: [...]}`, each as `addServerKey` answered it, oldest first (ties by key ID). A key
    /// an older ck registered has no user: requests signed with it act as nobody.
    public func listServerKeys(container: String, environment: Environment) throws -> DocumentBody {
        let list = try serverKeys(container, environment).list().sorted { ($0.created, $0.keyID) < ($1.created, $1.keyID) }
        return DocumentBody(["keys": .array(list.map { .object(serverKeyBody($0, container, environment)) })], listKey: "keys")
    }

    /// `{keyID, deleted: true}`; NOT_FOUND for a key ID not registered here.
    public func deleteServerKey(keyID: String, container: String, environment: Environment) throws -> DocumentBody {
        let keys = try serverKeys(container, environment)
        try ServerKeyStore.validateKeyID(keyID)
        func missing() -> CloudKitError {
            CloudKitError(.notFound, "no server-to-server key '\(keyID)' in container \(container) (\(environment.rawValue))")
        }
        guard try keys.key(keyID) != nil else { throw missing() }
        try keys.update { list in
            guard let i = list.firstIndex(where: { $0.keyID == keyID }) else { throw missing() }
            list.remove(at: i)
        }
        return DocumentBody(["keyID": .string(keyID), "deleted": true])
    }

    private func serverKeyBody(_ k: ServerKeyStore.Key, _ container: String, _ environment: Environment) -> [String: JSONValue] {
        var o: [String: JSONValue] = ["keyID": .string(k.keyID), "containerIdentifier": .string(container), "environment": .string(environment.rawValue),
                                      "created": .int(k.created), "publicKey": .string(k.pem)]
        if let u = k.userRecordName {
            o["userRecordName"] = .string(u)
            if let a = try? store.accounts.user(recordName: u)?.appleID { o["appleID"] = .string(a) }
        }
        return o
    }
}
