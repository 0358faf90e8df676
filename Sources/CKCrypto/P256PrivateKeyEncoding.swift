import Foundation

/// A private key's files: read from the PEM openssl writes (SEC1 or PKCS#8), written as SEC1.
/// Every refusal is a `P256Error` naming what the input is and what to do instead.
extension P256PrivateKey {
    /// PEM as `openssl ecparam -name prime256v1 -genkey -noout` writes it (SEC 1 "EC PRIVATE KEY";
    /// an "EC PARAMETERS" block before it is skipped) or unencrypted PKCS#8 ("PRIVATE KEY", as
    /// `openssl genpkey` and `openssl pkey` write it). An encrypted key, a public key, a key of
    /// another curve or algorithm is refused with what it is and what to do.
    public init(pem: String) throws {
        if pem.contains("Proc-Type: 4,ENCRYPTED") {
            throw P256Error("the private key is encrypted with a passphrase; write it out unencrypted with `openssl ec -in KEY.pem -out KEY-plain.pem`")
        }
        let blocks: [PEM.Block]
        do { blocks = try PEM.blocks(pem) } catch let failure as PEM.Failure { throw P256Error("not a PEM private key: \(failure.message)") }
        if let block = blocks.first(where: { $0.label == "EC PRIVATE KEY" }) {
            try self.init(sec1: block.der)
        } else if let block = blocks.first(where: { $0.label == "PRIVATE KEY" }) {
            try self.init(pkcs8: block.der)
        } else if let block = blocks.first {
            switch block.label {
            case "ENCRYPTED PRIVATE KEY":
                throw P256Error("the private key is encrypted (PKCS#8); write it out unencrypted with `openssl ec -in KEY.pem -out KEY-plain.pem`")
            case "RSA PRIVATE KEY", "DSA PRIVATE KEY", "OPENSSH PRIVATE KEY":
                throw P256Error("this is not a P-256 key but an \(block.label) block; \(P256PrivateKey.howToMake)")
            case "PUBLIC KEY", "EC PUBLIC KEY", "RSA PUBLIC KEY":
                throw P256Error("this is a public key (\(block.label)); give the private key it was made from")
            default:
                throw P256Error("no EC PRIVATE KEY or PRIVATE KEY block (found \(blocks.map(\.label).joined(separator: ", ")))")
            }
        } else {
            throw P256Error("not a PEM private key: no '-----BEGIN EC PRIVATE KEY-----' line")
        }
    }

    /// A DER ECPrivateKey (SEC 1 C.4, RFC 5915): version 1, d in an OCTET STRING, and optionally
    /// the curve (which must be prime256v1) and the public key (which must be d·G).
    public init(sec1 der: [UInt8]) throws {
        try self.init(sec1: der[...], curveKnown: false)
    }

    /// A DER PKCS#8 PrivateKeyInfo (RFC 5208, 5958) of algorithm id-ecPublicKey with the named
    /// curve prime256v1, holding an ECPrivateKey.
    public init(pkcs8 der: [UInt8]) throws {
        let inner: ArraySlice<UInt8>
        do {
            var outer = DERReader(der)
            var info = DERReader(try outer.read(.sequence))
            try outer.expectEnd("PrivateKeyInfo")
            let version = try info.readUnsignedInteger()
            guard version.elementsEqual([0]) || version.elementsEqual([1]) else {
                throw P256Error("the PKCS#8 key has version \(Hex.string(version)), not 0 or 1")
            }
            var algorithm = DERReader(try info.read(.sequence))
            try P256PrivateKey.checkCurve(&algorithm)
            inner = try info.read(.octetString)
            if info.nextTag == DERReader.Tag.context0.rawValue { _ = try info.read(.context0) }  // attributes
            try info.expectEnd("private key")
        } catch let failure as DERReader.Failure {
            throw P256Error("not a DER PKCS#8 private key: \(failure.message)")
        }
        try self.init(sec1: inner, curveKnown: true)
    }

