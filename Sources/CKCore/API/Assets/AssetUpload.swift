import CKCrypto
import CKModel
import CKStore
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One upload arriving at an upload URL (`POST /upload/<token>`), written to a file of the
/// upload area as it comes and hashed as it goes, so memory stays bounded whatever its size (up
/// to CloudKit's 50 MB). `finish` puts the bytes where a record can take them and answers the
/// `singleFile` value; `abandon` (the body did not arrive whole) removes them and frees the URL
/// for another try.
public final class AssetUpload: @unchecked Sendable {
    private let api: CloudKitAPI
    private let area: UploadArea
    private let uploadToken: String
    private let container: String
    private let scope: DatabaseScope
    private let directory: Directory
    private let temporary: String
    private var fd: Int32
    private var hash = SHA256Stream()
    /// Bytes taken so far.
    public private(set) var size: Int64 = 0

    init(api: CloudKitAPI, area: UploadArea, uploadToken: String, container: String, scope: DatabaseScope) throws {
        self.api = api
        self.area = area
        self.uploadToken = uploadToken
        self.container = container
        self.scope = scope
        (directory, temporary, fd) = try area.begin()
    }

    deinit { abandon() }

    /// The next bytes. Past the asset limit: LIMIT_EXCEEDED; a full disk: QUOTA_EXCEEDED. The
    /// upload is then to be abandoned.
    public func append(_ bytes: UnsafeRawBufferPointer) throws {
        guard fd >= 0 else { throw CloudKitError.internalError("the upload was finished or abandoned") }
        size += Int64(bytes.count)
        if size > Limits.assetBytes { throw AssetValue.tooLarge(size, what: "the upload") }
        hash.update(bytes)
        var off = 0
        while off < bytes.count {
            let n = write(fd, bytes.baseAddress! + off, bytes.count - off)
            if n < 0 {
                if errno == EINTR { continue }
                throw FileSystem.failure("cannot write", area.directory + "/" + temporary)
            }
            off += n
        }
    }

    /// The whole upload: kept (synced) until a record takes it, and answered
    /// `{singleFile: {fileChecksum, size, receipt, wrappingKey, referenceChecksum}}`.
    public func finish() throws -> DocumentBody {
        guard fd >= 0 else { throw CloudKitError.internalError("the upload was finished or abandoned") }
        let digest = hash.finish()
        do {
            try area.publish(directory, temporary, fd: fd, hex: Hex.string(digest))
        } catch {
            abandon()
            throw error
        }
        close(fd)
        fd = -1
        return try api.uploadAnswer(checksum: Data(digest).base64EncodedString(), size: size, container: container, scope: scope)
    }

    /// Drops what arrived, and the URL's mark: the client may send the upload again.
    public func abandon() {
        guard fd >= 0 else { return }
        close(fd)
        fd = -1
        directory.discard(temporary)
        area.release(uploadToken)
    }
}
