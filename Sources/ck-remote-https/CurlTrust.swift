#if canImport(Glibc)
import Glibc
#endif

/// Which certificates libcurl trusts, for URLSession on Linux, which offers no setting for it:
/// it never reads SSL_CERT_FILE (libcurl sets its compiled-in CA bundle, which OpenSSL then
/// uses instead of the environment's), and swift-corelibs-foundation reads its own variable
/// for a CA bundle on Android only. So this executable defines libcurl's `curl_easy_init`: the
/// definition takes the place of libcurl's for every caller, URLSession included, and gives
/// every handle `CURLOPT_CAINFO` (the chosen file) with `CURLOPT_CAPATH` cleared before
/// URLSession configures it (it then sees a CA file set and leaves it). Verification itself is
/// never touched. Should either call fail, the handle trusts the system's store: a test CA is
/// then refused, never a certificate accepted that should not be.
enum CurlTrust {
    /// libcurl's option numbers, fixed by its ABI (curl.h: CURLOPTTYPE_STRINGPOINT + 65, + 97).
    static let caInfo: Int32 = 10065
    static let caPath: Int32 = 10097

    /// The file every handle made from now on trusts alone (nil: the system's store). A copy
    /// for the life of the process.
    nonisolated(unsafe) static var trustedFile: UnsafeMutablePointer<CChar>?

    /// Makes every libcurl handle trust `path` alone; false where libcurl cannot be reached
    /// this way (not Linux).
    static func trustOnly(_ path: String) -> Bool {
        #if os(Linux)
        free(trustedFile)
        trustedFile = strdup(path)
        return trustedFile != nil
        #else
        return false
        #endif
    }
}

#if os(Linux)
/// `curl_easy_setopt` takes its value as a variadic argument; a pointer travels in the same
/// register either way on the ABIs Linux runs on (System V x86-64, AAPCS64), so it is called
/// through this prototype.
typealias CurlSetOption = @convention(c) (UnsafeMutableRawPointer?, Int32, UnsafeMutablePointer<CChar>?) -> Int32
typealias CurlEasyInit = @convention(c) () -> UnsafeMutableRawPointer?

/// The real functions: the next definitions in the lookup order (libcurl's). RTLD_NEXT is -1.
private let realInit: CurlEasyInit? = dlsym(UnsafeMutableRawPointer(bitPattern: -1), "curl_easy_init")
    .map { unsafeBitCast($0, to: CurlEasyInit.self) }
private let realSetOption: CurlSetOption? = dlsym(UnsafeMutableRawPointer(bitPattern: -1), "curl_easy_setopt")
    .map { unsafeBitCast($0, to: CurlSetOption.self) }

@_cdecl("curl_easy_init")
public func curlEasyInit() -> UnsafeMutableRawPointer? {
    guard let handle = realInit?() else { return nil }
    if let file = CurlTrust.trustedFile, let set = realSetOption {
        _ = set(handle, CurlTrust.caInfo, file)
        _ = set(handle, CurlTrust.caPath, nil)
    }
    return handle
}
#endif
