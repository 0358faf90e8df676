import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// ck-remote-https: ck (one static executable, with no TLS of its own) writes HTTP/1.1
/// requests in absolute form on this helper's stdin, one at a time; the helper performs each
/// with URLSession over HTTPS and writes the answer on stdout as HTTP/1.1 with a Content-Length.
/// A request it cannot carry is answered 502 with `X-CK-Transport-Error: <kind>`; bytes that
/// are not a request are answered 400 and end the helper (exit 1). It ends with 0 at the end of
/// stdin.
struct RemoteHTTPSHelper {
    let input: Int32
    let output: Int32
    let environment: [String: String]

    /// The variables that name the only CA file to trust instead of the system's store, the
    /// first set winning: ck's own, then OpenSSL's. Elsewhere than Linux URLSession does not
    /// run on OpenSSL, whose variable is then left to the programs that use it.
    #if os(Linux)
    static let trustVariables = ["CK_CA_FILE", "SSL_CERT_FILE"]
    #else
    static let trustVariables = ["CK_CA_FILE"]
    #endif
    /// Seconds a request may take in all (URLSession's timer covers the whole transfer).
    static let timeoutVariable = "CK_REMOTE_HTTPS_TIMEOUT"
    static let defaultTimeout: TimeInterval = 300

    func run() -> Int32 {
        if CommandLine.arguments.count > 1 {
            let usage = "usage: ck-remote-https  (ck starts it: HTTP/1.1 requests in absolute form on stdin, answers on stdout)\n"
            let asksHelp = ["-h", "--help"].contains(CommandLine.arguments[1])
            FileHandle.standardError.write(Data(usage.utf8))
            return asksHelp ? 0 : 2
        }
        let trustProblem = configureTrust()
        let timeout = environment[Self.timeoutVariable].flatMap(TimeInterval.init).flatMap { $0 > 0 ? $0 : nil } ?? Self.defaultTimeout
        let sessions = RemoteSessions(timeout: timeout)
        var reader = RequestReader(fd: input)
        while true {
            let request: ForwardedRequest
            do {
                guard let next = try reader.next() else { return 0 }
                request = next
            } catch let e as MalformedRequest {
                _ = writeAll(output, RelayedResponse.text(400, "ck-remote-https: malformed request: \(e.reason)", transportError: .other).encoded())
                FileHandle.standardError.write(Data("ck-remote-https: malformed request: \(e.reason)\n".utf8))
                return 1
            } catch {
                return 1
            }
            let answer = trustProblem ?? carry(request, sessions)
            guard writeAll(output, answer.encoded()) else { return 0 }
        }
    }

    /// Points libcurl at the CA file named by the environment, if any. A file that cannot be
    /// read is an answer to every request (the certificate cannot be checked), never a silent
    /// fall back to the system's store.
    private func configureTrust() -> RelayedResponse? {
        guard let (variable, path) = Self.trustVariables.lazy.compactMap({ v in self.environment[v].flatMap { $0.isEmpty ? nil : (v, $0) } }).first
        else { return nil }
        guard FileManager.default.isReadableFile(atPath: path) else {
            return .text(502, "ck-remote-https: \(variable) names \(path), which cannot be read", transportError: .certificate)
        }
        guard CurlTrust.trustOnly(path) else {
            return .text(502, "ck-remote-https: \(variable) is not supported on this platform: the system's trust store is used", transportError: .certificate)
        }
        return nil
    }

    /// One request over HTTPS, its answer or why there is none.
    func carry(_ request: ForwardedRequest, _ sessions: RemoteSessions) -> RelayedResponse {
        guard let url = URL(string: request.target), let scheme = url.scheme?.lowercased(), let host = url.host, !host.isEmpty else {
            return .text(400, "ck-remote-https: the request target is not a URL", transportError: .other)
        }
        guard scheme == "https" else {
            return .text(400, "ck-remote-https: only https:// URLs are carried, not \(scheme)://", transportError: .other)
        }
        var urlRequest = URLRequest(url: url)
        urlRequest.httpMethod = request.method
        for (name, value) in request.headers where !Self.notForwarded.contains(name.lowercased()) {
            urlRequest.addValue(value, forHTTPHeaderField: name)
        }
        if !request.body.isEmpty { urlRequest.httpBody = Data(request.body) }
        let authority = url.port.map { "\(host):\($0)" } ?? host
        switch sessions.perform(urlRequest) {
        case .answered(let response, let body):
            var headers: [(name: String, value: String)] = []
            // The server's own X-CK-Transport-Error would pass for the helper's: never relayed.
            for (name, value) in response.allHeaderFields where "\(name)".lowercased() != "x-ck-transport-error" {
                headers.append(("\(name)", "\(value)"))
            }
            headers.sort { $0.name.lowercased() < $1.name.lowercased() }
            return RelayedResponse(status: response.statusCode, headers: headers, body: body)
        case .failed(let error):
            var secrets = [request.target] + request.headers.map(\.value)
            if let query = url.query { secrets += [query, query.removingPercentEncoding ?? query] }
            let failure = TransportFailure(error, host: authority, secrets: secrets)
            return .text(502, "ck-remote-https: \(failure.message)", transportError: failure.kind)
        }
    }

    /// URLSession writes these itself (from the URL and the body), or they describe ck's side
    /// of the pipe, not the request. Accept-Encoding too: URLSession asks for what it decodes.
    static let notForwarded: Set<String> = ["host", "content-length", "connection", "keep-alive", "transfer-encoding",
                                            "te", "upgrade", "proxy-connection", "expect", "accept-encoding"]
}
