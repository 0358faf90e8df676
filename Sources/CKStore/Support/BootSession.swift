import CKModel
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The machine's current boot. What a process writes to a file is seen by every other process
/// at once, synced or not, until the machine stops: only a restart (a crash, a power cut) can
/// lose unsynced writes. A mark written with the boot it was made in therefore tells a later
/// reader whether writes made before it could have been lost since.
enum BootSession {
    /// nil where the system does not say; then nothing may rely on unsynced writes.
    package static let id: String? = {
        #if os(Linux)
        guard let bytes = try? FileSystem.read("/proc/sys/kernel/random/boot_id") else { return nil }
        let s = String(decoding: bytes, as: UTF8.self).filter { !$0.isWhitespace }
        #elseif canImport(Darwin)
        var size = 0
        guard sysctlbyname("kern.bootsessionuuid", nil, &size, nil, 0) == 0, size > 1 else { return nil }
        var buffer = [CChar](repeating: 0, count: size)
        guard sysctlbyname("kern.bootsessionuuid", &buffer, &size, nil, 0) == 0 else { return nil }
        let s = String(cString: buffer)
        #else
        let s = ""
        #endif
        return s.count >= 16 && s.utf8.allSatisfy({ $0 == UInt8(ascii: "-") || ($0 >= 0x30 && $0 <= 0x39) || ($0 | 0x20 >= 0x61 && $0 | 0x20 <= 0x66) }) ? s : nil
    }()
}
