import CKCore
import CKHTTP

/// An upload's body as the engine streams it (`POST /upload/<token>`): each piece appended to
/// the API's `AssetUpload`, which writes it to disk and hashes it, so the server holds none of
/// it. A piece it refuses (past 50 MB, a full disk) stops the body; the answer says why.
final class UploadSink: HTTPBodySink, @unchecked Sendable {
    let upload: AssetUpload
    private var failure: Error?

    init(_ upload: AssetUpload) { self.upload = upload }

    func write(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard failure == nil else { return false }
        do { try upload.append(bytes) } catch {
            failure = error
            return false
        }
        return true
    }

    func abandon() { upload.abandon() }

    /// The whole body: the upload's answer, or why it failed (the upload then dropped).
    func finish() throws -> DocumentBody {
        if let failure {
            upload.abandon()
            throw failure
        }
        return try upload.finish()
    }
}