    private init(sec1 der: ArraySlice<UInt8>, curveKnown: Bool) throws {
        let d: UInt256
        var publicBits: ArraySlice<UInt8>?
        do {
            var outer = DERReader(der)
            var key = DERReader(try outer.read(.sequence))
            try outer.expectEnd("ECPrivateKey")
            let version = try key.readUnsignedInteger()
            guard version.elementsEqual([1]) else {
                throw P256Error("the EC private key has version \(Hex.string(version)), not 1")
            }
            let octets = try key.read(.octetString)
            // The curve first: a key of another curve is refused by its name, not its length.
            if key.nextTag == DERReader.Tag.context0.rawValue {
                var parameters = DERReader(try key.read(.context0))
                try P256PrivateKey.checkCurveName(&parameters)
                try parameters.expectEnd("curve name")
            } else if !curveKnown {
                throw P256Error("the EC private key names no curve; \(P256PrivateKey.howToMake)")
            }
            guard let value = UInt256(bigEndian: octets) else {
                throw P256Error("the private key is \(octets.count) bytes; a P-256 key is 32")
            }
            d = value
            if key.nextTag == DERReader.Tag.context1.rawValue {
                var wrapped = DERReader(try key.read(.context1))
                publicBits = try wrapped.read(.bitString)
                try wrapped.expectEnd("public key")
            }
            try key.expectEnd("EC private key")
        } catch let failure as DERReader.Failure {
            throw P256Error("not a DER EC private key: \(failure.message)")
        }
        try self.init(scalar: d)
        if let bits = publicBits {
            guard bits.first == 0, let written = try? P256PublicKey(x963: Array(bits.dropFirst())) else {
                throw P256Error("the public key written in the private key is not a P-256 point")
            }
            guard written == publicKey else {
                throw P256Error("the public key written in the private key is not the private key's (the file is damaged)")
            }
        }
    }

    /// An AlgorithmIdentifier: id-ecPublicKey with the named curve prime256v1.
    private static func checkCurve(_ algorithm: inout DERReader) throws {
        let oid = try algorithm.read(.objectIdentifier)
        guard oid.elementsEqual(P256PublicKey.idECPublicKey) else {
            let name = P256PublicKey.describeOID(oid)
            throw P256Error("not an elliptic-curve key: its algorithm is \(name), not id-ecPublicKey (1.2.840.10045.2.1); \(howToMake)")
        }
        try checkCurveName(&algorithm)
        try algorithm.expectEnd("curve name")
    }

    /// A curve's name, which must be prime256v1.
    private static func checkCurveName(_ reader: inout DERReader) throws {
        guard reader.nextTag == DERReader.Tag.objectIdentifier.rawValue else {
            throw P256Error("the key's curve is not given by name (explicit parameters are not supported; make the key with -name prime256v1)")
        }
        let curve = try reader.read(.objectIdentifier)
        guard curve.elementsEqual(P256PublicKey.prime256v1) else {
            throw P256Error("the key's curve is \(P256PublicKey.describeOID(curve)), not P-256 (prime256v1, 1.2.840.10045.3.1.7); \(howToMake)")
        }
    }

    static let howToMake = "CloudKit's server-to-server keys are P-256: make one with `openssl ecparam -name prime256v1 -genkey -noout -out KEY.pem`"

    /// The DER ECPrivateKey: version 1, d in 32 bytes, the curve prime256v1 and the public key.
    public var sec1: [UInt8] {
        DERWriter.sequence(
            DERWriter.unsignedInteger([1]),
            DERWriter.element(.octetString, scalar.bigEndianBytes),
            DERWriter.element(.context0, DERWriter.element(.objectIdentifier, P256PublicKey.prime256v1)),
            DERWriter.element(.context1, DERWriter.element(.bitString, [0] + publicKey.x963)))
    }

    /// The SEC 1 PEM "EC PRIVATE KEY", byte for byte what openssl writes for this key
    /// (`openssl ec -in KEY.pem` reads it and prints it back unchanged).
    public var pem: String { PEM.armor(label: "EC PRIVATE KEY", der: sec1) }
}
