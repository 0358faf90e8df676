import Foundation
import Glibc
import XCTest
@testable import CKHTTP

/// A handler for the engine's tests: echoes the request as JSON (with the context `admit` gave it), sleeps on
/// `/sleep?ms=N`, answers N bytes on `/big?n=N`, answers `/refuse` from `admit`, takes at most 8 body bytes on
/// `/small`, streams the body to a sink on `/stream`, and records the log.
final class EngineTestHandler: HTTPHandler, @unchecked Sendable {
    private let lock = NSLock()
    private var _logged: [(head: HTTPRequestHead?, status: Int)] = []
    var logged: [(head: HTTPRequestHead?, status: Int)] { lock.withLock { _logged } }

    /// The log once it has `count` lines (it is written after the last byte is sent, so just
    /// after the client has read the answer), or as it is after two seconds.
    func logged(count: Int) -> [(head: HTTPRequestHead?, status: Int)] {
        let deadline = Date(timeIntervalSinceNow: 2)
        while logged.count < count && Date() < deadline { usleep(2_000) }
        return logged
    }

    func admit(_ head: HTTPRequestHead) -> HTTPAdmission {
        switch head.path {
        case "/refuse": return .answer(json(403, ["refused": head.target]))
        case "/small": return .readBody(maxBytes: 8)
        case "/stream": return .streamBody(maxBytes: 1 << 20, sink: CollectedBody(), context: "streamed " + head.target)
        default: return .readBody(maxBytes: 1 << 20, context: "admitted " + head.target)
        }
    }

    func respond(to request: HTTPRequest) -> HTTPResponse {
        if request.head.path == "/big", let n = request.head.query.flatMap({ Int($0.dropFirst(2)) }) {
            return HTTPResponse(status: 200, body: [UInt8](repeating: 0x62, count: n))
        }
        if request.head.path == "/sleep", let ms = request.head.query.flatMap({ Int($0.dropFirst(3)) }) {
            usleep(useconds_t(ms * 1000))
        }
        let body = (request.bodySink as? CollectedBody)?.bytes ?? request.body
        return json(200, [
            "method": request.head.method, "target": request.head.target, "version": request.head.version,
            "headers": request.head.headers.map { [$0.name, $0.value] },
            "body": String(decoding: body, as: UTF8.self), "remote": request.remoteAddress,
            "context": request.context.map { $0 as? String ?? "\($0)" } ?? NSNull(),
        ])
    }

    func refusal(status: Int, reason: String) -> HTTPResponse {
        var response = json(status, ["status": status, "reason": reason])
        response.headers.add("X-Refusal", "engine")
        return response
    }

    func log(_ head: HTTPRequestHead?, status: Int, milliseconds: Double, note: String?) {
        lock.withLock { _logged.append((head, status)) }
    }

    private func json(_ status: Int, _ object: [String: Any]) -> HTTPResponse {
        let body = try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        return HTTPResponse(status: status, headers: HTTPHeaders([("Content-Type", "application/json")]), body: Array(body))
    }
}

/// A body streamed to a sink (`/stream`), kept for the echo.
final class CollectedBody: HTTPBodySink, @unchecked Sendable {
    private(set) var bytes: [UInt8] = []
    func write(_ piece: UnsafeRawBufferPointer) -> Bool {
        bytes += piece
        return true
    }
    func abandon() { bytes = [] }
}

extension XCTestCase {
    /// A server on a free port with short timeouts, stopped when the test ends.
    func startEngineServer(_ adjust: (inout HTTPServerConfiguration) -> Void = { _ in }) throws -> (HTTPServer, EngineTestHandler) {
        var configuration = HTTPServerConfiguration(port: 0, headerTimeout: 1, bodyIdleTimeout: 1,
                                                    keepAliveIdleTimeout: 2, writeTimeout: 2, lingerTimeout: 0.5)
        adjust(&configuration)
        let handler = EngineTestHandler()
        let server = HTTPServer(configuration: configuration, handler: handler)
        try server.start()
        addTeardownBlock { server.stop(grace: 0) }
        return (server, handler)
    }

    func secondsSpent(_ body: () throws -> Void) rethrows -> TimeInterval {
        let start = Date()
        try body()
        return Date().timeIntervalSince(start)
    }
}
