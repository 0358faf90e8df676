/// A strict reader of the little DER (X.690 distinguished encoding) that keys and ECDSA signatures
/// use: one element at a time, of an expected tag, each length checked against the bytes that
/// remain. It refuses what DER forbids — indefinite or non-minimal lengths, multi-byte tags — and
/// never reads past its input, so any bytes at all give either the elements or a `Failure`.
struct DERReader {
    struct Failure: Error, CustomStringConvertible {
        let message: String
        var description: String { message }
    }

    enum Tag: UInt8, CustomStringConvertible {
        case integer = 0x02
        case bitString = 0x03
        case octetString = 0x04
        case null = 0x05
        case objectIdentifier = 0x06
        case sequence = 0x30
        /// `[0]` and `[1]`, explicit (constructed): SEC1's optional curve and public key, and
        /// PKCS#8's attributes.
        case context0 = 0xa0
        case context1 = 0xa1

        var description: String {
            switch self {
            case .integer: return "INTEGER"
            case .bitString: return "BIT STRING"
            case .octetString: return "OCTET STRING"
            case .null: return "NULL"
            case .objectIdentifier: return "OBJECT IDENTIFIER"
            case .sequence: return "SEQUENCE"
            case .context0: return "[0]"
            case .context1: return "[1]"
            }
        }
    }

    private let bytes: ArraySlice<UInt8>
    private var position: Int

    init(_ bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
        position = bytes.startIndex
    }

    init(_ bytes: [UInt8]) { self.init(bytes[...]) }

    var isAtEnd: Bool { position == bytes.endIndex }

    /// The tag of the next element, if there is one.
    var nextTag: UInt8? { isAtEnd ? nil : bytes[position] }

    /// The contents of the next element, which must have this tag.
    mutating func read(_ tag: Tag) throws -> ArraySlice<UInt8> {
        guard let found = nextTag else { throw Failure(message: "expected \(tag), found the end of the data") }
        guard found == tag.rawValue else {
            throw Failure(message: "expected \(tag) (tag 0x\(hex(tag.rawValue))), found tag 0x\(hex(found))")
        }
        var i = position + 1
        guard i < bytes.endIndex else { throw Failure(message: "\(tag) without a length") }
        let first = bytes[i]
        i += 1
        var length = 0
        if first < 0x80 {
            length = Int(first)
        } else {
            // Long form: 0x80 | count, then count bytes. DER uses it only for lengths of 128 and
            // more, with no leading zero; 0x80 alone (indefinite) is BER only. Four bytes are
            // more than any key or signature needs.
            let count = Int(first & 0x7f)
            guard count >= 1, count <= 4 else {
                throw Failure(message: count == 0 ? "\(tag) with an indefinite length" : "\(tag) with a \(count)-byte length")
            }
            guard bytes.endIndex - i >= count else { throw Failure(message: "\(tag) with a truncated length") }
            guard bytes[i] != 0 else { throw Failure(message: "\(tag) with a length that is not minimal") }
            for _ in 0..<count { length = length << 8 | Int(bytes[i]); i += 1 }
            guard length >= 0x80 else { throw Failure(message: "\(tag) with a length that is not minimal") }
        }
        guard length <= bytes.endIndex - i else {
            throw Failure(message: "\(tag) of \(length) bytes, but only \(bytes.endIndex - i) remain")
        }
        position = i + length
        return bytes[i..<(i + length)]
    }

    /// A non-negative INTEGER's magnitude, without the leading zero byte DER puts before a high
    /// bit. Refuses an empty integer, a negative one, and a non-minimal one (a leading zero not
    /// needed).
    mutating func readUnsignedInteger() throws -> ArraySlice<UInt8> {
        let contents = try read(.integer)
        guard let first = contents.first else { throw Failure(message: "an INTEGER with no bytes") }
        guard first & 0x80 == 0 else { throw Failure(message: "a negative INTEGER") }
        if first == 0, contents.count > 1 {
            guard contents[contents.startIndex + 1] & 0x80 != 0 else {
                throw Failure(message: "an INTEGER with a leading zero that is not needed")
            }
            return contents.dropFirst()
        }
        return contents
    }

    /// The next element must be the last.
    func expectEnd(_ what: String) throws {
        let extra = bytes.endIndex - position
        guard extra == 0 else { throw Failure(message: "\(extra) byte\(extra == 1 ? "" : "s") after the \(what)") }
    }

    private func hex(_ b: UInt8) -> String {
        let digits = Array("0123456789abcdef")
        return String([digits[Int(b >> 4)], digits[Int(b & 15)]])
    }
}
