import CKCore
import CKHTTP
import CKModel

/// Opens a session with a remote: its credentials (the file's, under the environment's), and a
/// connection — plain TCP for `http://` (a ck serve), the `ck-remote-https` helper for
/// `https://` (ck stays one static executable; the helper carries TLS: Docs/remote.md "HTTPS").
public enum RemoteConnection {
    public static func open(_ remote: RemoteEntry, env: [String: String], pacing: PacingPolicy,
                            notice: @escaping (String) -> Void) throws -> WebServicesClient {
        let store = try CredentialStore.standard(env: env)
        let stored = try store.credentials(for: remote.url)
        let credentials = stored.overridden(by: env)
        // A token the environment gave is not the file's to replace: its rotations stay in memory.
        let keeper = env["CLOUDKIT_WEB_AUTH_TOKEN"].map { $0.isEmpty } ?? true ? store : nil
        return WebServicesClient(remote: remote, credentials: credentials, store: keeper, http: try httpClient(remote.url, env: env),
                                 pacing: pacing, notice: notice)
    }

    /// Plain HTTP/1.1 over TCP.
    static func plainClient(host: String, port: Int) -> HTTPClient {
        let shown = host.contains(":") ? "[\(host)]" : host
        return HTTPClient(connect: { try TCPStream.connect(host: host, port: port, timeout: 10) }, host: port == 80 ? shown : "\(shown):\(port)")
    }

    /// An HTTP client for the remote's origin.
    public static func httpClient(_ url: RemoteURL, env: [String: String]) throws -> HTTPClient {
        let hostHeader = url.origin.split(separator: "/").last.map(String.init) ?? url.host
        if url.scheme == "http" { return plainClient(host: url.host, port: url.port) }
        let named = env[HelperProcessStream.pathVariable].flatMap { $0.isEmpty ? nil : $0 }
        guard let helper = named ?? HelperProcessStream.locate() else {
            throw CloudKitError(.networkFailure, "https needs \(HelperProcessStream.helperName) beside ck (make builds it, make install installs it), or its path in \(HelperProcessStream.pathVariable)")
        }
        // The helper sees the command's environment: CK_CA_FILE, SSL_CERT_FILE.
        return HTTPClient(connect: { try HelperProcessStream(executable: helper, environment: env) }, host: hostHeader)
    }
}
