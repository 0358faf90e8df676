import CKHTTP
import CKTestSupport
import Foundation
import XCTest

/// ck-remote-https, the helper ck speaks HTTPS through, driven as ck drives it: started by
/// HelperProcessStream, raw HTTP/1.1 requests in absolute form on its stdin, answers read from
/// its stdout. Real TLS on loopback: nginx with a certificate from a CA made in the test, in
/// front of a small echo server.
final class RemoteHTTPSTests: XCTestCase {
    /// The built helper, beside the built ck.
    static var helper: String { Sandbox.binary.deletingLastPathComponent().appendingPathComponent("ck-remote-https").path }

    /// An answer as the helper wrote it.
    struct Answer {
        var status: Int
        var headers: [(name: String, value: String)]
        var body: [UInt8]
        func header(_ name: String) -> String? { headers.first { $0.name.lowercased() == name.lowercased() }?.value }
        var text: String { String(decoding: body, as: UTF8.self) }
        var json: [String: Any] { ((try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any]) ?? [:] }
    }

    // MARK: set-up

    private var front: TLSFront!
    private var backendPort: UInt16 = 0

    override func setUpWithError() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/python3") else {
            throw XCTSkip("/usr/bin/python3 is missing: it runs the HTTPS tests' backend")
        }
        guard FileManager.default.isExecutableFile(atPath: Self.helper) else {
            XCTFail("\(Self.helper) is not built")
            return
        }
        backendPort = try startBackend()
        front = try TLSFront(self, backendPort: backendPort)
    }

    /// A Python echo server: each request's method, path, query, headers and body back as JSON;
    /// /redirect answers 302, /gzip a gzip-encoded body.
    private func startBackend() throws -> UInt16 {
        let script = #"""
        import base64, gzip, json
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
        class Echo(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            def answer(self, status, body, headers):
                self.send_response(status)
                for k, v in headers: self.send_header(k, v)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if self.command != "HEAD": self.wfile.write(body)
            def any(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                path, _, query = self.path.partition("?")
                if path == "/redirect":
                    return self.answer(302, b"moved", [("Location", "/elsewhere")])
                if path == "/gzip":
                    return self.answer(200, gzip.compress(b"squeezed " * 1000), [("Content-Encoding", "gzip"), ("Content-Type", "text/plain")])
                echo = {"method": self.command, "path": path, "query": query,
                        "headers": {k.lower(): v for k, v in self.headers.items()},
                        "body": base64.b64encode(body).decode()}
                self.answer(int(self.headers.get("X-Status") or 200), json.dumps(echo).encode(),
                            [("Content-Type", "application/json"), ("X-Backend", "echo")])
            do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = any
            def log_message(self, *args): pass
        server = ThreadingHTTPServer(("127.0.0.1", 0), Echo)
        print(server.server_address[1], flush=True)
        server.serve_forever()
        """#
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        p.arguments = ["-c", script]
        let out = Pipe()
        p.standardOutput = out
        p.standardInput = FileHandle.nullDevice
        try p.run()
        addTeardownBlock { p.terminate(); p.waitUntilExit() }
        var line = Data()
        while !line.contains(0x0A) {
            let chunk = out.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            line += chunk
        }
        return try XCTUnwrap(UInt16(String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)),
                             "the echo server did not say its port")
    }

    /// A helper trusting the test's CA (CK_CA_FILE), unless `environment` says otherwise.
    private func startHelper(_ environment: [String: String]? = nil) throws -> HelperProcessStream {
        var env = ProcessInfo.processInfo.environment
        env["CK_CA_FILE"] = front.caFile
        env.removeValue(forKey: "SSL_CERT_FILE")
        for (k, v) in environment ?? [:] { if v.isEmpty { env.removeValue(forKey: k) } else { env[k] = v } }
        return try HelperProcessStream(executable: Self.helper, environment: env)
    }

    // MARK: raw HTTP/1.1

    private func request(_ method: String, _ url: String, headers: [(String, String)] = [], body: [UInt8] = []) -> [UInt8] {
        let host = URL(string: url)?.host ?? ""
        var head = "\(method) \(url) HTTP/1.1\r\nHost: \(host)\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if !body.isEmpty || method == "POST" || method == "PUT" { head += "Content-Length: \(body.count)\r\n" }
        return Array((head + "\r\n").utf8) + body
    }

    /// Reads one answer: the head to its empty line, then Content-Length bytes.
    private func readAnswer(_ stream: HelperProcessStream, timeout: Double = 20) throws -> Answer {
        var buffer: [UInt8] = []
        var headEnd: Int?
        while headEnd == nil {
            let chunk = try stream.read(maxCount: 65536, timeout: timeout)
            if chunk.isEmpty { throw HTTPClientError(.closed, "the helper closed stdout: \(String(decoding: buffer, as: UTF8.self))") }
            buffer += chunk
            if let r = buffer.firstRange(of: Array("\r\n\r\n".utf8)) { headEnd = r.upperBound }
        }
        let head = String(decoding: buffer[..<headEnd!], as: UTF8.self)
        var lines = head.components(separatedBy: "\r\n").filter { !$0.isEmpty }
        let statusLine = lines.removeFirst()
        XCTAssertTrue(statusLine.hasPrefix("HTTP/1.1 "), statusLine)
        let status = Int(statusLine.split(separator: " ")[1]) ?? -1
        let headers = lines.map { line -> (name: String, value: String) in
            let colon = line.firstIndex(of: ":")!
            return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        let lengths = headers.filter { $0.name.lowercased() == "content-length" }
        XCTAssertEqual(lengths.count, 1, "exactly one Content-Length: \(head)")
        let length = Int(lengths.first?.value ?? "") ?? 0
        var body = Array(buffer[headEnd!...])
        while body.count < length {
            let chunk = try stream.read(maxCount: length - body.count, timeout: timeout)
            if chunk.isEmpty { throw HTTPClientError(.closed, "the helper closed stdout inside a body") }
            body += chunk
        }
        XCTAssertEqual(body.count, length, "no bytes beyond the body")
        return Answer(status: status, headers: headers, body: body)
    }

    private func exchange(_ stream: HelperProcessStream, _ bytes: [UInt8]) throws -> Answer {
        try stream.write(bytes)
        return try readAnswer(stream)
    }

    // MARK: tests

    func testAPostRoundTripsOverTLS() throws {
        let helper = try startHelper()
        defer { helper.close() }
        // Every byte value, and a CR LF in the middle: the body is bytes, not text.
        let body = Array(0...255).map(UInt8.init) + Array("\r\n{\"zones\":[]}".utf8)
        let a = try exchange(helper, request("POST", front.url("/database/1/iCloud.example/development/private/records/query?ckSession=s3cr3t%2Btoken"),
                                             headers: [("Content-Type", "application/json"), ("X-Apple-CloudKit-Request-KeyID", "key-1")],
                                             body: body))
        XCTAssertEqual(a.status, 200, a.text)
        XCTAssertEqual(a.header("X-Backend"), "echo", "the server's headers come back")
        XCTAssertEqual(a.header("Content-Type"), "application/json")
        for dropped in ["Transfer-Encoding", "Connection", "Keep-Alive", "Content-Encoding"] {
            XCTAssertNil(a.header(dropped), dropped)
        }
        XCTAssertNil(a.header("X-CK-Transport-Error"))
        let echo = a.json
        XCTAssertEqual(echo["method"] as? String, "POST")
        XCTAssertEqual(echo["path"] as? String, "/database/1/iCloud.example/development/private/records/query")
        XCTAssertEqual(echo["query"] as? String, "ckSession=s3cr3t%2Btoken", "the query travels as written")
        XCTAssertEqual((echo["body"] as? String).flatMap { Data(base64Encoded: $0) }.map(Array.init), body)
        let headers = echo["headers"] as? [String: String] ?? [:]
        XCTAssertEqual(headers["x-apple-cloudkit-request-keyid"], "key-1")
        XCTAssertEqual(headers["content-type"], "application/json")
        XCTAssertEqual(headers["host"], "127.0.0.1:\(front.port)")
        XCTAssertNil(headers["cookie"])
    }

    func testTwoRequestsOnOneHelperThenItExitsAtTheEndOfStdin() throws {
        let helper = try startHelper()
        let first = try exchange(helper, request("PUT", front.url("/upload/1"), headers: [("X-Status", "201")], body: Array("asset".utf8)))
        XCTAssertEqual(first.status, 201)
        XCTAssertEqual(first.json["method"] as? String, "PUT")
        let second = try exchange(helper, request("GET", front.url("/download/2")))
        XCTAssertEqual(second.status, 200)
        XCTAssertEqual(second.json["path"] as? String, "/download/2")
        XCTAssertEqual(second.json["body"] as? String, "")
        // Both requests written at once are answered in order.
        try helper.write(request("GET", front.url("/a")) + request("DELETE", front.url("/b")))
        XCTAssertEqual(try readAnswer(helper).json["path"] as? String, "/a")
        XCTAssertEqual(try readAnswer(helper).json["method"] as? String, "DELETE")
        helper.close()
        XCTAssertEqual(helper.exitStatus, 0, "the end of stdin ends the helper quietly")
    }

    func testACertificateFromAnotherCAIsRefused() throws {
        let helper = try startHelper()
        defer { helper.close() }
        let a = try exchange(helper, request("POST", front.url("/records/query?ckSession=s3cr3t-session", port: front.foreignPort),
                                             headers: [("X-Apple-CloudKit-Request-SignatureV1", "sig-value-secret")], body: Array("{}".utf8)))
        XCTAssertEqual(a.status, 502, a.text)
        XCTAssertEqual(a.header("X-CK-Transport-Error"), "certificate", a.text)
        XCTAssertTrue(a.text.contains("127.0.0.1:\(front.foreignPort)"), a.text)
        for secret in ["s3cr3t", "sig-value-secret", "ckSession"] { XCTAssertFalse(a.text.contains(secret), a.text) }
        // The helper goes on: the next request is carried.
        XCTAssertEqual(try exchange(helper, request("GET", front.url("/after"))).status, 200)
    }

    func testACertificateForAnotherNameIsRefused() throws {
        let helper = try startHelper()
        defer { helper.close() }
        let a = try exchange(helper, request("GET", front.url("/x", port: front.misnamedPort)))
        XCTAssertEqual(a.status, 502, a.text)
        XCTAssertEqual(a.header("X-CK-Transport-Error"), "certificate", a.text)
    }

    /// Without a CA file the system's store decides, and it does not know the test's CA.
    func testTheSystemStoreDoesNotTrustTheTestCA() throws {
        let helper = try startHelper(["CK_CA_FILE": ""])
        defer { helper.close() }
        let a = try exchange(helper, request("GET", front.url("/x")))
        XCTAssertEqual(a.status, 502, a.text)
        XCTAssertEqual(a.header("X-CK-Transport-Error"), "certificate", a.text)
    }

    func testSSLCertFileNamesTheCAToo() throws {
        let helper = try startHelper(["CK_CA_FILE": "", "SSL_CERT_FILE": front.caFile])
        defer { helper.close() }
        XCTAssertEqual(try exchange(helper, request("GET", front.url("/x"))).status, 200)
    }

    func testAnUnreadableCAFileIsSaidForEveryRequest() throws {
        let helper = try startHelper(["CK_CA_FILE": "/nonexistent/ca.pem"])
        defer { helper.close() }
        for _ in 0..<2 {
            let a = try exchange(helper, request("GET", front.url("/x")))
            XCTAssertEqual(a.status, 502, a.text)
            XCTAssertEqual(a.header("X-CK-Transport-Error"), "certificate")
            XCTAssertTrue(a.text.contains("CK_CA_FILE names /nonexistent/ca.pem"), a.text)
        }
    }

    func testARefusedConnectionIsConnect() throws {
        let helper = try startHelper()
        defer { helper.close() }
        let a = try exchange(helper, request("GET", "https://127.0.0.1:\(try TLSFront.freePort())/x?ckSession=s3cr3t"))
        XCTAssertEqual(a.status, 502, a.text)
        XCTAssertEqual(a.header("X-CK-Transport-Error"), "connect", a.text)
        XCTAssertFalse(a.text.contains("s3cr3t"), a.text)
    }

    func testAnUnknownHostIsDNS() throws {
        let helper = try startHelper()
        defer { helper.close() }
        let a = try exchange(helper, request("GET", "https://ck-remote-https-test.invalid/x"))
        XCTAssertEqual(a.status, 502, a.text)
        XCTAssertEqual(a.header("X-CK-Transport-Error"), "dns", a.text)
    }

    /// A server that accepts the connection and never answers: the helper's timer ends it.
    func testASilentServerIsTimeout() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        let listening = withUnsafeMutablePointer(to: &addr) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) == 0 && getsockname(fd, $0, &len) == 0 }
        } && listen(fd, 8) == 0
        XCTAssertTrue(listening)
        let helper = try startHelper(["CK_REMOTE_HTTPS_TIMEOUT": "1"])
        defer { helper.close() }
        let start = Date()
        let a = try exchange(helper, request("GET", "https://127.0.0.1:\(UInt16(bigEndian: addr.sin_port))/x"))
        XCTAssertEqual(a.status, 502, a.text)
        XCTAssertEqual(a.header("X-CK-Transport-Error"), "timeout", a.text)
        XCTAssertLessThan(Date().timeIntervalSince(start), 10)
    }

    func testOnlyHTTPSIsCarried() throws {
        let helper = try startHelper()
        defer { helper.close() }
        let a = try exchange(helper, request("GET", "http://127.0.0.1:\(backendPort)/x"))
        XCTAssertEqual(a.status, 400, a.text)
        XCTAssertEqual(a.header("X-CK-Transport-Error"), "other")
        XCTAssertTrue(a.text.contains("only https://"), a.text)
        XCTAssertEqual(try exchange(helper, request("GET", front.url("/after"))).status, 200, "a refusal does not end the helper")
    }

    func testRedirectsComeBackUnfollowedAndBodiesDecoded() throws {
        let helper = try startHelper()
        defer { helper.close() }
        let moved = try exchange(helper, request("GET", front.url("/redirect")))
        XCTAssertEqual(moved.status, 302)
        XCTAssertEqual(moved.header("Location"), "/elsewhere")
        XCTAssertEqual(moved.text, "moved")
        let squeezed = try exchange(helper, request("GET", front.url("/gzip")))
        XCTAssertEqual(squeezed.status, 200)
        XCTAssertEqual(squeezed.text, String(repeating: "squeezed ", count: 1000), "decoded")
        XCTAssertNil(squeezed.header("Content-Encoding"))
        XCTAssertEqual(squeezed.header("Content-Length"), "9000")
    }

    func testAMalformedRequestIsAnswered400AndEndsTheHelper() throws {
        for bad in ["GET /relative/path HTTP/1.1\r\nHost: x\r\n\r\n",
                    "GET \(front.url("/x")) HTTP/1.0\r\n\r\n",
                    "POST \(front.url("/x")) HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n",
                    "POST \(front.url("/x")) HTTP/1.1\r\nContent-Length: ten\r\n\r\n",
                    "GET \(front.url("/x")) HTTP/1.1\r\n folded: header\r\n\r\n"] {
            let helper = try startHelper()
            let a = try exchange(helper, Array(bad.utf8))
            XCTAssertEqual(a.status, 400, bad)
            XCTAssertTrue(a.text.contains("malformed request"), a.text)
            XCTAssertEqual(try helper.read(maxCount: 10, timeout: 10), [], "stdout ends: \(bad)")
            helper.close()
            XCTAssertEqual(helper.exitStatus, 1, bad)
        }
    }

    // MARK: the stream itself

    func testAHelperThatCannotStartIsConnect() {
        XCTAssertThrowsError(try HelperProcessStream(executable: "/nonexistent/ck-remote-https")) { error in
            XCTAssertEqual((error as? HTTPClientError)?.kind, .connect)
            XCTAssertTrue("\(error)".contains("/nonexistent/ck-remote-https"), "\(error)")
        }
    }

    func testLocateLooksBesideTheExecutableUnlessTheVariableSays() throws {
        XCTAssertEqual(HelperProcessStream.locate(variable: "/opt/x/helper", executable: Self.helper), "/opt/x/helper")
        let ck = Sandbox.binary.path
        XCTAssertEqual(HelperProcessStream.locate(variable: nil, executable: ck), Self.helper)
        XCTAssertEqual(HelperProcessStream.locate(variable: "", executable: ck), Self.helper)
        XCTAssertNil(HelperProcessStream.locate(variable: nil, executable: "/nonexistent/dir/ck"))
    }

    /// The helper sees stdin, stdout and stderr and no other descriptor of ck's.
    func testTheHelperInheritsNoOtherDescriptor() throws {
        // A descriptor opened without close-on-exec, as careless code in ck might.
        let leaked = open("/dev/null", O_RDONLY)
        defer { close(leaked) }
        XCTAssertGreaterThan(leaked, 2)
        let stream = try HelperProcessStream(executable: "/bin/sh", arguments: ["-c", "ls /proc/$$/fd; echo end; cat >/dev/null"])
        var out: [UInt8] = []
        while !String(decoding: out, as: UTF8.self).hasSuffix("end\n") {
            let chunk = try stream.read(maxCount: 1000, timeout: 10)
            if chunk.isEmpty { break }
            out += chunk
        }
        stream.close()
        let fds = String(decoding: out, as: UTF8.self).split(separator: "\n").map(String.init).filter { $0 != "end" }
        XCTAssertEqual(fds.sorted(), ["0", "1", "2"], "the shell's own descriptors are 0, 1, 2: \(fds)")
        XCTAssertEqual(stream.exitStatus, 0)
    }

    /// A helper that ignores the end of its stdin is killed after the grace.
    func testCloseKillsAHelperThatDoesNotExit() throws {
        let stream = try HelperProcessStream(executable: "/bin/sh", arguments: ["-c", "trap '' TERM; exec sleep 60"])
        let start = Date()
        stream.close()
        let took = Date().timeIntervalSince(start)
        XCTAssertGreaterThanOrEqual(took, HelperProcessStream.closeGrace - 0.1)
        XCTAssertLessThan(took, HelperProcessStream.closeGrace + 3)
        XCTAssertEqual(stream.exitStatus, 128 + SIGKILL)
        XCTAssertThrowsError(try stream.write([1])) { XCTAssertEqual(($0 as? HTTPClientError)?.kind, .closed) }
    }
}
