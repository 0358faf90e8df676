import CKCrypto
import CKJSON

/// Turns any name into one safe path component: bytes outside `[A-Za-z0-9_-]` (and a leading
/// `.`) are percent-encoded, and a name whose encoding is too long for a file name is cut and
/// suffixed with its SHA-256, so no name can address a path outside its directory.
public enum PathEncoding {
    public static let maxComponent = 200

    /// `limit`: the longest encoding kept whole (200 leaves room for a suffix such as `.json`;
    /// a container directory, which has none, keeps up to 255 — every container ID whole).
    public static func component(_ name: String, limit: Int = maxComponent) -> String {
        // The commonest case, asked for every path a request builds: nothing to encode.
        if name.utf8.count <= limit, name.utf8.first != 0x2E, !name.isEmpty, (name.utf8.withContiguousStorageIfAvailable { $0.allSatisfy(isSafe) } ?? name.utf8.allSatisfy(isSafe)) { return name }
        var out = [UInt8]()
        for (i, b) in name.utf8.enumerated() {
            let safe = (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || (b >= 0x30 && b <= 0x39)
                || b == 0x2D || b == 0x5F || (b == 0x2E && i > 0)
            if safe { out.append(b) } else {
                out.append(0x25)
                let hex = Array("0123456789ABCDEF".utf8)
                out.append(hex[Int(b >> 4)]); out.append(hex[Int(b & 15)])
            }
        }
        if out.isEmpty { return "%" }
        if out.count > limit {
            return String(decoding: out.prefix(120), as: UTF8.self) + "~" + SHA256.hex(Array(name.utf8))
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static func isSafe(_ b: UInt8) -> Bool {
        (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || (b >= 0x30 && b <= 0x39) || b == 0x2D || b == 0x5F || b == 0x2E
    }

    /// The name an encoded component stands for; nil for a hashed (cut) one.
    public static func decodeSimple(_ component: String) -> String? {
        guard !component.contains("~") else { return nil }
        var out = [UInt8]()
        var it = Array(component.utf8)[...]
        while let b = it.popFirst() {
            if b == 0x25 {
                guard it.count >= 2, let v = UInt8(String(decoding: it.prefix(2), as: UTF8.self), radix: 16) else { return nil }
                out.append(v)
                it = it.dropFirst(2)
            } else {
                out.append(b)
            }
        }
        return UTF8Text.string(out)
    }

    /// A two-hex-digit shard for a name (FNV-1a), so no directory holds millions of files.
    public static func shard(_ name: String) -> String {
        var h: UInt32 = 2166136261
        for b in name.utf8 { h = (h ^ UInt32(b)) &* 16777619 }
        return shardNames[Int((h ^ (h >> 8) ^ (h >> 16) ^ (h >> 24)) & 0xff)]
    }

    /// The 256 shard names, made once: every record path a request builds needs one.
    private static let shardNames = (0..<256).map { Hex.string([UInt8($0)]) }
}
