import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The two URLSessions the helper carries requests with, and the one request in flight.
/// One session is for CloudKit's API host, another for every other host (asset uploads and
/// downloads): Apple's upload hosts answer 421 Misdirected Request to a request that arrives on
/// an HTTP/2 connection coalesced with the API host's.
final class RemoteSessions: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    private var api: URLSession!
    private var other: URLSession!
    // The request in flight (one at a time), filled by the delegate's queue.
    private let lock = NSLock()
    private var response: HTTPURLResponse?
    private var body: [UInt8] = []
    private var failure: Error?
    private let done = DispatchSemaphore(value: 0)

    init(timeout: TimeInterval) {
        super.init()
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        api = URLSession(configuration: Self.configuration(timeout), delegate: self, delegateQueue: queue)
        other = URLSession(configuration: Self.configuration(timeout), delegate: self, delegateQueue: queue)
    }

    /// No cookies, no cache, no credentials stored: ck keeps every state itself.
    static func configuration(_ timeout: TimeInterval) -> URLSessionConfiguration {
        let c = URLSessionConfiguration.ephemeral
        c.urlCache = nil
        c.requestCachePolicy = .reloadIgnoringLocalCacheData
        c.httpCookieStorage = nil
        c.httpShouldSetCookies = false
        c.httpCookieAcceptPolicy = .never
        c.urlCredentialStorage = nil
        c.timeoutIntervalForRequest = timeout
        c.timeoutIntervalForResource = timeout
        return c
    }

    /// Whether a host is CloudKit's API host (its own session).
    static func isAPIHost(_ host: String) -> Bool {
        let h = host.lowercased()
        return h == "api.apple-cloudkit.com" || h.hasSuffix(".api.apple-cloudkit.com")
    }

    enum Outcome {
        case answered(HTTPURLResponse, [UInt8])
        case failed(Error)
    }

    /// Performs one request and waits for all of it.
    func perform(_ request: URLRequest) -> Outcome {
        lock.lock()
        response = nil
        body = []
        failure = nil
        lock.unlock()
        let session = Self.isAPIHost(request.url?.host ?? "") ? api! : other!
        session.dataTask(with: request).resume()
        done.wait()
        lock.lock(); defer { lock.unlock() }
        if let failure { return .failed(failure) }
        guard let response else { return .failed(URLError(.badServerResponse)) }
        return .answered(response, body)
    }

    // MARK: URLSessionDataDelegate

    /// Redirects are ck's to follow (or not): the 3xx goes back as it came.
    func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                    newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void) {
        completionHandler(nil)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping (URLSession.ResponseDisposition) -> Void) {
        lock.lock()
        self.response = response as? HTTPURLResponse
        lock.unlock()
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        lock.lock()
        body.append(contentsOf: data)
        lock.unlock()
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?) {
        lock.lock()
        if let error { failure = error }
        // A redirect stopped by the delegate ends without didReceive response on some
        // platforms: the task still holds it.
        if response == nil, error == nil { response = task.response as? HTTPURLResponse }
        lock.unlock()
        done.signal()
    }
}
