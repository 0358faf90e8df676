import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Why a request could not be carried, as ck reads it from `X-CK-Transport-Error`.
struct TransportFailure {
    enum Kind: String {
        case dns, connect, tls, certificate, timeout, other
    }
    let kind: Kind
    /// Short, and never the URL's query or a header's value: they carry a session token.
    let message: String

    /// Sorts a URLSession error. On Linux URLSession reports most of libcurl's failures as
    /// NSURLErrorUnknown with libcurl's own text, so that text decides what its code cannot.
    init(_ error: Error, host: String, secrets: [String]) {
        let ns = error as NSError
        let detail = Self.scrub(ns.localizedDescription, secrets)
        let kind: Kind
        switch ns.code {
        case NSURLErrorCannotFindHost, NSURLErrorDNSLookupFailed:
            kind = .dns
        case NSURLErrorCannotConnectToHost, NSURLErrorNetworkConnectionLost, NSURLErrorNotConnectedToInternet:
            kind = .connect
        case NSURLErrorTimedOut:
            kind = .timeout
        case NSURLErrorServerCertificateUntrusted, NSURLErrorServerCertificateHasBadDate,
             NSURLErrorServerCertificateHasUnknownRoot, NSURLErrorServerCertificateNotYetValid:
            kind = .certificate
        case NSURLErrorSecureConnectionFailed, NSURLErrorClientCertificateRejected, NSURLErrorClientCertificateRequired:
            kind = .tls
        default:
            kind = Self.kind(ofCurlText: detail)
        }
        self.kind = kind
        let what: String
        switch kind {
        case .dns: what = "could not resolve \(host)"
        case .connect: what = "could not connect to \(host)"
        case .tls: what = "TLS with \(host) failed"
        case .certificate: what = "the certificate of \(host) was refused"
        case .timeout: what = "\(host) did not answer in time"
        case .other: what = "the request to \(host) failed"
        }
        message = detail.isEmpty ? what : "\(what): \(detail)"
    }

    /// libcurl's error text (its error buffer) sorted into a kind.
    static func kind(ofCurlText text: String) -> Kind {
        let t = text.lowercased()
        if t.contains("ssl certificate problem") || t.contains("certificate subject name") || t.contains("no alternative certificate subject name")
            || t.contains("certificate verify") || t.contains("cafile") || t.contains("peer's certificate") { return .certificate }
        if t.contains("could not resolve") || t.contains("couldn't resolve") { return .dns }
        if t.contains("timed out") || t.contains("timeout") { return .timeout }
        if t.contains("ssl") || t.contains("tls") || t.contains("handshake") { return .tls }
        if t.contains("failed to connect") || t.contains("couldn't connect") || t.contains("connection refused") { return .connect }
        return .other
    }

    /// Takes out every secret (the query, header values) that a library's text might quote.
    static func scrub(_ text: String, _ secrets: [String]) -> String {
        var out = text
        for secret in secrets.sorted(by: { $0.count > $1.count }) where secret.count >= 4 {
            out = out.replacingOccurrences(of: secret, with: "…")
        }
        // One line, and short.
        out = out.replacingOccurrences(of: "\n", with: " ").replacingOccurrences(of: "\r", with: " ")
        return out.count > 300 ? String(out.prefix(300)) + "…" : out
    }
}
